import { afterEach, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait.js'
import { approveShutdownRule, bash, type ClaudeSandbox, claudeSandbox, requestsMentioning, tool, waitForRequest } from './claude-harness.js'

interface Task {
  id: string
  subject: string
  status: string
  owner?: string
}

/**
 * The tool names a Claude Code request offers: its `tools` (loaded, or deferred with
 * `defer_loading`) and the deferred tools it announces ("The following deferred tools are now
 * available via ToolSearch…", one name a line).
 */
function offeredTools(body: unknown): string[] {
  const b = body as { tools?: Array<{ name: string }>; messages?: Array<{ content?: unknown }> }
  const texts = (b.messages ?? []).flatMap((m) =>
    typeof m.content === 'string' ? [m.content] : Array.isArray(m.content) ? m.content.map((c: { text?: string }) => c.text ?? '') : [],
  )
  const announced = texts.flatMap((t) => {
    const m = /deferred tools are now available[^\n]*\n((?:[A-Za-z]\w*\n)+)/.exec(t)
    return m ? m[1]!.trim().split('\n') : []
  })
  return [...(b.tools ?? []).map((t) => t.name), ...announced]
}

/** Requests Claude Code made (not the leader console's agent). */
function claudeRequests(sb: ClaudeSandbox) {
  return sb.loopback.requests.filter((r) => String((r.headers as Record<string, string> | undefined)?.['user-agent'] ?? '').startsWith('claude-cli/'))
}

async function tasks(sb: ClaudeSandbox, team: string): Promise<Task[]> {
  const r = await sb.swarm(['tasks', team, 'list', '--json'])
  if (r.code !== 0) throw new Error(`swarm tasks list: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

/**
 * Task tools on Claude Code's default model (claude-opus-5-5 in 2.1.332, no --model): with swarm's
 * CLAUDE_CODE_ENABLE_TODO_TOOLS=1 they are there as deferred tools, which a model loads with
 * ToolSearch (`select:…`) and then calls; with CLAUDE_CODE_ENABLE_TASKS=0 they are gone and its
 * first prompt says to use `swarm tasks` from its shell, which it does.
 */
describe('a default-model Claude Code teammate and the shared task list', () => {
  let sb: ClaudeSandbox | undefined
  afterEach(async () => {
    await sb?.close()
    sb = undefined
  })

  it('with its task tools: ToolSearch loads TaskList/TaskUpdate, it claims and completes the task', async () => {
    const TEAM = 'shelf'
    sb = await claudeSandbox({
      rules: [
        { when: { lastUserIncludes: 'PROBE-TASKS' }, times: 1, ...tool('ToolSearch', { query: 'select:TaskList,TaskUpdate', max_results: 5 }) },
        // ToolSearch's result is tool_reference blocks; Claude Code adds the text "Tool loaded." beside them.
        { when: { lastUserIncludes: 'Tool loaded.' }, times: 1, ...tool('TaskList', {}) },
        {
          when: { toolResultMatches: '#(\\d+)\\D[^\\n]*sort the shelf' },
          times: 1,
          ...tool('TaskUpdate', { taskId: '{{match.1}}', owner: 'cc', status: 'completed' }),
        },
        approveShutdownRule('cc'),
      ],
      fallback: { text: 'ok.' },
    })
    expect((await sb.swarm(['team', 'create', TEAM, '--no-start', '--cwd', sb.project])).code).toBe(0)
    expect((await sb.swarm(['tasks', TEAM, 'add', 'sort the shelf'])).code).toBe(0)
    const r = await sb.swarm(['spawn', TEAM, 'cc', '--agent', 'claude', '--backend', 'tmux', '--prompt', 'PROBE-TASKS take a task from the list'], {
      timeout: 60_000,
    })
    expect(r.code, r.stderr).toBe(0)
    const s = sb
    const done = await waitFor('the task completed by cc', async () => (await tasks(s, TEAM)).find((t) => t.status === 'completed'), 60_000)
    expect(done).toMatchObject({ subject: 'sort the shelf', owner: 'cc' })
    const mine = claudeRequests(sb)
    expect(mine[0]?.body).toMatchObject({ model: 'claude-opus-5-5' })
    expect(mine.some((q) => offeredTools(q.body).includes('TaskUpdate'))).toBe(true)
    expect(mine.some((q) => offeredTools(q.body).includes('TaskCreate'))).toBe(true)
    // Its prompt came as it was: nothing about `swarm tasks`.
    expect(JSON.stringify(requestsMentioning(sb.loopback, 'PROBE-TASKS'))).not.toContain('tools are off')
  })

  it('without them (CLAUDE_CODE_ENABLE_TASKS=0): no task tool offered, its first prompt names swarm tasks, it completes the task from its shell', async () => {
    const TEAM = 'rack'
    sb = await claudeSandbox({
      rules: [
        {
          when: { lastUserMatches: 'tools are off[\\s\\S]*PROBE-TASKS' },
          ...bash(`swarm tasks ${TEAM} claim 1 --as cc && swarm tasks ${TEAM} complete 1 --from cc`, 'complete task 1'),
        },
        approveShutdownRule('cc'),
      ],
      fallback: { text: 'ok.' },
    })
    sb.env.CLAUDE_CODE_ENABLE_TASKS = '0'
    expect((await sb.swarm(['team', 'create', TEAM, '--no-start', '--cwd', sb.project])).code).toBe(0)
    expect((await sb.swarm(['tasks', TEAM, 'add', 'sort the rack'])).code).toBe(0)
    const r = await sb.swarm(['spawn', TEAM, 'cc', '--agent', 'claude', '--backend', 'tmux', '--prompt', 'PROBE-TASKS take a task from the list'], {
      timeout: 60_000,
    })
    expect(r.code, r.stderr).toBe(0)
    const s = sb
    const req = await waitForRequest(s, TEAM, 'cc', () => s.swarm(['send', TEAM, 'cc', 'PROBE-TASKS again (tools are off)']))
    expect(req.toolName).toBe('Bash')
    expect((await sb.swarm(['perms', 'approve', TEAM, req.id])).code).toBe(0)
    const done = await waitFor('the task completed by cc', async () => (await tasks(s, TEAM)).find((t) => t.status === 'completed'), 60_000)
    expect(done).toMatchObject({ subject: 'sort the rack', owner: 'cc' })
    const mine = claudeRequests(sb)
    expect(mine.length).toBeGreaterThan(0)
    // Its deferred list is announced (with TodoWrite in place of the task tools), and names none of them.
    expect(mine.some((q) => offeredTools(q.body).includes('TodoWrite'))).toBe(true)
    for (const q of mine) expect(offeredTools(q.body).filter((t) => /^Task(List|Get|Update|Create)$/.test(t))).toEqual([])
    expect(JSON.stringify(requestsMentioning(sb.loopback, 'PROBE-TASKS')[0])).toContain(`swarm tasks ${TEAM} complete <id> --from cc`)
  })
})
