import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { alwaysRulesPath } from '../../src/asks/always.js'
import { listPending, readResolved } from '../../src/asks/store.js'
import { inboxPath } from '../../src/home/paths.js'
import type { LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { readInbox } from '../../src/mailbox/inbox.js'
import { parseStructured } from '../../src/mailbox/messages.js'
import { BIN, requireBuilt } from '../support/repo.js'
import { makeTeam, track, useAgentTeam, type Fixture } from '../support/agent-team.js'
import { waitFor } from '../support/wait.js'
import { nudge, oneCall, startInProcess, toolResult } from '../permissions/requests/bubbling-helpers.js'
import { relayEndpointFile } from '../../src/adapters/relay-frames.js'
import { startRelay } from '../../src/adapters/relay-server.js'
import { agentHomeDir } from '../../src/home/paths.js'

/**
 * The one ask flow, proved for both member kinds side by side: swarm's own agent (alice, in this
 * process, on the loopback model) and an agent CLI's hook (gem, a Gemini CLI member: the real
 * `swarm hook permission-request` process, or the same hook relayed through gem's pane wrapper).
 * Both ask through asks/ask.ts, are listed and answered by the real `swarm perms`, and consult the
 * one always store (asks/always.ts).
 */
const TEAM = 'crew'
let loopback: LoopbackServer
let fx: Fixture
useAgentTeam({
  team: (l) => makeTeam(TEAM, l, [{ name: 'alice' }, { name: 'gem', agent: 'gemini' }], 'swarm-asks-'),
  onReady: (t) => ({ loopback, fx } = t),
})
beforeAll(() => requireBuilt('dist/cli/main.js'))

interface Ran {
  code: number | null
  stdout: string
  stderr: string
}

/** A real process in the fixture's home, its output kept, killed after the test. */
function run(args: string[], stdin = ''): { done: Promise<Ran>; kill(): void; pid: number } {
  const child = spawn(process.execPath, [BIN, ...args], { env: fx.env, cwd: fx.cwd, stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  child.stdin.end(stdin)
  const done = new Promise<Ran>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
  track(
    `swarm ${args.slice(0, 2).join(' ')}`,
    async () => {
      kill()
      return done
    },
    () => stdout + stderr,
  )
  return { done, kill, pid: child.pid ?? 0 }
}

/** gem's CLI asks to run `command` in its shell: the permission hook Gemini CLI runs. */
const gemShell = (command: string) =>
  run(
    ['hook', 'permission-request', '--team', TEAM, '--name', 'gem', '--agent', 'gemini'],
    JSON.stringify({ tool_name: 'run_shell_command', tool_input: { command } }),
  )

const perms = async (...args: string[]) => {
  const r = await run(['perms', ...args]).done
  expect(r.code, r.stderr).toBe(0)
  return r.stdout
}
const pendingOf = async (agent: string) => (await listPending(TEAM, { env: fx.env })).requests.find((r) => r.agent === agent)
const askedByAlice = async () =>
  (await readInbox(inboxPath(TEAM, 'team-lead', fx.env))).filter((m) => m.from === 'alice' && parseStructured(m.text)?.type === 'permission_request')
    .length

/** alice is asked to run one Bash command (tool-use id `id`). */
async function aliceRuns(command: string, id: string): Promise<void> {
  loopback.setScenario(oneCall('Bash', { command, description: 'a command' }, id))
  await nudge(fx)
}

describe('one ask flow for swarm agents and CLI teammates', () => {
  it('both kinds are listed by swarm perms, and swarm perms approve reaches both', async () => {
    const agent = await startInProcess(fx)
    await aliceRuns('touch from-alice.txt', 'toolu_a')
    const fromAlice = await waitFor('alice pending', () => pendingOf('alice'), 15_000, { output: agent.pane })
    const hook = gemShell('touch from-gem.txt')
    const fromGem = await waitFor('gem pending', () => pendingOf('gem'))
    const listed = JSON.parse(await perms(TEAM, '--json')) as { requests: Array<{ id: string; agent: string; toolName: string }> }
    expect(listed.requests.map((r) => [r.agent, r.toolName]).sort()).toEqual([
      ['alice', 'Bash'],
      ['gem', 'run_shell_command'],
    ])
    // The lead's inbox holds one bell per request, in the same format.
    const bells = (await readInbox(inboxPath(TEAM, 'team-lead', fx.env)))
      .map((m) => parseStructured(m.text))
      .filter((m) => m?.type === 'permission_request')
    expect(bells.map((b) => b?.type === 'permission_request' && b.request_id).sort()).toEqual([fromAlice.id, fromGem.id].sort())

    await perms('approve', TEAM, fromGem.id)
    expect(JSON.parse((await hook.done).stdout)).toEqual({ decision: 'allow' })
    await perms('approve', TEAM, fromAlice.id)
    await waitFor('alice ran it', () => fs.existsSync(path.join(fx.cwd, 'from-alice.txt')), 15_000, { output: agent.pane })
    await waitFor('alice told the model', () => toolResult(loopback, 'toolu_a')?.isError === false)
    expect((await listPending(TEAM, { env: fx.env })).requests).toEqual([])
  })

  it("a team-wide always for alice's request is honoured by gem's next ask, and one for gem's by alice's", async () => {
    const agent = await startInProcess(fx)
    await aliceRuns('touch a.txt', 'toolu_1')
    const first = await waitFor('alice pending', () => pendingOf('alice'), 15_000, { output: agent.pane })
    await perms('approve', TEAM, first.id, '--always', '--team-wide')
    await waitFor('a.txt', () => fs.existsSync(path.join(fx.cwd, 'a.txt')), 15_000, { output: agent.pane })
    expect(JSON.parse(fs.readFileSync(alwaysRulesPath({ team: TEAM }, fx.env), 'utf8'))).toMatchObject({
      allow: ['Bash(touch:*)'],
      leadSeal: expect.any(String),
    })
    // gem's shell call the team rule covers: allowed by swarm, nothing pending, nothing asked.
    const covered = await gemShell('touch b.txt').done
    expect(JSON.parse(covered.stdout)).toEqual({ decision: 'allow' })
    expect(await pendingOf('gem')).toBeUndefined()

    // The other way round: gem's mkdir approved team-wide, then alice's mkdir runs unasked.
    const hook = gemShell('mkdir gem-dir')
    const fromGem = await waitFor('gem pending', () => pendingOf('gem'))
    await perms('approve', TEAM, fromGem.id, '--always', '--team-wide')
    expect(JSON.parse((await hook.done).stdout)).toEqual({ decision: 'allow' })
    const asked = await askedByAlice()
    await aliceRuns('mkdir alice-dir', 'toolu_2')
    await waitFor('alice-dir', () => fs.existsSync(path.join(fx.cwd, 'alice-dir')), 15_000, { output: agent.pane })
    expect(await askedByAlice()).toBe(asked)
    expect(await pendingOf('alice')).toBeUndefined()
  })

  it("a member's always is kept in the same store: honoured by its own next ask (a restarted alice too), not by another member", async () => {
    let agent = await startInProcess(fx)
    await aliceRuns('touch one.txt', 'toolu_1')
    const first = await waitFor('alice pending', () => pendingOf('alice'), 15_000, { output: agent.pane })
    await perms('approve', TEAM, first.id, '--always')
    await waitFor('one.txt', () => fs.existsSync(path.join(fx.cwd, 'one.txt')), 15_000, { output: agent.pane })
    await waitFor('the rule kept', () => fs.existsSync(alwaysRulesPath({ team: TEAM, member: 'alice' }, fx.env)))
    expect(JSON.parse(fs.readFileSync(alwaysRulesPath({ team: TEAM, member: 'alice' }, fx.env), 'utf8'))).toMatchObject({
      allow: ['Bash(touch:*)'],
      leadSeal: expect.any(String),
    })
    await agent.stop()
    agent = await startInProcess(fx)
    const asked = await askedByAlice()
    await aliceRuns('touch two.txt', 'toolu_2')
    await waitFor('two.txt', () => fs.existsSync(path.join(fx.cwd, 'two.txt')), 15_000, { output: agent.pane })
    expect(await askedByAlice()).toBe(asked)

    // gem is another member: alice's rule is not its own, so gem's touch is asked; its own always then is.
    const hook = gemShell('touch gem.txt')
    const fromGem = await waitFor('gem pending', () => pendingOf('gem'))
    await perms('approve', TEAM, fromGem.id, '--always')
    expect(JSON.parse((await hook.done).stdout)).toEqual({ decision: 'allow' })
    expect(JSON.parse(fs.readFileSync(alwaysRulesPath({ team: TEAM, member: 'gem' }, fx.env), 'utf8'))).toMatchObject({
      allow: ['Bash(touch:*)'],
      leadSeal: expect.any(String),
    })
    expect(JSON.parse((await gemShell('touch again.txt').done).stdout)).toEqual({ decision: 'allow' })
    expect(await pendingOf('gem')).toBeUndefined()
  })
})

describe('a CLI hook cut off while it asks leaves no request pending', () => {
  it('relayed: the relay connection cut (the relay client killed) withdraws the request, recorded as cancelled', async () => {
    const endpoint = relayEndpointFile(agentHomeDir(TEAM, 'gem', fx.env))
    const relay = await startRelay({ team: TEAM, name: 'gem', agent: 'gemini', endpointFile: endpoint, env: fx.env, cwd: fx.cwd })
    track(
      'gem relay',
      () => relay.close(),
      () => '',
    )
    const client = run(
      ['relay', endpoint, '--', 'hook', 'permission-request', '--team', TEAM, '--name', 'gem', '--agent', 'gemini'],
      JSON.stringify({ tool_name: 'run_shell_command', tool_input: { command: 'touch cut.txt' } }),
    )
    const pending = await waitFor('gem pending', () => pendingOf('gem'))
    // The request names the relay's process (this one, alive): no sweep could ever clear it.
    expect(pending.pid).toBe(process.pid)
    client.kill()
    await client.done
    const resolved = await waitFor('the request withdrawn', () => readResolved(TEAM, pending.id, fx.env))
    expect(resolved).toMatchObject({ decision: 'cancelled', resolvedBy: 'gem' })
    expect((await listPending(TEAM, { env: fx.env })).requests).toEqual([])
  })

  it('direct: a killed hook process is seen gone by the next listing, which cancels its request', async () => {
    const hook = gemShell('touch killed.txt')
    const pending = await waitFor('gem pending', () => pendingOf('gem'))
    expect(pending.pid).toBe(hook.pid)
    hook.kill()
    await hook.done
    const listed = JSON.parse(await perms(TEAM, '--json')) as { requests: unknown[]; cancelled: Array<{ id: string }> }
    expect(listed.requests).toEqual([])
    expect(listed.cancelled.map((c) => c.id)).toEqual([pending.id])
    expect(await readResolved(TEAM, pending.id, fx.env)).toMatchObject({ decision: 'cancelled' })
  })
})
