import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { builtInAdapter, loadAdapterFile, projectConfigDirsOf } from '../../src/adapters/registry.js'
import { AdapterSpec } from '../../src/adapters/adapter-spec.js'
import type { AdapterContext } from '../../src/adapters/types.js'
import { REPO } from '../support/repo.js'

/**
 * Gemini CLI is a built-in written as a spec (src/adapters/builtin/gemini.yaml), in the form of a
 * user's adapter file and read by the same loader: it writes what its TypeScript descriptor wrote
 * (compared byte for byte before that was deleted), and the file a user could copy loads as theirs.
 */
const run = promisify(execFile)
const gemini = builtInAdapter('gemini')!
let dir: string

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-builtin-spec-'))
})
afterEach(() => fs.rm(dir, { recursive: true, force: true }))

function context(o: { mode?: string; model?: string; resume?: boolean } = {}): AdapterContext {
  return {
    team: 't',
    name: 'gem',
    agentId: 'gem@t',
    cwd: dir,
    configDir: path.join(dir, 'home'),
    firstPrompt: 'hello "you" $HOME\nline two',
    ...(o.model !== undefined && { model: o.model }),
    ...(o.mode !== undefined && { mode: o.mode }),
    resume: o.resume ?? false,
    hookArgv: (e) => ['/node', '/bin/swarm', 'hook', e],
    hookCommand: (e) => `/node /bin/swarm hook ${e} --team 't x'`,
    mcpArgv: ['/node', '/bin/swarm', 'mcp', '--team', 't'],
    env: { SWARM_HOME: '/state/root' },
  }
}

async function settingsOf(ctx: AdapterContext): Promise<{ hooks: Record<string, { matcher?: string; hooks: unknown[] }[]>; mcpServers: unknown }> {
  return JSON.parse(await fs.readFile(path.join(ctx.configDir, '.gemini', 'settings.json'), 'utf8'))
}

describe('a built-in written as a spec (Gemini CLI)', () => {
  it('is a built-in from its file, with the capabilities its descriptor had', () => {
    expect(gemini).toMatchObject({
      kind: 'gemini',
      source: 'built-in',
      file: path.join(REPO, 'src/adapters/builtin/gemini.yaml'),
      binary: 'gemini',
      delivery: { method: 'paste', settleMs: 600, submitKeys: ['Enter'], confirm: 'hook' },
      states: { hooks: true },
      requiredEnv: { anyOf: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'], without: 'warn' },
      fileTools: { write_file: 'Write', replace: 'Edit' },
      shellTools: ['run_shell_command'],
      configEnv: { GEMINI_CLI_HOME: '.' },
      quit: { keys: ['C-c', 'C-c'], signal: 'SIGTERM', graceMs: 3000 },
    })
    expect(projectConfigDirsOf().find((d) => d.dir === '.gemini')?.protect).toEqual(['settings.json', 'extensions', 'policies', 'commands'])
  })

  it('starts with its first prompt, a model only when given, and resumes its latest session', async () => {
    const first = await gemini.prepare(context())
    expect(first.argv).toEqual(['gemini', '--approval-mode', 'yolo', '--prompt-interactive', 'hello "you" $HOME\nline two'])
    expect(first.env).toEqual({ GEMINI_CLI_HOME: path.join(dir, 'home'), GEMINI_CLI_NO_RELAUNCH: 'true' })
    expect(first.readOnly).toEqual([path.join(dir, 'home', '.gemini', 'settings.json')])
    expect((await gemini.prepare(context({ model: 'gemini-2.5-pro', resume: true }))).argv).toEqual([
      'gemini',
      '--approval-mode',
      'yolo',
      '--model',
      'gemini-2.5-pro',
      '--resume',
      'latest',
    ])
  })

  it('asks the lead before shell commands unless bypassPermissions, and always puts file writes through the rules', async () => {
    const gated = async (mode?: string) => {
      const ctx = context(mode === undefined ? {} : { mode })
      await gemini.prepare(ctx)
      return (await settingsOf(ctx)).hooks.BeforeTool.map((g) => g.matcher)
    }
    expect(await gated()).toEqual([undefined, '^(run_shell_command|write_file|replace)$'])
    expect(await gated('acceptEdits')).toEqual([undefined, '^(run_shell_command|write_file|replace)$'])
    expect(await gated('bypassPermissions')).toEqual([undefined, '^(write_file|replace)$'])
  })

  it('registers every hook with a day of timeout, and swarm mcp with the state root', async () => {
    const ctx = context()
    await gemini.prepare(ctx)
    const settings = await settingsOf(ctx)
    expect(Object.keys(settings.hooks)).toEqual([
      'SessionStart',
      'BeforeAgent',
      'AfterTool',
      'AfterAgent',
      'Notification',
      'SessionEnd',
      'BeforeTool',
    ])
    expect(settings.hooks.AfterAgent).toEqual([
      { hooks: [{ type: 'command', name: 'swarm-stop', command: "/node /bin/swarm hook stop --team 't x'", timeout: 86_400_000 }] },
    ])
    expect(settings.mcpServers).toEqual({
      swarm: { command: '/node', args: ['/bin/swarm', 'mcp', '--team', 't'], env: { SWARM_HOME: '/state/root' }, trust: true },
    })
  })

  it('reads its turn-end answer, takes a prompt only from a submission, and answers in its own form', () => {
    expect(gemini.readHook('stop', { prompt: 'p', prompt_response: 'done', session_id: 's' })).toEqual({ sessionId: 's', lastAssistantText: 'done' })
    expect(gemini.readHook('prompt-submit', { prompt: 'p', session_id: 's' })).toEqual({ sessionId: 's', prompt: 'p' })
    expect(gemini.answerPermission('permission-request', { behavior: 'allow' }, {})).toEqual({ stdout: '{"decision":"allow"}\n', exitCode: 0 })
    expect(gemini.answerPermission('permission-request', { behavior: 'deny', message: 'denied by the team lead' }, {})).toEqual({
      stdout: '{"decision":"deny","reason":"denied by the team lead"}\n',
      exitCode: 0,
    })
    expect(gemini.answerPermission('permission-request', { behavior: 'deny', message: 'not "that"' }, {}).stdout).toBe(
      '{"decision":"deny","reason":"not \\"that\\""}\n',
    )
  })

  it('is a file a user could copy: under another kind it loads as theirs', async () => {
    const copy = path.join(dir, 'my-gemini.yaml')
    await fs.copyFile(path.join(REPO, 'src/adapters/builtin/gemini.yaml'), copy)
    const mine = await loadAdapterFile(copy, 'user')
    expect(mine).toMatchObject({ kind: 'my-gemini', source: 'user', binary: 'gemini', hookEvents: gemini.hookEvents })
    expect(mine.sha256).toMatch(/^[0-9a-f]{64}$/)
  })

  it('ships in the build as the YAML and its JSON, which the bundled CLI reads', async () => {
    const built = path.join(REPO, 'dist/adapters/builtin')
    const json = JSON.parse(await fs.readFile(path.join(built, 'gemini.json'), 'utf8'))
    expect(AdapterSpec.safeParse(json).success).toBe(true)
    expect(await fs.readFile(path.join(built, 'gemini.yaml'), 'utf8')).toBe(
      await fs.readFile(path.join(REPO, 'src/adapters/builtin/gemini.yaml'), 'utf8'),
    )
    const { stdout } = await run(process.execPath, [path.join(REPO, 'bin/swarm.js'), 'spawn', '--help'], { env: { ...process.env, NO_COLOR: '1' } })
    expect(stdout.replace(/\s+/g, ' ')).toMatch(/swarm, claude, codex, gemini, opencode, pi, qwen/)
  })
})
