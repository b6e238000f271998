import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { runCommand } from '../../src/process/launch.js'
import { createBashSandbox } from '../../src/sandbox/sandbox.js'
import { defaultSandboxConfig } from '../../src/sandbox/sandbox-settings.js'
import { afterTest, useLoopback } from '../support/agent-team.js'
import { isolatedHome } from '../support/home.js'
import { ALL_MODES, type Attack, type HostileFixture, makeHostileFixture, pathWithoutBwrap, runAttacks } from './sandbox-helpers.js'

/**
 * Issue 23, finding 4: alice works in the main checkout; bob's worktree is swarm's, at
 * `<repo>/.claude/worktrees/crew-bob` — its `.git` four levels below alice's cwd, its
 * `.claude/settings.json` five, deeper than any scan. Neither they, bob's `.claude/hooks/`, nor
 * the repository's own `.claude/` may change from alice's tools, in any mode.
 */

let loopback: LoopbackServer
useLoopback((l) => (loopback = l))

interface Targets {
  bobGit: string
  bobSettings: string
  bobHook: string
  repoHook: string
}

async function plant(fx: HostileFixture): Promise<{ targets: Targets; before: Record<string, string> }> {
  const bobClaude = path.join(fx.worktree, '.claude')
  const targets: Targets = {
    bobGit: path.join(fx.worktree, '.git'),
    bobSettings: path.join(bobClaude, 'settings.json'),
    bobHook: path.join(bobClaude, 'hooks', 'policy.sh'),
    repoHook: path.join(fx.repo, '.claude', 'hooks', 'lint.sh'),
  }
  await fs.mkdir(path.dirname(targets.bobHook), { recursive: true })
  await fs.mkdir(path.dirname(targets.repoHook), { recursive: true })
  await fs.writeFile(targets.bobSettings, '{}\n')
  await fs.writeFile(targets.bobHook, 'exit 0\n')
  await fs.writeFile(targets.repoHook, 'exit 0\n')
  const before: Record<string, string> = {}
  for (const f of Object.values(targets)) before[f] = await fs.readFile(f, 'utf8')
  return { targets, before }
}

function attacks(fx: HostileFixture, t: Targets): Attack[] {
  const rel = (p: string) => path.relative(fx.repo, p)
  const bash = (id: string, command: string): Attack => ({ id, tool: 'Bash', input: { command } })
  const write = (id: string, file: string): Attack => ({ id, tool: 'Write', input: { file_path: file, content: `touch ${fx.marker}\n` } })
  return [
    bash('toolu_bash_gitfile', `printf 'gitdir: /tmp/evil\\n' > ${rel(t.bobGit)}`),
    bash('toolu_bash_settings', `printf '{"hooks":{}}' > ${path.dirname(rel(t.bobSettings))}/settings.json`),
    bash('toolu_bash_bobhook', `printf 'touch ${fx.marker}' > ${rel(t.bobHook)}`),
    bash('toolu_bash_repohook', `printf 'touch ${fx.marker}' > ${rel(t.repoHook)}`),
    bash('toolu_bash_skill', `mkdir -p .claude/skills/x && printf x > .claude/skills/x/SKILL.md`),
    // Allowed by rule in every mode but plan: what it writes, no string check sees; only the sandbox (or its absence: asked) stops it.
    bash('toolu_node_gitfile', `node -e "require('fs').writeFileSync('${rel(t.bobGit)}', 'gitdir: /tmp/evil')"`),
    bash('toolu_node_hook', `node -e "require('fs').writeFileSync('${rel(t.bobHook)}', 'touch ${fx.marker}')"`),
    write('toolu_write_bobhook', t.bobHook),
    write('toolu_write_repohook', t.repoHook),
    write('toolu_write_bobskill', path.join(fx.worktree, '.claude', 'skills', 'y', 'SKILL.md')),
  ]
}

for (const variant of ['sandbox on', 'bwrap absent'] as const) {
  describe(`another teammate's worktree and the project's .claude/ (${variant})`, () => {
    for (const mode of ALL_MODES) {
      it(`${mode}: bob's .git, .claude/settings.json and .claude/hooks/, and the repository's .claude/, stay as they were`, async () => {
        const bin = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-nobwrap-')), 'bin')
        afterTest(() => fs.rm(path.dirname(bin), { recursive: true, force: true }))
        const fx = await makeHostileFixture(loopback, { aliceIn: 'main', ...(variant === 'bwrap absent' ? { path: pathWithoutBwrap(bin) } : {}) })
        const { targets, before } = await plant(fx)
        const results = await runAttacks(loopback, fx, mode, attacks(fx, targets), ['Bash(printf:*)', 'Bash(mkdir:*)', 'Bash(node:*)'])
        for (const id of ['toolu_write_bobhook', 'toolu_write_repohook', 'toolu_write_bobskill'])
          expect([id, results.get(id)!.outcome]).not.toEqual([id, 'ran'])
        for (const [f, text] of Object.entries(before)) expect([f, await fs.readFile(f, 'utf8')]).toEqual([f, text])
        await expect(fs.stat(path.join(fx.repo, '.claude', 'skills'))).rejects.toThrow()
        await expect(fs.stat(path.join(fx.worktree, '.claude', 'skills'))).rejects.toThrow()
      }, 120_000)
    }
  })
}

describe('the mount rule: a writable repository, its .claude/ read-only, the own worktree in it writable again', () => {
  it('bwrap: the repo and the own worktree take writes; <repo>/.claude, the own .claude and .git, and another worktree do not', async () => {
    const iso = isolatedHome('swarm-mount-rule-')
    afterTest(iso.cleanup)
    const repo = iso.project
    const wts = path.join(repo, '.claude', 'worktrees')
    const own = path.join(wts, 't-a')
    const other = path.join(wts, 't-b')
    for (const d of [path.join(own, '.claude'), path.join(other, 'src'), path.join(repo, '.claude', 'hooks')]) await fs.mkdir(d, { recursive: true })
    await fs.writeFile(path.join(own, '.git'), 'gitdir: x\n')
    const sandbox = createBashSandbox({
      config: defaultSandboxConfig(),
      env: iso.env,
      label: 'mount-rule',
      hidden: [],
      readOnly: [],
      writableDirs: () => [repo, own],
      protectedRoots: () => [own, other],
    })
    afterTest(() => sandbox.close())
    const tryWrite = async (file: string) => {
      const launch = await sandbox.launch(`printf x > '${file}'`, own)
      const r = await runCommand(launch.file, launch.args, { cwd: own, env: { ...iso.env, ...launch.env }, ...(launch.fd3 && { fd3: launch.fd3 }) })
      return r.code === 0
    }
    expect((await sandbox.statusFor('true')).status).toBe('sandboxed')
    expect(await tryWrite(path.join(repo, 'top.txt'))).toBe(true)
    expect(await tryWrite(path.join(own, 'mine.txt'))).toBe(true)
    expect(await tryWrite(path.join(repo, '.claude', 'hooks', 'x.sh'))).toBe(false)
    expect(await tryWrite(path.join(repo, '.claude', 'settings.local.json'))).toBe(false)
    expect(await tryWrite(path.join(own, '.claude', 'settings.json'))).toBe(false)
    expect(await tryWrite(path.join(own, '.git'))).toBe(false)
    expect(await tryWrite(path.join(other, 'src', 'theirs.txt'))).toBe(false)
  }, 60_000)
})
