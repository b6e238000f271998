import fs from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLoopbackServer, type LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { createTeam } from '../../src/teams/team-store.js'
import { ensureTeamKeys } from '../../src/trust/keys.js'
import { sendTeamMessage } from '../../src/teams/messaging.js'
import { readInbox } from '../../src/mailbox/inbox.js'
import { inboxPath, teamDir } from '../../src/home/paths.js'
import { findMarked } from '../../src/process/marker.js'
import { readMemberState } from '../../src/store/member-state.js'
import { sandbox, type Sandbox } from '../e2e/helpers.js'
import { hasSshd, sshCallLog, startTestHost, type TestHost } from '../support/sshd.js'
import { requireBuilt } from '../support/repo.js'
import { waitFor } from '../support/wait.js'

/**
 * A swarm teammate on another machine: Debian's sshd on a test host (test/support/sshd.ts: a
 * network namespace with 50 ms each way where the kernel allows, else loopback — the describe
 * line says which), the lead's side here. What a user would check: the member answers, its
 * messages arrive once each, a Bash request answered here runs there, status costs one ssh call
 * per host, a dropped connection loses nothing, a wedged host is reported within its limit while a
 * local teammate stays fast, and `team delete` leaves no process on either side.
 */

const TEAM = 'remote-t'
const tool = (name: string, input: Record<string, unknown>) => ({ content: [{ type: 'tool_use' as const, name, input }] })
const SCENARIO = {
  agents: {
    alice: [
      { ...tool('Bash', { command: 'echo ran-on-host >> count.txt' }), when: { lastUserIncludes: 'run the tests' } },
      tool('SendMessage', { to: 'team-lead', message: 'done 1: the command ran', summary: 'done 1' }),
      { text: 'ok' },
    ],
  },
  fallback: { text: 'Noted.' },
}

let host: TestHost
let sb: Sandbox
let model: LoopbackServer
let sshLog: ReturnType<typeof sshCallLog>
let env: NodeJS.ProcessEnv

const remoteEnv = () => ({ ...env, SWARM_HOME: host.remoteSwarmHome })
const swarm = (args: string[], extra: NodeJS.ProcessEnv = {}) => sb.swarm(args, { env: { ...env, ...extra }, timeout: 120_000 })
const sshCalls = (what: string[]) => sshLog.calls(what)

beforeAll(async () => {
  requireBuilt('dist/remote/link.js')
  sb = sandbox()
  host = await startTestHost(sb.root)
  model = await startLoopbackServer({ scenario: SCENARIO, host: host.localAddress })
  // Every ssh swarm runs goes through this shim, which logs its command line: how the test counts calls per poll.
  sshLog = sshCallLog(sb.root)
  env = {
    ...sb.env,
    PATH: `${sshLog.dir}:${sb.env.PATH}`,
    SWARM_SSH_CONFIG: host.sshConfig,
    ANTHROPIC_API_KEY: 'test',
    ANTHROPIC_BASE_URL: model.url,
  }
  await createTeam({ name: TEAM, cwd: sb.project }, env)
  await ensureTeamKeys(TEAM, env)
}, 60_000)

afterAll(async () => {
  await swarm(['team', 'delete', TEAM, '--force']).catch(() => undefined)
  await host?.stop()
  await model?.close()
  await sb?.cleanup()
})

const remoteInbox = async (name: string) => readInbox(inboxPath(TEAM, name, remoteEnv()))
const leadInbox = async () => readInbox(inboxPath(TEAM, 'team-lead', env))

describe.skipIf(!hasSshd)(
  `a teammate on another host (${process.getuid?.() === 0 ? 'network namespace when the kernel allows' : 'loopback'})`,
  () => {
    it('swarm hosts check reports the helper of this version and what the host has', async () => {
      const r = await swarm(['hosts', 'check', host.host, '--json'])
      expect(r.code, r.stderr).toBe(0)
      const report = JSON.parse(r.stdout)
      expect(report).toMatchObject({ versionMatches: true, home: host.remoteHome })
      expect(report.tools.tmux).toMatch(/tmux/)
      console.log(`test host: ${host.mode} ${host.host}, connect ${report.connectMs} ms`)
    })

    it('spawns on the host; a Bash request answered here runs there, its report comes back', async () => {
      const r = await swarm(['spawn', TEAM, 'alice', '--host', host.host, '--prompt', 'run the tests', '--json'])
      expect(r.code, r.stderr).toBe(0)
      expect(JSON.parse(r.stdout)).toMatchObject({ backend: 'ssh', host: host.host })
      const listed = await waitFor(
        'the request, pending here',
        async () => {
          const p = await swarm(['perms', TEAM, '--json'])
          return JSON.parse(p.stdout).requests[0] as { id: string; agent: string; toolName: string } | undefined
        },
        60_000,
        { intervalMs: 300, output: () => `${linkLog()}\n${remoteDump()}` },
      )
      expect(listed).toMatchObject({ agent: 'alice', toolName: 'Bash' })
      const a = await swarm(['perms', 'approve', TEAM, listed.id])
      expect(a.code, a.stderr).toBe(0)
      // Its line, not the file: the shell creates count.txt before echo writes into it.
      const count = path.join(host.remoteHome, 'count.txt')
      await waitFor('the command to run on the host', () => fs.existsSync(count) && fs.readFileSync(count, 'utf8').endsWith('\n'), 30_000, {
        output: linkLog,
      })
      expect(fs.readFileSync(count, 'utf8')).toBe('ran-on-host\n')
      // Its cwd was the host's HOME: nothing ran in the lead's project.
      expect(fs.existsSync(path.join(sb.project, 'count.txt'))).toBe(false)
      await waitFor('done 1 in the lead inbox here', async () => (await leadInbox()).some((m) => m.text.includes('done 1')), 30_000, {
        output: linkLog,
      })
      await waitFor('its state relayed here', async () => (await readMemberState(TEAM, 'alice', env))?.host === host.host, 15_000)
    })

    it('20 messages each reach the host exactly once; status is one ssh call per host per poll', async () => {
      const sent: Array<{ msg_id?: string }> = []
      for (let i = 0; i < 20; i++) sent.push(...(await sendTeamMessage({ team: TEAM, to: 'alice', text: `message ${i}`, env })))
      await waitFor(
        'all 20 in the host inbox',
        async () => (await remoteInbox('alice')).filter((m) => m.text.startsWith('message ')).length >= 20,
        30_000,
        { output: linkLog },
      )
      const there = (await remoteInbox('alice')).filter((m) => m.text.startsWith('message '))
      expect(there.map((m) => m.msg_id).sort()).toEqual(sent.map((m) => m.msg_id).sort())
      const before = sshCalls(['remote', 'status'])
      const s = await swarm(['status', TEAM, '--json'])
      expect(s.code, s.stderr).toBe(0)
      expect(sshCalls(['remote', 'status']) - before).toBe(1)
      const alice = JSON.parse(s.stdout).members.find((m: { name: string }) => m.name === 'alice')
      expect(alice).toMatchObject({ state: expect.stringMatching(/idle|working|alive/) })
    })

    it('a dropped connection: the pane works on, the link reconnects, nothing is lost or doubled', async () => {
      const check = await execa('ssh', ['-F', host.sshConfig, '-S', controlSocket(), '-O', 'check', 'x'], { reject: false })
      const pid = Number(/pid=(\d+)/.exec(check.stderr)?.[1])
      expect(pid).toBeGreaterThan(0)
      process.kill(pid, 'SIGKILL')
      const sent: Array<{ msg_id?: string }> = []
      for (let i = 0; i < 5; i++) sent.push(...(await sendTeamMessage({ team: TEAM, to: 'alice', text: `after drop ${i}`, env })))
      await waitFor(
        'the 5 sent after the drop on the host',
        async () => (await remoteInbox('alice')).filter((m) => m.text.startsWith('after drop')).length >= 5,
        30_000,
        {
          output: linkLog,
        },
      )
      const all = (await remoteInbox('alice')).map((m) => m.msg_id)
      expect(new Set(all).size).toBe(all.length)
      expect(linkLog().match(/connected to/g)?.length).toBeGreaterThanOrEqual(2)
      const s = await swarm(['status', TEAM, '--json'])
      expect(JSON.parse(s.stdout).members.find((m: { name: string }) => m.name === 'alice').state).not.toBe('dead')
    })

    it('a wedged host is reported within its limit while a local teammate answers at once', async () => {
      const local = await swarm(['spawn', TEAM, 'bob', '--backend', 'tmux', '--command', 'sleep 600'])
      expect(local.code, local.stderr).toBe(0)
      await host.wedge()
      try {
        const t0 = Date.now()
        const s = await swarm(['status', TEAM, '--json'], { SWARM_REMOTE_TIMEOUT_MS: '2000' })
        const took = Date.now() - t0
        const members = JSON.parse(s.stdout).members as Array<{ name: string; state: string; reason?: string }>
        expect(members.find((m) => m.name === 'alice')).toMatchObject({
          state: 'unknown',
          reason: expect.stringMatching(/did not answer within \d+ ms/),
        })
        expect(members.find((m) => m.name === 'bob')?.state).toBe('alive')
        expect(took).toBeLessThan(2000 + 3000)
      } finally {
        await host.unwedge()
      }
    })

    it('team resume after both machines rebooted: the member starts again on its host from its transcript there, its link again here', async () => {
      // The host's reboot: its tmux server and everything of the team there gone; this machine's: the link gone.
      for (const sub of fs.readdirSync(host.remoteTmux)) {
        for (const sock of fs.readdirSync(path.join(host.remoteTmux, sub))) {
          await execa('tmux', ['-S', path.join(host.remoteTmux, sub, sock), 'kill-server'], { reject: false })
        }
      }
      for (const p of await findMarked(teamDir(TEAM, remoteEnv()))) process.kill(p.pid, 'SIGKILL')
      const linkPid = Number(fs.readFileSync(linkFile('link.pid'), 'utf8').trim())
      process.kill(linkPid, 'SIGKILL')
      await waitFor(
        'alice dead in status',
        async () =>
          JSON.parse((await swarm(['status', TEAM, '--json'])).stdout).members.find((m: { name: string }) => m.name === 'alice').state === 'dead',
        20_000,
      )
      const r = await swarm(['team', 'resume', TEAM, '--json'])
      expect(r.code, r.stderr).toBe(0)
      expect(JSON.parse(r.stdout).respawned).toContain('alice')
      await sendTeamMessage({ team: TEAM, to: 'alice', text: 'after reboot', env })
      const asked = await waitFor(
        'alice to ask her model about it, on the host',
        () => model.requests.find((q) => q.agent === 'alice' && JSON.stringify(q.body).includes('after reboot')),
        45_000,
        { intervalMs: 200, output: () => `${linkLog()}\n${remoteDump()}` },
      )
      // From her transcript there: the conversation before the reboot is in the request.
      expect(JSON.stringify(asked.body)).toContain('run the tests')
      const s = await swarm(['status', TEAM, '--json'])
      expect(JSON.parse(s.stdout).members.find((m: { name: string }) => m.name === 'alice').state).toBe('alive')
      expect(Number(fs.readFileSync(linkFile('link.pid'), 'utf8').trim())).not.toBe(linkPid)
    })

    it('team delete leaves no process on either side', async () => {
      const r = await swarm(['team', 'delete', TEAM])
      expect(r.code, r.stderr).toBe(0)
      expect(await findMarked(teamDir(TEAM, remoteEnv()))).toEqual([])
      expect(await findMarked(teamDir(TEAM, env))).toEqual([])
      expect(fs.existsSync(teamDir(TEAM, remoteEnv()))).toBe(false)
    })
  },
)

function controlSocket(): string {
  const dir = path.join(env.SWARM_HOME!, 'ssh')
  return path.join(dir, fs.readdirSync(dir).find((f) => !f.includes('.'))!)
}

/** A file of the team's (one) link directory. */
function linkFile(name: string): string {
  const dir = path.join(teamDir(TEAM, env), 'remote')
  return path.join(dir, fs.readdirSync(dir)[0]!, name)
}

function linkLog(): string {
  const dir = path.join(teamDir(TEAM, env), 'remote')
  if (!fs.existsSync(dir)) return '(no link)'
  return fs
    .readdirSync(dir)
    .map((d) => {
      const f = path.join(dir, d, 'link.log')
      return fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : ''
    })
    .join('\n')
}

/** What the host has of the team, for a failure's output: its files and alice's pane log. */
function remoteDump(): string {
  const dir = teamDir(TEAM, remoteEnv())
  if (!fs.existsSync(dir)) return '(no team on the host)'
  const files = fs.readdirSync(dir, { recursive: true }).map(String).join(' ')
  const pane = path.join(dir, 'agents', 'alice', 'pane.log')
  const inbox = inboxPath(TEAM, 'alice', remoteEnv())
  return [
    `host files: ${files}`,
    `--- alice's inbox on the host ---\n${fs.existsSync(inbox) ? fs.readFileSync(inbox, 'utf8').slice(-3000) : '(none)'}`,
    `--- alice pane ---\n${fs.existsSync(pane) ? fs.readFileSync(pane, 'utf8').slice(-3000) : '(none)'}`,
  ].join('\n')
}
