import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { shortRequestId } from '../../src/home/request-id.js'
import { claudePlanDigest } from '../../src/mailbox/answer-binding.js'
import { waitFor } from '../support/wait.js'
import {
  approveShutdownRule,
  bash,
  type ClaudeSandbox,
  claudeProcessOf,
  claudeSandbox,
  leaderPane,
  paneText,
  pendingRequests,
  requestsMentioning,
  tool,
  typeInto,
  waitForRequest,
} from './claude-harness.js'

const PLAN_A = '# Plan A\n\n1. write planned.txt'
const PLAN_B = '# Plan B\n\n1. write planned.txt\n2. test it'

/**
 * A Claude Code planner as a model would drive it: ExitPlanMode reads the plan from the plan file
 * (its path is in the tool's error until one is written), so it writes the plan there, then calls
 * ExitPlanMode again; `planFile`, once known, lets it rewrite the plan after a rejection.
 */
function scriptedPlanner(planFile?: string) {
  return [
    { when: { lastUserIncludes: 'PROBE-PLAN' }, times: 1, ...tool('ExitPlanMode', {}) },
    {
      when: { toolResultMatches: 'No plan file found at (\\S+\\.md)', toolResultIsError: true },
      times: 1,
      ...tool('Write', { file_path: '{{match.1}}', content: PLAN_A }),
    },
    ...(planFile ? [{ when: { lastUserIncludes: 'add a test step' }, times: 1, ...tool('Write', { file_path: planFile, content: PLAN_B }) }] : []),
    // The Write's result names the plan file; ExitPlanMode's own ("Your plan has been submitted … Plan file: …") must not.
    { when: { toolResultMatches: '^(?!Your plan)[\\s\\S]*plans/[\\w-]+\\.md', toolResultIsError: false }, ...tool('ExitPlanMode', {}) },
    { when: { lastUserIncludes: '[Plan Approved]' }, times: 1, ...bash('echo planned > planned.txt', 'write planned.txt') },
    // Asked again when Claude Code could not mail its request ("mailbox write failed"): see waitForRequest.
    { when: { lastUserIncludes: 'PROBE-RUN' }, ...bash('echo planned > planned.txt', 'write planned.txt') },
    approveShutdownRule('cc'),
  ]
}

/**
 * Plan approval for a plan-mode Claude Code teammate (`--mode plan` → `--plan-mode-required`): its
 * `plan_approval_request` is queued like swarm's own; rejected with feedback from `swarm perms` it
 * stays in plan mode and plans again; approved at the console (a signed response carrying
 * Claude Code's `planDigest`) it leaves plan mode and its next command is asked as usual.
 */
describe('plan approval of a Claude Code teammate', () => {
  let sb: ClaudeSandbox
  const TEAM = 'planners' // not another file's crew: claudeProcessOf looks at every process

  beforeAll(async () => {
    sb = await claudeSandbox({
      agents: { 'team-lead': { rules: [{ when: { lastUserMatches: '.' }, text: 'Noted.' }] } },
      rules: scriptedPlanner(),
      fallback: { text: 'ok.' },
    })
    const r = await sb.swarm(
      ['team', 'create', TEAM, '--agents', 'cc', '--agent', 'cc:claude', '--mode', 'plan', '--backend', 'tmux', '--no-attach', '--cwd', sb.project],
      { timeout: 60_000 },
    )
    expect(r.code, r.stderr).toBe(0)
  })
  afterAll(async () => {
    if (process.env.INTEROP_DEBUG && sb) {
      const pane = leaderPane(sb, TEAM)
      if (pane) process.stderr.write(`--- leader console\n${paneText(sb, pane.id)}\n`)
      fs.writeFileSync(
        '/tmp/cc/plan-debug.json',
        JSON.stringify(
          {
            requests: sb.loopback.requests,
            lead: sb.readJson(sb.teamFile(TEAM, 'inboxes', 'team-lead.json')),
            cc: sb.readJson(sb.teamFile(TEAM, 'inboxes', 'cc.json')),
          },
          null,
          1,
        ),
      )
    }
    await sb?.close()
  })

  let revised = ''
  const planRequest = (plan: string) =>
    waitFor(
      `a plan request (${plan.split('\n')[0]})`,
      async () => (await pendingRequests(sb, TEAM)).find((r) => r.agent === 'cc' && r.toolName === 'ExitPlanMode' && r.input.plan === plan),
      60_000,
    )

  it('starts in plan mode with --plan-mode-required', async () => {
    const cc = await waitFor('its Claude Code process', () => claudeProcessOf(TEAM, 'cc'), 30_000)
    expect(cc.argv[cc.argv.indexOf('--permission-mode') + 1]).toBe('plan')
    expect(cc.argv).toContain('--plan-mode-required')
  })

  it('its plan request is in `swarm perms` under Claude Code’s id; rejected with feedback it stays in plan mode', async () => {
    expect((await sb.swarm(['send', TEAM, 'cc', 'PROBE-PLAN: plan the change'])).code).toBe(0)
    const req = await planRequest(PLAN_A)
    expect(req.id).toMatch(/^plan_approval-\d+@cc@planners$/)
    const planFile = (req as { planFilePath?: string }).planFilePath
    expect(planFile).toMatch(/\.md$/)
    sb.loopback.setScenario({ rules: scriptedPlanner(planFile), fallback: { text: 'ok.' } })
    const shown = await sb.swarm(['perms', TEAM])
    expect(shown.stdout).toContain('Plan A')
    const r = await sb.swarm(['perms', 'deny', TEAM, req.id, '--feedback', 'add a test step'])
    expect(r.code, r.stderr).toBe(0)
    await waitFor('the feedback reaches the model', () => requestsMentioning(sb.loopback, 'add a test step').length > 0, 30_000)
    // Still in plan mode: its next ExitPlanMode asks again (outside plan mode it could not).
    revised = (await planRequest(PLAN_B)).id
    expect(fs.existsSync(path.join(sb.project, 'planned.txt'))).toBe(false)
  })

  it('approved at the leader console: the response carries the plan digest, it leaves plan mode and its next command is asked', async () => {
    const console = await waitFor('the leader console', () => leaderPane(sb, TEAM), 30_000)
    const prompt = `[${shortRequestId(revised)}] cc wants its plan approved`
    await waitFor('the plan prompt at the console', () => paneText(sb, console.id).includes(prompt), 30_000)
    // A prompt that just replaced another takes no key at once (the console's settle time): read it first.
    await new Promise((r) => setTimeout(r, 1_500))
    typeInto(sb, console.id, 'y')
    await waitFor('the console says approved', () => /approved \S+: cc/.test(paneText(sb, console.id)), 30_000)
    // Out of plan mode: its Bash is asked (plan mode would refuse it unasked).
    const bashReq = await waitForRequest(sb, TEAM, 'cc', () => sb.swarm(['send', TEAM, 'cc', 'PROBE-RUN the approved plan']))
    expect(bashReq.input.command).toBe('echo planned > planned.txt')
    expect((await sb.swarm(['perms', 'approve', TEAM, bashReq.id])).code).toBe(0)
    await waitFor('planned.txt', () => fs.existsSync(path.join(sb.project, 'planned.txt')), 30_000)
    const answers = await sb.swarm(['inbox', TEAM, 'cc', '--json'])
    const approval = (JSON.parse(answers.stdout) as Array<{ text: string }>)
      .map((m) => m.text)
      .find((t) => t.includes('"plan_approval_response"') && t.includes('"approved":true'))
    expect(JSON.parse(approval!)).toMatchObject({ requestId: revised, planDigest: claudePlanDigest(PLAN_B) })
  })
})
