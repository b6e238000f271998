import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { readMemberState } from '../../../src/store/member-state.js'
import { readInbox } from '../../../src/mailbox/inbox.js'
import { encodeStructured, parseStructured } from '../../../src/mailbox/messages.js'
import type { LoopbackServer } from '../../../src/loopback-model/loopback-server.js'
import type { ScenarioInput } from '../../../src/loopback-model/scenario.js'
import { answerRequest, listRequests } from '../../../src/permissions/requests/broker.js'
import { planFilePath } from '../../../src/home/paths.js'
import { readPending } from '../../../src/asks/store.js'
import { sendTeamMessage } from '../../../src/teams/messaging.js'
import { inboxPath } from '../../../src/home/paths.js'
import { TEAM, nudge, startInProcess, toolResult, waitForPending, type Fixture, type InProcessAgent, makeFixture } from './bubbling-helpers.js'
import { useAgentTeam } from '../../support/agent-team.js'
import { waitFor } from '../../support/wait.js'

let loopback: LoopbackServer
let fx: Fixture
let agent: InProcessAgent | undefined
useAgentTeam({ team: makeFixture, onReady: (t) => ({ loopback, fx } = t) })

const PLAN = '# Plan\n\n1. Add src/feature.ts\n2. Run the tests\n'

/** alice in plan mode: tries to write code (refused), writes her plan file, then asks to leave plan mode. */
function planScenario(planFile: string): ScenarioInput {
  return {
    agents: {
      alice: [
        { content: [{ type: 'tool_use', id: 'toolu_code', name: 'Write', input: { file_path: 'src/feature.ts', content: 'x' } }] },
        { content: [{ type: 'tool_use', id: 'toolu_draft', name: 'Write', input: { file_path: planFile, content: 'draft' } }] },
        { content: [{ type: 'tool_use', id: 'toolu_exit', name: 'ExitPlanMode', input: { plan: PLAN } }] },
        { text: 'Done planning.' },
      ],
    },
  }
}

async function mode(): Promise<string | undefined> {
  return (await readMemberState(TEAM, 'alice', fx.env))?.mode
}
const exitResult = () => toolResult(loopback, 'toolu_exit')

describe('plan mode', () => {
  it('only reads and writes the plan file; ExitPlanMode asks team-lead, approval restores the mode', async () => {
    const planFile = planFilePath(TEAM, 'alice', fx.env)
    loopback.setScenario(planScenario(planFile))
    agent = await startInProcess(fx, { mode: 'plan' })
    await nudge(fx, 'plan the feature')
    const pending = await waitForPending(fx, agent.pane)
    expect(pending).toMatchObject({ kind: 'plan', toolName: 'ExitPlanMode', agent: 'alice', planFilePath: planFile })

    expect(toolResult(loopback, 'toolu_code')).toMatchObject({ isError: true, content: expect.stringContaining('plan mode') })
    expect(toolResult(loopback, 'toolu_code')!.content).toContain(planFile)
    expect(toolResult(loopback, 'toolu_draft')).toMatchObject({ isError: false })
    await expect(fs.stat(path.join(fx.cwd, 'src/feature.ts'))).rejects.toThrow()
    expect(await fs.readFile(planFile, 'utf8')).toBe(PLAN)

    const request = (await readInbox(inboxPath(TEAM, 'team-lead', fx.env)))
      .map((m) => parseStructured(m.text))
      .find((m) => m?.type === 'plan_approval_request')
    expect(request).toMatchObject({ from: 'alice', planFilePath: planFile, planContent: PLAN, requestId: pending.id })
    const listed = await listRequests(TEAM, { env: fx.env })
    expect(listed.requests).toEqual([expect.objectContaining({ id: pending.id, kind: 'plan', summary: '# Plan', planFilePath: planFile })])
    expect(await readMemberState(TEAM, 'alice', fx.env)).toMatchObject({ status: 'waiting', mode: 'plan' })

    await answerRequest(TEAM, pending.id, { kind: 'approve' }, { env: fx.env })
    const result = await waitFor('the ExitPlanMode result', exitResult, 10_000, { output: agent.pane })
    expect(result).toMatchObject({ isError: false, content: expect.stringContaining('approved your plan') })
    expect(await mode()).toBe('default')
  })

  it('approval may name the mode to switch to', async () => {
    loopback.setScenario(planScenario(planFilePath(TEAM, 'alice', fx.env)))
    agent = await startInProcess(fx, { mode: 'plan' })
    await nudge(fx, 'plan the feature')
    const pending = await waitForPending(fx, agent.pane)
    await answerRequest(TEAM, pending.id, { kind: 'approve', permissionMode: 'acceptEdits' }, { env: fx.env })
    await waitFor('the mode to change', async () => (await mode()) === 'acceptEdits', 10_000, { output: agent.pane })
    expect((await waitFor('the ExitPlanMode result', exitResult)).content).toContain('acceptEdits')
  })

  it('rejection keeps plan mode and hands the feedback to the model; a permission_response does not count', async () => {
    loopback.setScenario(planScenario(planFilePath(TEAM, 'alice', fx.env)))
    agent = await startInProcess(fx, { mode: 'plan' })
    await nudge(fx, 'plan the feature')
    const pending = await waitForPending(fx, agent.pane)

    // Signed by the lead, but the wrong kind of answer for a plan.
    const wrongKind = { type: 'permission_response' as const, request_id: pending.id, subtype: 'success' as const, response: {} }
    await sendTeamMessage({ team: TEAM, to: 'alice', text: encodeStructured(wrongKind), env: fx.env })
    await waitFor('the wrong answer to be ignored', () => agent!.pane().includes(`ignored permission_response for "${pending.id}"`), 15_000, {
      output: agent.pane,
    })
    expect(await readPending(TEAM, pending.id, fx.env)).toBeDefined()

    await answerRequest(TEAM, pending.id, { kind: 'deny', feedback: 'split step 1 into two files' }, { env: fx.env })
    const result = await waitFor('the ExitPlanMode result', exitResult, 10_000, { output: agent.pane })
    expect(result.isError).toBe(true)
    expect(result.content).toContain('split step 1 into two files')
    expect(result.content).toContain('still in plan mode')
    expect(await mode()).toBe('plan')
  })

  it('ExitPlanMode outside plan mode is refused', async () => {
    loopback.setScenario({
      agents: { alice: [{ content: [{ type: 'tool_use', id: 'toolu_exit', name: 'ExitPlanMode', input: { plan: PLAN } }] }, { text: 'ok' }] },
    })
    // Started in plan, then set to default by the lead: the tool set follows the mode, so the
    // next turn no longer offers ExitPlanMode and a call to it is refused.
    agent = await startInProcess(fx, { mode: 'plan' })
    await sendTeamMessage({
      team: TEAM,
      to: 'alice',
      text: encodeStructured({ type: 'mode_set_request', mode: 'default', from: 'team-lead' }),
      env: fx.env,
    })
    await waitFor('the mode change', async () => (await mode()) === 'default')
    await nudge(fx)
    const result = await waitFor('the ExitPlanMode result', exitResult, 10_000, { output: agent.pane })
    expect(result).toMatchObject({ isError: true, content: expect.stringContaining('No such tool: ExitPlanMode') })
    expect((await listRequests(TEAM, { env: fx.env })).requests).toEqual([])
  })
})
