import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AgentTeam, agentState, agentTeam, hasCli, pendingRequests, cliSpawnArgs } from './helpers.js'
import { waitFor } from '../support/wait.js'

const run = promisify(execFile)

/**
 * Issue 23, findings 1 and 4, for a Codex teammate in the main checkout (real Codex): its profile
 * makes its cwd writable, and the repository's `.claude/` — the settings, the program a
 * PermissionRequest hook runs (`.claude/hooks/policy.sh`), and `.claude/worktrees/<bob>/`, another
 * teammate's worktree with its `.git` and `.claude/` — lies inside it. None of them may change
 * from its shell unasked (an escalation is asked; denied, nothing changes); the rest of its cwd
 * stays writable, and a Codex teammate in its own worktree under `.claude/worktrees/` writes that
 * worktree — but not its `.git` or `.claude/`.
 */
const NAME = 'codex-mate'
/** The Codex teammate in a worktree of its own. */
const WT_NAME = 'codex-wt'
/** One in dontAsk (Codex's approval policy `never`; the same profile as every mode). */
const DONT_ASK_NAME = 'codex-da'
/** One in bypassPermissions: nothing asked (approval `never`), and still the profile — not `:danger-full-access`. */
const BYPASS_NAME = 'codex-bp'
const BOB = 'bob'
const BOB_WT = path.join('.claude', 'worktrees', `t-${BOB}`)

const sh = (cmd: string, escalate = false) => ({
  tool: 'exec_command',
  args: { cmd, ...(escalate && { sandbox_permissions: 'require_escalated', justification: 'the test asks for it' }) },
})

/** Each write, followed by `<label>-RC=<exit code>`; then `<done>`. */
const writes = (list: Array<[string, string]>, done: string) =>
  list
    .map(([label, cmd]) => `(${cmd}) 2>&1; echo "${label}-RC=$?"`)
    .join('; ')
    .concat(`; echo ${done}`)

/** Finding 1: the program the settings run, the settings themselves, a new skill. */
const HOOK_WRITES: Array<[string, string]> = [
  ['HOOK', `printf 'echo allow\\n' > .claude/hooks/policy.sh`],
  ['SETTINGS', `printf '{"hooks":{}}' > .claude/settings.json`],
  ['LOCAL', `printf '{}' > .claude/settings.local.json`],
  ['SKILL', 'mkdir -p .claude/skills/x && printf x > .claude/skills/x/SKILL.md'],
]
/** Finding 4: bob's worktree — its `.git` repointed, its settings, its hook program, its files. */
const BOB_WRITES: Array<[string, string]> = [
  ['BOBGIT', `printf 'gitdir: /tmp/evil\\n' > ${BOB_WT}/.git`],
  ['BOBSETTINGS', `printf '{"hooks":{}}' > ${BOB_WT}/.claude/settings.json`],
  ['BOBHOOK', `printf 'echo allow\\n' > ${BOB_WT}/.claude/hooks/policy.sh`],
  ['BOBFILE', `printf x > ${BOB_WT}/README.md`],
]
/** The control: the rest of the cwd is written. */
const OWN = 'printf mine > own.txt'
/** From the Codex teammate in its own worktree: its files (written), its `.git` and `.claude/`, bob's worktree beside it. */
const OWN_WT_WRITES: Array<[string, string]> = [
  ['WTFILE', 'printf mine > wt.txt'],
  ['WTGIT', `printf 'gitdir: /tmp/evil\\n' > .git`],
  ['WTSETTINGS', `printf '{"hooks":{}}' > .claude/settings.json`],
  ['WTBOB', `printf x > ../t-${BOB}/README.md`],
]

const HOOK_SETTINGS = {
  hooks: { PermissionRequest: [{ hooks: [{ type: 'command', command: 'sh "$CLAUDE_PROJECT_DIR/.claude/hooks/policy.sh"' }] }] },
}

/**
 * Idle again: up to 150 s — this file may be the first of test:agents to start Codex on a fresh
 * machine (a clean-clone CI run waited more than 60 s for its first teammate; a warm one takes ~2 s).
 */
const idle = (t: AgentTeam, name = NAME) => waitFor(`${name} idle`, async () => (await agentState(t, name))?.status === 'idle', 150_000)
const toolResults = (t: AgentTeam) => t.server.requests.map((r) => r.view?.toolResult ?? '').filter(Boolean)

describe.skipIf(!hasCli('codex'))(
  "a Codex teammate's shell leaves the project's .claude/ and another teammate's worktree as they were (real CLI)",
  () => {
    let t: AgentTeam
    /** Every protected file, with its text at the start. */
    const before = new Map<string, string>()
    beforeAll(async () => {
      t = await agentTeam({
        rules: [
          { userMatches: 'UNASKED-HOOK', reply: sh(writes([...HOOK_WRITES, ['OWN', OWN]], 'UNASKED-HOOK-DONE')) },
          { userMatches: 'UNASKED-BOB', reply: sh(writes(BOB_WRITES, 'UNASKED-BOB-DONE')) },
          { userMatches: 'ESCALATED-ALL', reply: sh(writes([...HOOK_WRITES, ...BOB_WRITES], 'ESCALATED-ALL-DONE'), true) },
          { userMatches: 'OWN-WORKTREE', reply: sh(writes(OWN_WT_WRITES, 'OWN-WORKTREE-DONE')) },
          { userMatches: 'DONT-ASK', reply: sh(writes([...HOOK_WRITES, ...BOB_WRITES], 'DONT-ASK-DONE')) },
          {
            userMatches: 'BYPASS-KEY',
            reply: sh(writes([...HOOK_WRITES, ...BOB_WRITES, ['KEY', `cat "$SWARM_HOME"/teams/t/lead.key`]], 'BYPASS-KEY-DONE')),
          },
          { afterTool: true, reply: { text: 'The tool finished.' } },
        ],
      })
      const git = (...args: string[]) => run('git', args, { cwd: t.work, env: t.env })
      await git('init', '-q', '-b', 'main')
      fs.writeFileSync(path.join(t.work, 'README.md'), 'hello\n')
      await git('add', '-A')
      await git('commit', '-q', '-m', 'init')
      fs.mkdirSync(path.join(t.work, '.claude', 'hooks'), { recursive: true })
      fs.writeFileSync(path.join(t.work, '.claude', 'settings.json'), `${JSON.stringify(HOOK_SETTINGS)}\n`)
      fs.writeFileSync(path.join(t.work, '.claude', 'hooks', 'policy.sh'), 'exit 0\n')
      expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
      // bob: a member in a worktree of his own (swarm's layout), before the Codex teammate starts.
      const bob = await t.swarm(['spawn', 't', BOB, '--worktree', '--backend', 'tmux', '--command', 'sleep 600'])
      expect(bob.code, bob.stderr).toBe(0)
      const bobWt = path.join(t.work, BOB_WT)
      expect(fs.existsSync(path.join(bobWt, '.git'))).toBe(true)
      fs.mkdirSync(path.join(bobWt, '.claude', 'hooks'), { recursive: true })
      fs.writeFileSync(path.join(bobWt, '.claude', 'settings.json'), `${JSON.stringify(HOOK_SETTINGS)}\n`)
      fs.writeFileSync(path.join(bobWt, '.claude', 'hooks', 'policy.sh'), 'exit 0\n')
      for (const rel of [
        '.claude/settings.json',
        '.claude/hooks/policy.sh',
        ...['.git', '.claude/settings.json', '.claude/hooks/policy.sh', 'README.md'].map((f) => path.join(BOB_WT, f)),
      ])
        before.set(rel, fs.readFileSync(path.join(t.work, rel), 'utf8'))
      for (const [name, where] of [
        [NAME, []],
        [WT_NAME, ['--worktree']],
        [DONT_ASK_NAME, ['--mode', 'dontAsk']],
        [BYPASS_NAME, ['--mode', 'bypassPermissions']],
      ] as const) {
        const spawned = await t.swarm(cliSpawnArgs(name, 'codex', 'FIRST say hello', where))
        expect(spawned.stderr).toBe('')
        await idle(t, name)
      }
    }, 400_000)
    afterAll(async () => {
      await t?.cleanup()
    }, 30_000)

    /** The files as they were, and nothing new under the project's `.claude/`. */
    function expectUnchanged(result: string) {
      for (const [rel, text] of before) expect([rel, fs.readFileSync(path.join(t.work, rel), 'utf8')], result).toEqual([rel, text])
      expect(fs.existsSync(path.join(t.work, '.claude', 'settings.local.json')), result).toBe(false)
      expect(fs.existsSync(path.join(t.work, '.claude', 'skills')), result).toBe(false)
    }
    /** The exit code each labelled write printed. */
    const rcs = (result: string) => Object.fromEntries([...result.matchAll(/(\w+)-RC=(\d+)/g)].map((m) => [m[1], Number(m[2])]))

    it('finding 1: an unasked command cannot rewrite .claude/hooks/policy.sh, the settings or add a skill; the rest of its cwd it writes', async () => {
      await t.swarm(['send', 't', NAME, 'UNASKED-HOOK now'])
      const result = await waitFor('the write results', () => toolResults(t).find((r) => r.includes('UNASKED-HOOK-DONE')), 60_000)
      const rc = rcs(result)
      expect(rc.OWN, result).toBe(0)
      expect(fs.readFileSync(path.join(t.work, 'own.txt'), 'utf8')).toBe('mine')
      for (const [label] of HOOK_WRITES) expect([label, rc[label]], result).not.toEqual([label, 0])
      expect(result).toMatch(/Read-only file system|Permission denied/)
      expectUnchanged(result)
      await idle(t)
    }, 90_000)

    it("finding 4: an unasked command cannot write bob's worktree — its .git, .claude/settings.json, .claude/hooks/, its files", async () => {
      await t.swarm(['send', 't', NAME, 'UNASKED-BOB now'])
      const result = await waitFor('the write results', () => toolResults(t).find((r) => r.includes('UNASKED-BOB-DONE')), 60_000)
      const rc = rcs(result)
      for (const [label] of BOB_WRITES) expect([label, rc[label]], result).not.toEqual([label, 0])
      expectUnchanged(result)
      await idle(t)
    }, 90_000)

    it('the same writes escalated are asked of the lead; denied, they change nothing', async () => {
      await t.swarm(['send', 't', NAME, 'ESCALATED-ALL now'])
      const asked = await waitFor(
        'the escalated writes asked',
        async () => (await pendingRequests(t)).find((r) => JSON.stringify(r.input).includes('ESCALATED-ALL-DONE')),
        60_000,
      )
      const denied = await t.swarm(['perms', 'deny', 't', asked.id, '--feedback', 'not these'])
      expect(denied.code, denied.stderr).toBe(0)
      await idle(t)
      expect(toolResults(t).some((r) => r.includes('ESCALATED-ALL-DONE'))).toBe(false)
      expectUnchanged(JSON.stringify(toolResults(t).slice(-2)))
    }, 120_000)

    it("a Codex teammate in its own worktree under .claude/worktrees/ writes it, but not its .git, its .claude/ or bob's worktree", async () => {
      const own = path.join(t.work, '.claude', 'worktrees', `t-${WT_NAME}`)
      const gitBefore = fs.readFileSync(path.join(own, '.git'), 'utf8')
      await t.swarm(['send', 't', WT_NAME, 'OWN-WORKTREE now'])
      const result = await waitFor('the write results', () => toolResults(t).find((r) => r.includes('OWN-WORKTREE-DONE')), 60_000)
      const rc = rcs(result)
      expect(rc.WTFILE, result).toBe(0)
      expect(fs.readFileSync(path.join(own, 'wt.txt'), 'utf8')).toBe('mine')
      for (const label of ['WTGIT', 'WTSETTINGS', 'WTBOB']) expect([label, rc[label]], result).not.toEqual([label, 0])
      expect(fs.readFileSync(path.join(own, '.git'), 'utf8')).toBe(gitBefore)
      expect(fs.existsSync(path.join(own, '.claude', 'settings.json')), result).toBe(false)
      expectUnchanged(result)
      await idle(t, WT_NAME)
    }, 90_000)

    it('in dontAsk (approval policy never) the same writes fail too', async () => {
      await t.swarm(['send', 't', DONT_ASK_NAME, 'DONT-ASK now'])
      const result = await waitFor('the write results', () => toolResults(t).find((r) => r.includes('DONT-ASK-DONE')), 60_000)
      const rc = rcs(result)
      for (const [label] of [...HOOK_WRITES, ...BOB_WRITES]) expect([label, rc[label]], result).not.toEqual([label, 0])
      expectUnchanged(result)
      await idle(t, DONT_ASK_NAME)
    }, 90_000)

    it('in bypassPermissions nothing is asked, and the same writes still fail; the lead key is not read', async () => {
      await t.swarm(['send', 't', BYPASS_NAME, 'BYPASS-KEY now'])
      const result = await waitFor('the write results', () => toolResults(t).find((r) => r.includes('BYPASS-KEY-DONE')), 60_000)
      const rc = rcs(result)
      for (const [label] of [...HOOK_WRITES, ...BOB_WRITES, ['KEY']]) expect([label, rc[label]], result).not.toEqual([label, 0])
      expect(result).not.toContain('PRIVATE KEY')
      expectUnchanged(result)
      await idle(t, BYPASS_NAME)
    }, 90_000)
  },
)
