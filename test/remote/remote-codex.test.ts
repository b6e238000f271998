import path from 'node:path'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AgentApiServer, startAgentApiServer } from '../../src/loopback-model/agent-api-server.js'
import { type LoopbackServer, startLoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { readInbox } from '../../src/mailbox/inbox.js'
import { agentHomeDir, inboxPath, teamDir } from '../../src/home/paths.js'
import { findMarked } from '../../src/process/marker.js'
import { readMemberState } from '../../src/store/member-state.js'
import { sendTeamMessage } from '../../src/teams/messaging.js'
import { createTeam } from '../../src/teams/team-store.js'
import { ensureTeamKeys } from '../../src/trust/keys.js'
import { agentBinDir, hasCli } from '../agents/helpers.js'
import { type Sandbox, sandbox } from '../e2e/helpers.js'
import { requireBuilt } from '../support/repo.js'
import { hasSshd, sshCallLog, startTestHost, type TestHost } from '../support/sshd.js'
import { waitFor } from '../support/wait.js'

/**
 * A Codex teammate on another machine, next to a swarm teammate there: the real pinned Codex CLI
 * (test/agents/versions.json, installed by scripts/install-agent-clis.mjs into
 * $SWARM_AGENT_CLI_CACHE) on the test host of test/support/sshd.ts — the same machine in a network
 * namespace with its own HOME, the CLI put on the host's PATH — and its model (the Responses API
 * of the loopback agent-API server) on this side's end of the link. What a user would check: it
 * starts there and asks its model, each message from the lead reaches its model once, a command
 * it asks to run is answered here and runs there, status shows both members for one ssh call per
 * host, and `team delete` leaves no process on either side.
 */

const TEAM = 'remote-codex'
const CODEX = 'codex-mate'
const SWARM_MATE = 'alice'
const TAG = 'rc'

let host: TestHost
let sb: Sandbox
let codexModel: AgentApiServer
let claudeModel: LoopbackServer
let sshLog: ReturnType<typeof sshCallLog>
let env: NodeJS.ProcessEnv
/** The Codex member's cwd on the host. */
let hostWork: string

const remoteEnv = () => ({ ...env, SWARM_HOME: host.remoteSwarmHome })
const swarm = (args: string[], extra: NodeJS.ProcessEnv = {}) => sb.swarm(args, { env: { ...env, ...extra }, timeout: 120_000 })
const sshCalls = (what: string[]) => sshLog.calls(what)
/** A member's state as relayed to this side. */
const stateOf = async (name: string) => (await readMemberState(TEAM, name, env))?.status

const skip = !hasSshd ? 'no sshd here' : !hasCli('codex') ? `no Codex CLI in ${agentBinDir()} (npm run test:agents installs it)` : undefined

beforeAll(async () => {
  if (skip) return
  requireBuilt('dist/remote/link.js')
  sb = sandbox()
  host = await startTestHost(sb.root)
  // Codex installed on the host: the cached CLI on its PATH (the same filesystem; node is the system's).
  fs.symlinkSync(path.join(agentBinDir(), 'codex'), path.join(host.remoteBin, 'codex'))
  hostWork = path.join(host.remoteHome, 'work')
  fs.mkdirSync(hostWork)
  codexModel = await startAgentApiServer({
    host: host.localAddress,
    script: {
      rules: [
        // Escalated: leaving Codex's own sandbox is what it asks permission for.
        {
          userMatches: 'RUN-ON-HOST',
          reply: {
            tool: 'exec_command',
            args: { cmd: 'echo ran-on-host >> count.txt', sandbox_permissions: 'require_escalated', justification: 'the test asks for it' },
          },
        },
        { afterTool: true, reply: { text: 'The tool finished.' } },
      ],
    },
  })
  claudeModel = await startLoopbackServer({ scenario: { fallback: { text: 'Noted.' } }, host: host.localAddress })
  // Every ssh swarm runs goes through this shim, which logs its command line: how the test counts calls per poll.
  sshLog = sshCallLog(sb.root)
  env = {
    ...sb.env,
    PATH: `${sshLog.dir}:${sb.env.PATH}`,
    SWARM_SSH_CONFIG: host.sshConfig,
    ANTHROPIC_API_KEY: 'test',
    ANTHROPIC_BASE_URL: claudeModel.url,
    OPENAI_BASE_URL: `${codexModel.url}/v1`,
    OPENAI_API_KEY: 'loopback-key',
  }
  await createTeam({ name: TEAM, cwd: sb.project }, env)
  await ensureTeamKeys(TEAM, env)
}, 60_000)

afterAll(async () => {
  if (skip) return
  await swarm(['team', 'delete', TEAM, '--force']).catch(() => undefined)
  await host?.stop()
  await codexModel?.close()
  await claudeModel?.close()
  await sb?.cleanup()
})

const remoteInbox = async (name: string) => readInbox(inboxPath(TEAM, name, remoteEnv()))

describe.skipIf(skip !== undefined)(`a Codex teammate on another host (real CLI${skip ? `; skipped: ${skip}` : ''})`, () => {
  it('starts on the host next to a swarm teammate and asks its model there', async () => {
    const c = await swarm([
      'spawn',
      TEAM,
      CODEX,
      '--agent',
      'codex',
      '--model',
      'loopback',
      '--host',
      host.host,
      '--cwd',
      hostWork,
      '--prompt',
      'FIRST say hello',
      '--json',
    ])
    expect(c.code, c.stderr).toBe(0)
    expect(JSON.parse(c.stdout)).toMatchObject({ backend: 'ssh', host: host.host })
    const a = await swarm(['spawn', TEAM, SWARM_MATE, '--host', host.host, '--prompt', 'say hello', '--json'])
    expect(a.code, a.stderr).toBe(0)
    await waitFor('Codex to ask its model, from the host', () => codexModel.submissionsOf('FIRST say hello').length > 0, 60_000, {
      output: diagnostics,
    })
    expect(codexModel.submissionsOf('FIRST say hello')).toHaveLength(1)
    await waitFor('alice to ask hers', () => claudeModel.requests.some((q) => q.agent === SWARM_MATE), 60_000, { output: diagnostics })
    await waitFor('Codex idle, its state relayed here', async () => (await stateOf(CODEX)) === 'idle', 60_000, { output: diagnostics })
    expect((await readMemberState(TEAM, CODEX, env))?.host).toBe(host.host)
  })

  it('20 messages from the lead to each reach it exactly once: Codex its model, alice her inbox on the host', async () => {
    const texts = Array.from({ length: 20 }, (_, k) => `m${k}-${TAG} from the lead\nsecond line`)
    const toAlice: Array<{ msg_id?: string }> = []
    for (const text of texts) {
      await sendTeamMessage({ team: TEAM, to: CODEX, text, env })
      toAlice.push(...(await sendTeamMessage({ team: TEAM, to: SWARM_MATE, text, env })))
    }
    for (let k = 0; k < texts.length; k++)
      await waitFor(`message ${k} at Codex's model`, () => codexModel.submissionsOf(`m${k}-${TAG} `).length > 0, 60_000, { output: diagnostics })
    await waitFor('Codex idle with every message read', async () => (await stateOf(CODEX)) === 'idle', 60_000, { output: diagnostics })
    for (let k = 0; k < texts.length; k++) expect(codexModel.submissionsOf(`m${k}-${TAG} `), `message ${k}`).toHaveLength(1)
    const there = (await remoteInbox(CODEX)).filter((m) => m.text.includes(`-${TAG} `)).map((m) => m.msg_id)
    expect(there).toHaveLength(20)
    expect(new Set(there).size).toBe(20)
    await waitFor(
      'all 20 in alice’s inbox on the host',
      async () => (await remoteInbox(SWARM_MATE)).filter((m) => m.text.includes(`-${TAG} `)).length >= 20,
      30_000,
      { output: diagnostics },
    )
    const hers = (await remoteInbox(SWARM_MATE)).filter((m) => m.text.includes(`-${TAG} `))
    expect(hers.map((m) => m.msg_id).sort()).toEqual(toAlice.map((m) => m.msg_id).sort())
  })

  it('a command Codex asks to run is a permission request here; approved here, it runs in its cwd there', async () => {
    await sendTeamMessage({ team: TEAM, to: CODEX, text: 'RUN-ON-HOST please', env })
    const pending = await waitFor(
      'the request, pending here',
      async () => {
        const p = await swarm(['perms', TEAM, '--json'])
        return (JSON.parse(p.stdout).requests as Array<{ id: string; agent: string; input: unknown }>).find((r) => r.agent === CODEX)
      },
      60_000,
      { intervalMs: 300, output: diagnostics },
    )
    expect(JSON.stringify(pending.input)).toContain('echo ran-on-host')
    await waitFor('Codex waiting, relayed here', async () => (await stateOf(CODEX)) === 'waiting', 15_000)
    const a = await swarm(['perms', 'approve', TEAM, pending.id])
    expect(a.code, a.stderr).toBe(0)
    // Its line, not the file: the shell creates count.txt before echo writes into it.
    const count = path.join(hostWork, 'count.txt')
    await waitFor('the command to run on the host', () => fs.existsSync(count) && fs.readFileSync(count, 'utf8').endsWith('\n'), 30_000, {
      output: diagnostics,
    })
    expect(fs.readFileSync(count, 'utf8')).toBe('ran-on-host\n')
    expect(fs.existsSync(path.join(sb.project, 'count.txt'))).toBe(false)
    await waitFor('the tool result at its model', () => codexModel.requests.some((r) => r.view?.toolResult !== undefined), 30_000)
    await waitFor('Codex idle again', async () => (await stateOf(CODEX)) === 'idle', 60_000, { output: diagnostics })
  })

  it('status shows both members, with their state, for one ssh call per host per poll', async () => {
    const before = sshCalls(['remote', 'status'])
    const s = await swarm(['status', TEAM, '--json'])
    expect(s.code, s.stderr).toBe(0)
    expect(sshCalls(['remote', 'status']) - before).toBe(1)
    const members = JSON.parse(s.stdout).members as Array<{ name: string; state: string }>
    expect(members.find((m) => m.name === CODEX)).toMatchObject({ state: expect.stringMatching(/idle|working|alive/) })
    expect(members.find((m) => m.name === SWARM_MATE)).toMatchObject({ state: expect.stringMatching(/idle|working|alive/) })
  })

  it('team delete leaves no process on either side', async () => {
    const r = await swarm(['team', 'delete', TEAM])
    expect(r.code, r.stderr).toBe(0)
    expect(await findMarked(teamDir(TEAM, remoteEnv()))).toEqual([])
    expect(await findMarked(teamDir(TEAM, env))).toEqual([])
    expect(fs.existsSync(teamDir(TEAM, remoteEnv()))).toBe(false)
  })
})

/** The link's log, the host's files of the team and each member's screen there: a failure's output. */
function diagnostics(): string {
  const links = path.join(teamDir(TEAM, env), 'remote')
  const linkLog = fs.existsSync(links)
    ? fs
        .readdirSync(links)
        .map((d) => path.join(links, d, 'link.log'))
        .filter((f) => fs.existsSync(f))
        .map((f) => fs.readFileSync(f, 'utf8').slice(-3000))
        .join('\n')
    : '(no link)'
  const dir = teamDir(TEAM, remoteEnv())
  if (!fs.existsSync(dir)) return `${linkLog}\n(no team on the host)`
  // Each pane of the host's tmux servers, as its screen shows now.
  const screens: string[] = []
  for (const sub of fs.existsSync(host.remoteTmux) ? fs.readdirSync(host.remoteTmux) : []) {
    for (const sock of fs.readdirSync(path.join(host.remoteTmux, sub))) {
      const socket = path.join(host.remoteTmux, sub, sock)
      const panes = spawnSync('tmux', ['-S', socket, 'list-panes', '-a', '-F', '#{pane_id}'], { encoding: 'utf8' })
      for (const id of panes.stdout.split('\n').filter(Boolean)) {
        const screen = spawnSync('tmux', ['-S', socket, 'capture-pane', '-p', '-t', id], { encoding: 'utf8' })
        screens.push(`--- pane ${id} ---\n${screen.stdout.trim()}`)
      }
    }
  }
  const perms = ['pending', 'resolved'].flatMap((d) =>
    [remoteEnv(), env].flatMap((e, side) => {
      const p = path.join(teamDir(TEAM, e), 'permissions', d)
      return fs.existsSync(p) ? fs.readdirSync(p).map((f) => `${side ? 'here' : 'there'} ${d}/${f}: ${fs.readFileSync(path.join(p, f), 'utf8')}`) : []
    }),
  )
  const codexConfig = path.join(agentHomeDir(TEAM, CODEX, remoteEnv()), 'config.toml')
  const config = fs.existsSync(codexConfig) ? fs.readFileSync(codexConfig, 'utf8') : '(none)'
  return [
    linkLog,
    `host files: ${fs.readdirSync(dir, { recursive: true }).map(String).join(' ')}`,
    ...perms,
    `--- Codex's config.toml there ---\n${config}`,
    ...screens,
  ].join('\n')
}
