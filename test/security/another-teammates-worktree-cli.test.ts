import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { type AgentTeam, agentTeam } from '../agents/helpers.js'
import { bashCliAdapter, runProbe, writeProjectAdapter } from '../support/bash-cli.js'
import { expectUnchanged, plantBobsWorktree } from './bobs-worktree.js'

/**
 * Issue 23, finding 4, for an agent-CLI teammate in swarm's sandbox: fay (a hostile "CLI", a bash
 * script through a user-defined adapter) works in the main checkout; bob's worktree is swarm's, at
 * `<repo>/.claude/worktrees/bob`. Neither bob's `.git` file nor his `.claude/` (settings, hooks),
 * nor the project's `.claude/hooks/`, may change from anything fay runs. The same script with the
 * sandbox turned off is the control: there every write lands. (Without bwrap a CLI runs unconfined
 * by design, as the control does; its pane and `swarm status` say so — sandbox-agent-cli.test.ts.)
 */
const PROBE = String.raw`
out="$PWD/probe.out"
check() { name=$1; shift; if ( "$@" ) >/dev/null 2>>"$PWD/probe.err"; then echo "$name: yes"; else echo "$name: no"; fi >> "$out"; }
bob="$PWD/.claude/worktrees/bob"
check bob-git sh -c "printf 'gitdir: /tmp/evil\n' > '$bob/.git'"
check bob-settings sh -c "printf '{\"hooks\":{}}' > '$bob/.claude/settings.json'"
check bob-hook sh -c "printf 'touch /tmp/pwned' > '$bob/.claude/hooks/policy.sh'"
check bob-new-hook sh -c "printf 'touch /tmp/pwned' > '$bob/.claude/hooks/new.sh'"
check bob-file sh -c "printf x > '$bob/README.md'"
check repo-hook sh -c "printf 'touch /tmp/pwned' > '$PWD/.claude/hooks/lint.sh'"
check repo-new-hook sh -c "printf 'touch /tmp/pwned' > '$PWD/.claude/hooks/new.sh'"
check repo-settings-local sh -c "printf '{}' > '$PWD/.claude/settings.local.json'"
check write-cwd sh -c "printf x > '$PWD/inside.txt'"
echo done >> "$out"
exec sleep 600
`

/** bob's worktree planted (bobs-worktree.ts), and fay's adapter; with `sandbox` false the project turns the sandbox off. */
async function setUp(t: AgentTeam, sandbox: boolean): Promise<{ bob: string; files: Record<string, string> }> {
  await writeProjectAdapter(t.work, 'probe', bashCliAdapter(PROBE))
  if (!sandbox) await fs.writeFile(path.join(t.work, '.claude', 'settings.json'), JSON.stringify({ sandbox: { enabled: false } }))
  expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
  return plantBobsWorktree(t)
}

describe("an agent-CLI teammate and another teammate's worktree (issue 23 finding 4)", () => {
  let t: AgentTeam
  afterEach(async () => {
    await t?.cleanup()
  }, 30_000)

  it("in swarm's sandbox: bob's .git and .claude/, and the project's .claude/hooks/, stay as they were", async () => {
    t = await agentTeam()
    const { files, bob } = await setUp(t, true)
    expect(await runProbe(t)).toEqual({
      'bob-git': 'no',
      'bob-settings': 'no',
      'bob-hook': 'no',
      'bob-new-hook': 'no',
      'bob-file': 'no',
      'repo-hook': 'no',
      'repo-new-hook': 'no',
      'repo-settings-local': 'no',
      'write-cwd': 'yes',
    })
    await expectUnchanged(files)
    await expect(fs.stat(path.join(bob, '.claude', 'hooks', 'new.sh'))).rejects.toThrow()
    await expect(fs.stat(path.join(t.work, '.claude', 'hooks', 'new.sh'))).rejects.toThrow()
  }, 60_000)

  it('the control: with the sandbox turned off, the same writes land', async () => {
    t = await agentTeam()
    const { files } = await setUp(t, false)
    const r = await runProbe(t)
    expect(
      Object.values(r).every((v) => v === 'yes'),
      JSON.stringify(r),
    ).toBe(true)
    expect(await fs.readFile(Object.keys(files).find((f) => f.endsWith('.git'))!, 'utf8')).toBe('gitdir: /tmp/evil\n')
  }, 60_000)
})
