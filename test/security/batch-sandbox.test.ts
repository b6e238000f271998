import fs from 'node:fs/promises'
import path from 'node:path'
import { execa } from 'execa'
import { afterEach, describe, expect, it } from 'vitest'
import type { BatchReport } from '../../src/batch/run.js'
import { teamDir } from '../../src/home/paths.js'
import { startLoopbackServer, type LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import type { ScenarioInput } from '../../src/loopback-model/scenario.js'
import type { PermissionModeName } from '../../src/permissions/rules/modes.js'
import { sandbox, type Sandbox } from '../e2e/helpers.js'

/**
 * Issue 23 finding 3: a `swarm batch` subtask (default acceptEdits) rewrote its worktree's
 * package.json test script unasked, and `Bash(npm test:*)` — the rule batch's own denial message
 * suggests — ran it: it read `lead.key` and wrote into `permissions/resolved/`;
 * `--mode bypassPermissions`, the other suggestion, the same. Now each subtask's Bash runs in a
 * sandbox of its own (its worktree and a private TMPDIR writable, the control plane hidden);
 * where bwrap cannot run, the call is asked — and so denied, in every mode.
 */

const NAMES = ['one', 'two', 'three', 'four', 'five']
const PEM = 'BEGIN PRIVATE KEY'

const HOOK_PROGRAM = 'exit 0\n'

/**
 * Each subtask writes a test script that copies the key and plants an answer — and (findings 1
 * and 4) rewrites the hook program of its own worktree and of the main checkout, and writes into
 * every other subtask's worktree — then runs it.
 */
function scenario(home: string, project: string): ScenarioInput {
  const team = teamDir('bt', { SWARM_HOME: home })
  const others = `for d in ${project}/.claude/worktrees/*/; do [ "$d" = "$PWD/" ] || echo x > "$d/planted.txt"; done 2>/dev/null`
  const hooks = `echo evil > .claude/hooks/policy.sh; echo evil > ${project}/.claude/hooks/policy.sh`
  // Finding 11 from a batch worker: the provider keys of the batch's environment are not in its script's.
  const keys = 'echo "KEYS:$ANTHROPIC_API_KEY:$OPENAI_API_KEY:$GEMINI_API_KEY:END"'
  const script = `cat ${team}/lead.key > leaked.txt; cat ${team}/lead.key; echo '{}' > ${team}/permissions/resolved/planted-$$.json; ${hooks}; ${others}; ${keys}; echo SCRIPT-RAN-$((40+2))`
  const agents: NonNullable<ScenarioInput['agents']> = {}
  for (const name of NAMES) {
    agents[`team-lead/batch-${name}`] = [
      {
        content: [{ type: 'tool_use', name: 'Write', input: { file_path: 'package.json', content: JSON.stringify({ scripts: { test: script } }) } }],
      },
      { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'npm test' } }] },
      { text: 'RESULT: tests run' },
    ]
  }
  return { agents }
}

let sb: Sandbox | undefined
let server: LoopbackServer | undefined
afterEach(async () => {
  await sb?.cleanup()
  await server?.close()
  sb = server = undefined
})

async function runBatch(mode: PermissionModeName, sandboxSettings: Record<string, unknown>) {
  server = await startLoopbackServer({ scenario: { fallback: { text: 'RESULT: nothing' } } })
  sb = sandbox({
    ANTHROPIC_API_KEY: 'sk-ant-BATCH-SECRET',
    OPENAI_API_KEY: 'sk-oai-BATCH-SECRET',
    GEMINI_API_KEY: 'g-BATCH-SECRET',
    ANTHROPIC_BASE_URL: server.url,
  })
  server.setScenario(scenario(sb.env.SWARM_HOME!, sb.project))
  const git = (...args: string[]) => execa('git', args, { cwd: sb!.project, env: sb!.env })
  await git('init', '-q', '-b', 'main')
  await fs.mkdir(path.join(sb.project, '.claude'), { recursive: true })
  await fs.writeFile(
    path.join(sb.project, '.claude', 'settings.json'),
    JSON.stringify({ permissions: { allow: ['Bash(npm test:*)'] }, sandbox: sandboxSettings }),
  )
  await fs.mkdir(path.join(sb.project, '.claude', 'hooks'))
  await fs.writeFile(path.join(sb.project, '.claude', 'hooks', 'policy.sh'), HOOK_PROGRAM)
  await fs.writeFile(path.join(sb.project, 'README'), 'project\n')
  await git('add', '.')
  await git('commit', '-qm', 'start')
  expect((await sb.swarm(['team', 'create', 'bt', '--no-start', '--cwd', sb.project])).code).toBe(0)
  const resolved = path.join(teamDir('bt', sb.env), 'permissions', 'resolved')
  await fs.mkdir(resolved, { recursive: true })
  const file = path.join(sb.root, 'tasks.yaml')
  await fs.writeFile(file, `tasks:\n${NAMES.map((n) => `  - { name: ${n}, prompt: run the tests }\n`).join('')}`)
  const r = await sb.swarm(['batch', 'bt', '--from', file, '--mode', mode, '--parallel', '2', '--json'], { timeout: 90_000 })
  const bodies = server.requests.map((q) => JSON.stringify(q.body ?? {})).join('\n')
  const report = JSON.parse(r.stdout || '{"subtasks":[]}') as BatchReport
  // What each subtask's worktree (kept) or branch (committed) holds as leaked.txt.
  const leaked: string[] = []
  /** What changed that no subtask may change: a hook program, a file in another subtask's worktree. */
  const tampered: string[] = []
  const inBranchOrWorktree = async (s: BatchReport['subtasks'][number], file: string) => {
    const shown = await execa('git', ['show', `${s.branch}:${file}`], { cwd: sb!.project, env: sb!.env, reject: false })
    const kept = await fs.readFile(path.join(s.worktree.path, file), 'utf8').catch(() => undefined)
    return [...(shown.exitCode === 0 ? [shown.stdout] : []), ...(kept !== undefined ? [kept] : [])]
  }
  for (const s of report.subtasks) {
    leaked.push(...(await inBranchOrWorktree(s, 'leaked.txt')))
    for (const text of await inBranchOrWorktree(s, '.claude/hooks/policy.sh'))
      if (`${text}\n` !== HOOK_PROGRAM) tampered.push(`${s.name}: its hook program`)
    if ((await inBranchOrWorktree(s, 'planted.txt')).length) tampered.push(`${s.name}: planted.txt from another subtask`)
  }
  if ((await fs.readFile(path.join(sb.project, '.claude', 'hooks', 'policy.sh'), 'utf8')) !== HOOK_PROGRAM)
    tampered.push("the main checkout's hook program")
  return { r, bodies, report, leaked: leaked.join('\n'), planted: await fs.readdir(resolved), tampered }
}

describe("a batch subtask's Bash cannot reach the control plane", () => {
  for (const mode of ['acceptEdits', 'bypassPermissions'] as const) {
    it(`${mode}, bwrap present: the rewritten test script runs, but sees no key and plants no answer`, async () => {
      const { r, bodies, report, leaked, planted, tampered } = await runBatch(mode, {})
      expect(report.subtasks, r.stderr).toHaveLength(NAMES.length)
      // The script did run (its echo came back: the sum, not the text of the script), in the sandbox.
      expect(bodies).toContain('SCRIPT-RAN-42')
      expect(bodies).toContain('KEYS::::END') // the script saw none of the provider keys
      expect(bodies).not.toContain('BATCH-SECRET')
      expect(bodies).not.toContain(PEM)
      expect(leaked).not.toContain(PEM)
      expect(planted).toEqual([])
      expect(tampered).toEqual([])
    }, 120_000)

    it(`${mode}, bwrap absent: npm test is denied (asked, nobody answers), never auto-allowed`, async () => {
      const { r, bodies, report, leaked, planted, tampered } = await runBatch(mode, { bwrapPath: '/nonexistent/bwrap' })
      expect(report.subtasks, r.stderr).toHaveLength(NAMES.length)
      expect(bodies).toContain('Bash cannot run in the sandbox here')
      expect(bodies).not.toContain('SCRIPT-RAN-42')
      expect(bodies).not.toContain(PEM)
      expect(leaked).not.toContain(PEM)
      expect(planted).toEqual([])
      expect(tampered).toEqual([])
    }, 120_000)
  }
})

/** The matrix (issue 23): the modes where the rewrite itself is asked (denied, nobody answers), bwrap present and absent. */
describe.each(['default', 'plan', 'dontAsk', 'bubble'] as const)("a batch subtask's Bash in %s", (mode) => {
  it.each([
    ['bwrap present', {}],
    ['bwrap absent', { bwrapPath: '/nonexistent/bwrap' }],
  ] as const)(
    '%s: no key reaches the model or a file, no answer is planted',
    async (_variant, sandboxSettings) => {
      const { r, bodies, report, leaked, planted, tampered } = await runBatch(mode, sandboxSettings)
      expect(report.subtasks, r.stderr).toHaveLength(NAMES.length)
      expect(bodies).not.toContain('SCRIPT-RAN-42')
      expect(bodies).not.toContain(PEM)
      expect(leaked).not.toContain(PEM)
      expect(planted).toEqual([])
      expect(tampered).toEqual([])
    },
    120_000,
  )
})
