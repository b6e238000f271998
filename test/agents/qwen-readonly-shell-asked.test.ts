import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait.js'
import { type AgentTeam, agentState, agentTeam, hasCli } from './helpers.js'

/**
 * Qwen Code in its `default` approval mode runs a shell command its own classifier calls
 * read-only (`cat`, `ls`, `git log`…) without any prompt, so its PermissionRequest hook never
 * fires and the lead is never asked — a read of `~/.ssh` from a teammate in `default` mode would
 * go unseen. swarm's own teammates and Gemini CLI ask for every shell command in `default`.
 */
const NAME = 'qwen-mate'
const MARK = 'READONLY-SHELL-RAN'

/** Waits for the request naming `mark`, or returns 'ran' if a tool result shows it ran unasked. */
async function askedOrRan(t: AgentTeam, mark: string, ran: (result: string) => boolean) {
  return waitFor(
    'the shell command asked, or run unasked',
    async () => (await pending(t)).find((r) => JSON.stringify(r.input).includes(mark)) ?? (toolResults(t).some(ran) ? ('ran' as const) : undefined),
    60_000,
  )
}
const idle = (t: AgentTeam) => waitFor(`${NAME} idle`, async () => (await agentState(t, NAME))?.status === 'idle', 60_000)

async function pending(t: AgentTeam) {
  const r = await t.swarm(['perms', 't', '--json'])
  return (JSON.parse(r.stdout || '{"requests":[]}') as { requests: Array<{ id: string; input: Record<string, unknown> }> }).requests
}
const toolResults = (t: AgentTeam) => t.server.requests.map((r) => r.view?.toolResult ?? '').filter(Boolean)

describe.skipIf(!hasCli('qwen'))('Qwen Code in default mode: a read-only shell command is still asked of the lead (real CLI)', () => {
  let t: AgentTeam
  beforeAll(async () => {
    t = await agentTeam()
    t.server.setScript({
      rules: [
        { userMatches: 'READ-SHELL', reply: { tool: 'run_shell_command', args: { command: `echo ${MARK}` } } },
        { userMatches: 'APPROVE-SHELL', reply: { tool: 'run_shell_command', args: { command: `echo ${MARK}-APPROVED` } } },
        { userMatches: 'MONITOR', reply: { tool: 'monitor', args: { command: `echo ${MARK}-MONITOR`, description: 'watch' } } },
        { afterTool: true, reply: { text: 'The tool finished.' } },
      ],
    })
    expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
    const spawned = await t.swarm([
      'spawn',
      't',
      NAME,
      '--agent',
      'qwen',
      '--model',
      'loopback',
      '--backend',
      'tmux',
      '--mode',
      'default',
      '--prompt',
      'FIRST say hello',
    ])
    expect(spawned.stderr).toBe('')
    await waitFor(`${NAME} idle`, async () => (await agentState(t, NAME))?.status === 'idle', 60_000)
  }, 120_000)
  afterAll(async () => t?.cleanup(), 30_000)

  it('`echo` is asked (waiting, in swarm perms) and, denied, never runs', async () => {
    await t.swarm(['send', 't', NAME, 'READ-SHELL now'])
    const asked = await waitFor(
      'the shell command asked, or run unasked',
      async () =>
        (await pending(t)).find((r) => JSON.stringify(r.input).includes(MARK)) ?? (toolResults(t).some((x) => x.includes(MARK)) ? 'ran' : undefined),
      60_000,
    )
    expect(asked, JSON.stringify(toolResults(t).slice(-2))).not.toBe('ran')
    if (typeof asked === 'string') return
    expect((await agentState(t, NAME))?.status).toBe('waiting')
    const denied = await t.swarm(['perms', 'deny', 't', asked.id, '--feedback', 'no'])
    expect(denied.code, denied.stderr).toBe(0)
    await waitFor(`${NAME} idle`, async () => (await agentState(t, NAME))?.status === 'idle', 60_000)
    expect(toolResults(t).some((x) => x.includes(MARK))).toBe(false)
  }, 120_000)
  it('an approved one runs once, asked once', async () => {
    await t.swarm(['send', 't', NAME, 'APPROVE-SHELL now'])
    const asked = await askedOrRan(t, `${MARK}-APPROVED`, (x) => x.includes(`Output: ${MARK}-APPROVED`))
    expect(asked).not.toBe('ran')
    if (asked === 'ran') return
    expect((await t.swarm(['perms', 'approve', 't', asked.id])).code).toBe(0)
    await waitFor('it ran', () => toolResults(t).some((x) => x.includes(`Output: ${MARK}-APPROVED`)), 60_000)
    await idle(t)
    expect(await pending(t)).toEqual([])
  }, 120_000)

  it('its `monitor` tool (a background shell command) is asked too', async () => {
    const before = toolResults(t).length
    await t.swarm(['send', 't', NAME, 'MONITOR now'])
    const asked = await askedOrRan(t, `${MARK}-MONITOR`, () => toolResults(t).length > before)
    expect(asked, JSON.stringify(toolResults(t).slice(before))).not.toBe('ran')
    if (asked === 'ran') return
    expect((await t.swarm(['perms', 'deny', 't', asked.id, '--feedback', 'no'])).code).toBe(0)
    await idle(t)
  }, 120_000)
})
