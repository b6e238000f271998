import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLoopbackServer, type LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { sendTeamMessage } from '../../src/teams/messaging.js'
import { teamDir } from '../../src/home/paths.js'
import { findMarked } from '../../src/process/marker.js'
import { readMemberState } from '../../src/store/member-state.js'
import { BIN, sandbox, type Sandbox } from '../e2e/helpers.js'
import { hasSshd, startTestHost, type TestHost } from '../support/sshd.js'
import { requireBuilt } from '../support/repo.js'
import { waitFor } from '../support/wait.js'

/**
 * `team resume` of an in-process team with a member on another host. Its leader runs in the
 * foreground and hosts its own teammates; the member on the host runs there, in tmux, and is
 * the same concern as on a pane team: after this machine went down (the link with it) the member
 * ran on and only needs its link again; after the host rebooted too it starts again there, from
 * its transcript on the host.
 */

const TEAM = 'remote-ip'
const SCENARIO = { fallback: { text: 'Noted.' } }

let host: TestHost
let sb: Sandbox
let model: LoopbackServer
let env: NodeJS.ProcessEnv

const remoteEnv = () => ({ ...env, SWARM_HOME: host.remoteSwarmHome })
const swarm = (args: string[]) => sb.swarm(args, { env, timeout: 120_000 })

beforeAll(async () => {
  requireBuilt('dist/remote/link.js')
  sb = sandbox()
  host = await startTestHost(sb.root)
  model = await startLoopbackServer({ scenario: SCENARIO, host: host.localAddress })
  env = { ...sb.env, SWARM_SSH_CONFIG: host.sshConfig, ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: model.url }
  const created = await swarm(['team', 'create', TEAM, '--agents', 'a', '--backend', 'in-process', '--cwd', sb.project, '--no-start'])
  expect(created.code, created.stderr).toBe(0)
}, 60_000)

afterAll(async () => {
  await swarm(['team', 'delete', TEAM, '--force']).catch(() => undefined)
  await host?.stop()
  await model?.close()
  await sb?.cleanup()
})

/** `swarm team resume` of the in-process team: its leader stays in the foreground, here a child with its output kept. */
function resume(): { child: ChildProcess; out: () => string; exited: Promise<number | null> } {
  const child = sb.start(process.execPath, [BIN, 'team', 'resume', TEAM], { env })
  let out = ''
  child.stdout?.on('data', (d) => (out += String(d)))
  child.stderr?.on('data', (d) => (out += String(d)))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return { child, out: () => out, exited }
}

async function stopLeader(leader: ReturnType<typeof resume>): Promise<void> {
  leader.child.kill('SIGTERM')
  const code = await Promise.race([leader.exited, new Promise((r) => setTimeout(() => r('still running 15 s after SIGTERM'), 15_000))])
  expect(code, leader.out()).toBe(0)
}

const linkPidFile = () => {
  const dir = path.join(teamDir(TEAM, env), 'remote')
  return path.join(dir, fs.readdirSync(dir)[0]!, 'link.pid')
}
const askedAbout = (text: string) => () => model.requests.find((q) => q.agent === 'bob' && JSON.stringify(q.body).includes(text))

describe.skipIf(!hasSshd)('team resume of an in-process team with a member on another host', () => {
  it('spawns bob on the host next to an in-process teammate', async () => {
    const r = await swarm(['spawn', TEAM, 'bob', '--host', host.host, '--prompt', 'first words to bob'])
    expect(r.code, r.stderr).toBe(0)
    await waitFor('bob to ask his model, on the host', askedAbout('first words to bob'), 45_000, { intervalMs: 200 })
  })

  it('this machine went down, the host did not: bob is kept, his link comes back, a message reaches him once', async () => {
    const oldLink = Number(fs.readFileSync(linkPidFile(), 'utf8').trim())
    process.kill(oldLink, 'SIGKILL')
    const leader = resume()
    try {
      await waitFor('the resume to name bob alive on his host', () => /on other hosts: alive: bob; respawned: none/.test(leader.out()), 60_000, {
        output: leader.out,
      })
      await waitFor('a running inside the new leader', async () => (await readMemberState(TEAM, 'a', env))?.status === 'idle', 30_000, {
        output: leader.out,
      })
      expect(Number(fs.readFileSync(linkPidFile(), 'utf8').trim())).not.toBe(oldLink)
      await sendTeamMessage({ team: TEAM, to: 'bob', text: 'while the lead was away', env })
      await waitFor('bob to get it through the new link', askedAbout('while the lead was away'), 45_000, { intervalMs: 200, output: leader.out })
      // Once: the same text in one request's new turn only (his later requests carry it as history).
      const firsts = model.requests.filter((q) => q.agent === 'bob' && lastUserText(q.body).includes('while the lead was away'))
      expect(firsts).toHaveLength(1)
    } finally {
      await stopLeader(leader)
    }
  })

  it('both machines went down: bob starts again on his host from his transcript there', async () => {
    for (const sub of fs.readdirSync(host.remoteTmux)) {
      for (const sock of fs.readdirSync(path.join(host.remoteTmux, sub))) {
        await execa('tmux', ['-S', path.join(host.remoteTmux, sub, sock), 'kill-server'], { reject: false })
      }
    }
    for (const p of await findMarked(teamDir(TEAM, remoteEnv()))) process.kill(p.pid, 'SIGKILL')
    const linkPid = Number(fs.readFileSync(linkPidFile(), 'utf8').trim())
    if (fs.existsSync(`/proc/${linkPid}`)) process.kill(linkPid, 'SIGKILL')
    const leader = resume()
    try {
      await waitFor('the resume to name bob respawned', () => /on other hosts: alive: none; respawned: bob/.test(leader.out()), 60_000, {
        output: leader.out,
      })
      await sendTeamMessage({ team: TEAM, to: 'bob', text: 'after both reboots', env })
      const asked = await waitFor('bob to ask his model about it, on the host', askedAbout('after both reboots'), 45_000, {
        intervalMs: 200,
        output: leader.out,
      })
      // His conversation before the reboot is in the request: continued from the transcript there.
      expect(JSON.stringify(asked.body)).toContain('first words to bob')
      const s = await swarm(['status', TEAM, '--json'])
      expect(JSON.parse(s.stdout).members.find((m: { name: string }) => m.name === 'bob').state).toBe('alive')
    } finally {
      await stopLeader(leader)
    }
  })

  it('team delete leaves no process on either side', async () => {
    const r = await swarm(['team', 'delete', TEAM])
    expect(r.code, r.stderr).toBe(0)
    expect(await findMarked(teamDir(TEAM, remoteEnv()))).toEqual([])
    expect(await findMarked(teamDir(TEAM, env))).toEqual([])
  })
})

/** The text of a Messages request's last user turn. */
function lastUserText(body: unknown): string {
  const messages = (body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? []
  const last = [...messages].reverse().find((m) => m.role === 'user')
  return last ? JSON.stringify(last.content) : ''
}
