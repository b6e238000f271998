import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BIN } from '../support/repo.js'

/** `swarm doctor`'s agent-CLI probes: run in a throwaway home, and find each binary where spawn would. */

const run = promisify(execFile)
let dir: string
let userHome: string
let binDir: string

beforeEach(async () => {
  dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-doctor-agents-')))
  userHome = path.join(dir, 'user-home')
  binDir = path.join(dir, 'agent-bin')
  await Promise.all([fs.mkdir(userHome), fs.mkdir(binDir)])
})
afterEach(() => fs.rm(dir, { recursive: true, force: true }))

/** A CLI that, like Gemini CLI, writes state into its home when asked its version, and says where. */
async function fakeCli(file: string, version: string): Promise<void> {
  const script = [
    '#!/bin/sh',
    `echo "$HOME $GEMINI_CLI_HOME $CODEX_HOME $XDG_CONFIG_HOME $QWEN_HOME" >> ${JSON.stringify(path.join(dir, 'seen.log'))}`,
    'G="$GEMINI_CLI_HOME"; [ -n "$G" ] || G="$HOME"',
    'C="$CODEX_HOME"; [ -n "$C" ] || C="$HOME/.codex"',
    'X="$XDG_CONFIG_HOME"; [ -n "$X" ] || X="$HOME/.config"',
    'mkdir -p "$HOME/.gemini" "$G/.gemini" "$C" "$X/cli"',
    'echo x > "$HOME/.gemini/projects.json.$$.tmp"',
    'echo x > "$G/.gemini/projects.json.$$.tmp"',
    'echo x > "$C/state.sqlite"',
    `echo ${JSON.stringify(version)}`,
  ].join('\n')
  await fs.writeFile(file, `${script}\n`, { mode: 0o755 })
}

async function doctor(extra: NodeJS.ProcessEnv): Promise<{ agents: Array<Record<string, string>> }> {
  return (await doctorReport(extra)).agents
}

async function doctorReport(extra: NodeJS.ProcessEnv): Promise<{ agents: { agents: Array<Record<string, string>>; problems: string[] } }> {
  const env = { PATH: '/usr/bin:/bin', HOME: userHome, SWARM_HOME: path.join(dir, 'swarm-home'), NO_COLOR: '1', ...extra }
  const r = await run(process.execPath, [BIN, 'doctor', '--json'], { env, cwd: dir }).catch((e: { stdout: string }) => e)
  return JSON.parse(r.stdout) as { agents: { agents: Array<Record<string, string>>; problems: string[] } }
}

async function tree(root: string): Promise<string[]> {
  return (await fs.readdir(root, { recursive: true })).sort()
}

describe('swarm doctor and agent CLIs', () => {
  it("probes each CLI's version in a temp home that it removes: the user's HOME is left as it was", async () => {
    await fs.writeFile(path.join(userHome, 'keep.txt'), 'mine\n')
    const before = await tree(userHome)
    for (const b of ['gemini', 'codex', 'pi', 'qwen']) await fakeCli(path.join(binDir, b), `${b} 9.9.9`)
    const report = (await doctor({ SWARM_AGENT_BIN_DIR: binDir })).agents
    expect(report.find((a) => a.kind === 'gemini')).toMatchObject({ path: path.join(binDir, 'gemini'), version: 'gemini 9.9.9' })
    expect(report.find((a) => a.kind === 'codex')).toMatchObject({ version: 'codex 9.9.9' })
    expect(report.find((a) => a.kind === 'qwen')).toMatchObject({ version: 'qwen 9.9.9', hooks: 'ok' })
    // Its hooks' entry point answers, directly and through a relay (what a sandboxed CLI's hooks take).
    expect(report.find((a) => a.kind === 'gemini')?.hooks).toBe('ok')
    expect(await tree(userHome)).toEqual(before)
    const seen = (await fs.readFile(path.join(dir, 'seen.log'), 'utf8')).trim().split('\n')
    expect(seen).toHaveLength(4)
    for (const line of seen) {
      const [home, geminiHome, codexHome, xdgConfig, qwenHome] = line.split(' ')
      expect(home).not.toBe(userHome)
      expect(geminiHome).toBe(home)
      expect(codexHome.startsWith(home)).toBe(true)
      expect(xdgConfig.startsWith(home)).toBe(true)
      expect(qwenHome.startsWith(home)).toBe(true)
      await expect(fs.stat(home), `${home} removed`).rejects.toThrow()
    }
  })

  it("reports a user-defined adapter's program (its command's first word), and a file whose binary is another program", async () => {
    const adapters = path.join(dir, '.claude', 'swarm-agents')
    await fs.mkdir(adapters, { recursive: true })
    await fakeCli(path.join(binDir, 'mine-cli'), 'mine 1.2.3')
    await fs.writeFile(path.join(adapters, 'mine.yaml'), 'command: [mine-cli, "{{prompt}}"]\nhookEvents: { Submit: prompt-submit, Done: stop }\n')
    await fs.writeFile(path.join(adapters, 'gone.yaml'), 'binary: gone-cli\ncommand: [gone-cli]\nhookEvents: { Submit: prompt-submit, Done: stop }\n')
    await fs.writeFile(path.join(adapters, 'liar.yaml'), 'binary: mine-cli\ncommand: [gone-cli]\n')
    const report = (await doctorReport({ SWARM_AGENT_BIN_DIR: binDir })).agents
    expect(report.agents.find((a) => a.kind === 'mine')).toMatchObject({
      binary: 'mine-cli',
      path: path.join(binDir, 'mine-cli'),
      version: 'mine 1.2.3',
    })
    expect(report.agents.find((a) => a.kind === 'gone')).toMatchObject({
      binary: 'gone-cli',
      missing: expect.stringContaining('`gone-cli` is not installed'),
    })
    expect(report.agents.find((a) => a.kind === 'liar')).toBeUndefined()
    expect(report.problems).toContainEqual(expect.stringMatching(/liar\.yaml.*binary: "mine-cli" is not the program command runs \("gone-cli"\)/))
  })

  it("points a user-defined adapter's configEnv into the probe home too", async () => {
    const adapters = path.join(dir, '.claude', 'swarm-agents')
    await fs.mkdir(adapters, { recursive: true })
    const seen = path.join(dir, 'mine-home.log')
    await fs.writeFile(path.join(binDir, 'mine-cli'), `#!/bin/sh\necho "$HOME $MINE_HOME" > ${JSON.stringify(seen)}\necho mine 1\n`, { mode: 0o755 })
    await fs.writeFile(
      path.join(adapters, 'mine.yaml'),
      'command: [mine-cli]\nconfigEnv: { MINE_HOME: .mine }\nhookEvents: { Submit: prompt-submit, Done: stop }\n',
    )
    expect((await doctor({ SWARM_AGENT_BIN_DIR: binDir })).agents.find((a) => a.kind === 'mine')).toMatchObject({ version: 'mine 1' })
    const [home, mineHome] = (await fs.readFile(seen, 'utf8')).trim().split(' ')
    expect(home).not.toBe(userHome)
    expect(mineHome).toBe(path.join(home, '.mine'))
  })

  it('finds Claude Code through $SWARM_CLAUDE_BIN, as spawn does, and names a bad one', async () => {
    const claude = path.join(dir, 'elsewhere', 'my-claude')
    await fs.mkdir(path.dirname(claude))
    await fakeCli(claude, '2.1.332 (Claude Code)')
    const found = (await doctor({ SWARM_CLAUDE_BIN: claude })).agents.find((a) => a.kind === 'claude')
    expect(found).toMatchObject({ path: claude, version: '2.1.332 (Claude Code)' })
    const bad = (await doctor({ SWARM_CLAUDE_BIN: path.join(dir, 'nope') })).agents.find((a) => a.kind === 'claude')
    expect(bad?.path).toBeUndefined()
    expect(bad?.missing).toBe(`SWARM_CLAUDE_BIN=${path.join(dir, 'nope')} is not an executable file`)
    expect(await tree(userHome)).toEqual([])
  })
})
