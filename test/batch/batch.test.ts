import fs from 'node:fs/promises'
import path from 'node:path'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatBatchReport } from '../../src/batch/report.js'
import type { BatchReport } from '../../src/batch/run.js'
import { startLoopbackServer, type LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import type { ScenarioInput } from '../../src/loopback-model/scenario.js'
import { sandbox, type Sandbox } from '../e2e/helpers.js'

const NAMES = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'broken']

/** Each subtask writes its file and reports; "broken" writes one and gives up. */
function scenario(): ScenarioInput {
  const agents: NonNullable<ScenarioInput['agents']> = {}
  for (const name of NAMES) {
    const file = `${name}.txt`
    agents[`team-lead/batch-${name}`] = [
      { content: [{ type: 'tool_use', name: 'Write', input: { file_path: file, content: `${name}\n` } }] },
      {
        text: name === 'broken' ? 'I wrote half of it and the tests broke.\nRESULT: FAILED the tests broke' : `Wrote ${file}.\nRESULT: added ${file}`,
      },
    ]
  }
  return { agents }
}

describe('swarm batch', () => {
  let sb: Sandbox
  let server: LoopbackServer
  const git = (cwd: string, ...args: string[]) => execa('git', args, { cwd, env: sb.env }).then((r) => r.stdout)
  beforeAll(async () => {
    server = await startLoopbackServer({ scenario: scenario() })
    // The sandbox's env carries the git identity (test/support/home.ts): swarm's commits and the test's own.
    sb = sandbox({ ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: server.url })
    await git(sb.project, 'init', '-q', '-b', 'main')
    await fs.writeFile(path.join(sb.project, 'README'), 'project\n')
    await git(sb.project, 'add', '.')
    await git(sb.project, 'commit', '-qm', 'start')
    expect((await sb.swarm(['team', 'create', 'bt', '--no-start', '--cwd', sb.project])).code).toBe(0)
  })
  afterAll(async () => {
    await sb?.cleanup()
    await server?.close()
  })

  it('6 subtasks, one failing: 5 branches with a commit each, the failed one’s worktree kept, the report (text and --json)', async () => {
    const file = path.join(sb.root, 'tasks.yaml')
    await fs.writeFile(file, `tasks:\n${NAMES.map((n) => `  - name: ${n}\n    prompt: Create ${n}.txt holding the word ${n}.\n`).join('')}`)
    const r = await sb.swarm(['batch', 'bt', '--from', file, '--parallel', '3', '--json'], { timeout: 60_000 })
    // On failure, show what the batch printed (its subtasks' tool lines are on stderr).
    expect(r.stderr, `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`).toContain('swarm: 1 of 6 subtasks failed')
    expect(r.code).toBe(8)
    const report = JSON.parse(r.stdout) as BatchReport
    expect(report).toMatchObject({ team: 'bt', parallel: 3, succeeded: 5, failed: 1 })
    // Each branch has its commit, holding its file; the worktrees of the successes are gone.
    for (const s of report.subtasks.filter((x) => x.status === 'succeeded')) {
      expect(s.branch).toBe(`swarm/bt/batch-${s.name}`)
      expect(await git(sb.project, 'log', '-1', '--format=%s', s.branch)).toBe(`${s.name}: added ${s.name}.txt`)
      expect(await git(sb.project, 'show', `${s.branch}:${s.name}.txt`)).toBe(s.name)
      expect(await git(sb.project, 'rev-parse', s.branch)).toBe(s.commit)
      expect(s.files).toEqual([`${s.name}.txt`])
      expect(s.tokens).toBeGreaterThan(0)
      expect(s.worktree.kept).toBe(false)
      await expect(fs.stat(s.worktree.path)).rejects.toThrow()
    }
    // The failed one: no commit, its worktree kept with its uncommitted file, and said so.
    const failed = report.subtasks.find((x) => x.status === 'failed')!
    expect(failed).toMatchObject({ name: 'broken', result: 'the tests broke', files: ['broken.txt'], worktree: { kept: true } })
    expect(failed.worktree.reason).toContain('1 uncommitted file (broken.txt)')
    expect(await fs.readFile(path.join(failed.worktree.path, 'broken.txt'), 'utf8')).toBe('broken\n')
    expect(await git(sb.project, 'rev-parse', failed.branch)).toBe(await git(sb.project, 'rev-parse', 'main'))
    const worktrees = (await git(sb.project, 'worktree', 'list', '--porcelain')).split('\n').filter((l) => l.startsWith('worktree '))
    expect(worktrees).toHaveLength(2)
    // swarm worktrees names the kept one.
    const listed = await sb.swarm(['worktrees', 'bt', '--json'])
    expect(listed.stdout).toContain(failed.worktree.path)
    // The main checkout is untouched.
    expect(await git(sb.project, 'status', '--porcelain')).toBe('')

    const text = formatBatchReport(report)
    expect(text.split('\n')[0]).toMatch(/^batch bt: 5 succeeded, 1 failed \(6 subtasks, 3 at a time, [\d.]+ s, [\d,]+ tokens\)$/)
    expect(text).toMatch(/^ok {5}alpha {2}swarm\/bt\/batch-alpha @ [0-9a-f]{10} {2}1 file {2}[\d,]+ tokens {2}added alpha\.txt$/m)
    expect(text).toMatch(/^FAILED broken {2}swarm\/bt\/batch-broken \(worktree kept\) {2}1 file {2}[\d,]+ tokens {2}the tests broke$/m)
    expect(text).toContain(`${failed.worktree.path} (branch swarm/bt/batch-broken): 1 uncommitted file (broken.txt)`)
  }, 90_000)

  it('refuses fewer than 5 subtasks, duplicate names and an unknown team, before anything is made', async () => {
    const few = path.join(sb.root, 'few.yaml')
    await fs.writeFile(few, 'tasks:\n  - { name: a, prompt: x }\n  - { name: b, prompt: y }\n')
    const r = await sb.swarm(['batch', 'bt', '--from', few])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`swarm: ${few} has 2 subtasks; a batch takes 5–30`)
    const dup = path.join(sb.root, 'dup.yaml')
    await fs.writeFile(dup, `tasks:\n${['a', 'b', 'c', 'd', 'a'].map((n) => `  - { name: ${n}, prompt: x }\n`).join('')}`)
    expect((await sb.swarm(['batch', 'bt', '--from', dup])).stderr).toContain('two subtasks are named "a"')
    expect((await sb.swarm(['batch', 'nope', '--from', dup])).code).toBe(3)
  }, 30_000)
})
