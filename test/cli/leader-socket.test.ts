import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { runTool } from '../../src/agent/tool.js'
import { bashTool } from '../../src/agent/tools/bash.js'
import { memberSandbox } from '../../src/agent/member-sandbox.js'
import { inboxPath, leaderSocketPath } from '../../src/home/paths.js'
import { readInbox } from '../../src/mailbox/inbox.js'
import { sandboxAvailability } from '../../src/sandbox/sandbox.js'
import { defaultSandboxConfig } from '../../src/sandbox/sandbox-settings.js'
import { makeContext } from '../agent/helpers.js'
import { BIN, sandbox, type Sandbox } from '../e2e/helpers.js'
import { waitFor } from '../support/wait.js'

/**
 * `swarm status <team> --json` and `swarm send <team> <to> <text>` answered by the team's running
 * `swarm leader` on its socket (leader/leader-socket.ts, bin/swarm.js): the same bytes and exit code
 * as the CLI running the call itself (SWARM_NO_LEADER_SOCKET=1), a send delivered once, and the CLI
 * running the call itself whenever no leader listens — gone, killed, or something else at the path.
 */

const TEAM = 'sock'
let sb: Sandbox
let sock: string
const local = () => ({ ...sb.env, SWARM_NO_LEADER_SOCKET: '1' })

interface Leader {
  child: ChildProcess
  output: () => string
}
/** Every leader started: one a failed test left running is stopped before the next test. */
const leaders: Leader[] = []
afterEach(async () => {
  for (const l of leaders.splice(0)) if (l.child.exitCode === null && l.child.signalCode === null) await stopLeader(l, 'SIGTERM')
})

/** `swarm leader TEAM` in the background, once its socket listens (`listening: false`: once its console is up — a leader that warns instead). */
async function startLeader({ listening = true } = {}): Promise<Leader> {
  const child = sb.start(process.execPath, [BIN, 'leader', TEAM])
  let out = ''
  child.stdout?.on('data', (d) => (out += String(d)))
  child.stderr?.on('data', (d) => (out += String(d)))
  const leader = { child, output: () => out }
  leaders.push(leader)
  await waitFor(
    listening ? 'the leader to listen on its socket' : 'the leader console',
    () => out.includes('swarm leader — team') && (!listening || connects(sock)),
    20_000,
    { output: () => out },
  )
  return leader
}

async function stopLeader(l: Leader, signal: NodeJS.Signals): Promise<void> {
  const exited = new Promise((resolve) => l.child.once('exit', resolve))
  process.kill(-l.child.pid!, signal)
  await exited
}

function connects(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(file)
    c.on('connect', () => {
      c.destroy()
      resolve(true)
    })
    c.on('error', () => resolve(false))
  })
}

/** One raw request on the socket; the answer's line parsed. */
function ask(line: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const c = net.connect(sock)
    let data = ''
    c.on('connect', () => c.write(line))
    c.on('data', (d) => (data += String(d)))
    c.on('end', () => resolve(JSON.parse(data) as Record<string, unknown>))
    c.on('error', reject)
  })
}

async function inboxOfA() {
  return readInbox(inboxPath(TEAM, 'a', sb.env))
}

beforeAll(async () => {
  sb = sandbox()
  sock = leaderSocketPath(TEAM, sb.env)
  const created = await sb.swarm(['team', 'create', TEAM, '--agents', 'a', '--backend', 'in-process', '--cwd', sb.project, '--no-start'])
  expect(created.code, created.stderr).toBe(0)
})
afterAll(async () => {
  await sb.cleanup()
})

describe('with the leader running', () => {
  let leader: Leader
  beforeAll(async () => {
    leader = await startLeader()
    leaders.splice(leaders.indexOf(leader), 1) // this block's, for all its tests
    // The teammate, started inside the leader without a model, has stopped: the status stays put.
    await waitFor('a to stop inside the leader', () => leader.output().includes('no model is configured'), 20_000, { output: leader.output })
  })
  afterAll(async () => {
    await stopLeader(leader, 'SIGTERM')
  })

  it('answers status --json with what the CLI prints itself, and the CLI prints that answer', async () => {
    const itself = await sb.swarm(['status', TEAM, '--json'], { env: local() })
    expect(itself.code, itself.stderr).toBe(0)
    const answer = await ask(`${JSON.stringify({ argv: ['status', TEAM, '--json'], env: sb.env })}\n`)
    expect(answer).toEqual({ stdout: `${itself.stdout}\n`, stderr: '', code: 0 }) // execa strips the last newline
    const asked = await sb.swarm(['status', TEAM, '--json'])
    expect(asked).toEqual(itself)
  })

  it('sends once, an inbox entry of the same form as the CLI writes itself', async () => {
    const before = (await inboxOfA()).length
    const asked = await sb.swarm(['send', TEAM, 'a', 'through the leader'])
    const itself = await sb.swarm(['send', TEAM, 'a', 'by the CLI itself'], { env: local() })
    expect(asked).toEqual({ code: 0, stdout: 'sent to a', stderr: '' })
    expect(itself).toEqual(asked)
    const added = (await inboxOfA()).slice(before)
    expect(added.map((m) => m.text)).toEqual(['through the leader', 'by the CLI itself'])
    const form = (m: (typeof added)[number]) => ({ from: m.from, keys: Object.keys(m).sort(), read: m.read })
    expect(form(added[0])).toEqual(form(added[1]))
    expect(added[0].from).toBe('team-lead')
  })

  it('answers a failing call with the CLI’s error line and exit code', async () => {
    const itself = await sb.swarm(['send', TEAM, 'nobody', 'hi'], { env: local() })
    expect(itself.code).toBe(3)
    const answer = await ask(`${JSON.stringify({ argv: ['send', TEAM, 'nobody', 'hi'], env: sb.env })}\n`)
    expect(answer).toEqual({ stdout: '', stderr: `${itself.stderr}\n`, code: 3 })
    expect(await sb.swarm(['send', TEAM, 'nobody', 'hi'])).toEqual(itself)
  })

  it('leaves a teammate’s send, another team and other calls to the caller (nothing done)', async () => {
    const before = (await inboxOfA()).length
    const asTeammate = { ...sb.env, SWARM_AGENT_ID: `a@${TEAM}`, SWARM_AGENT_NAME: 'a' }
    expect(await ask(`${JSON.stringify({ argv: ['send', TEAM, 'team-lead', 'hi'], env: asTeammate })}\n`)).toEqual({ local: true })
    expect(await ask(`${JSON.stringify({ argv: ['send', 'other', 'a', 'hi'], env: sb.env })}\n`)).toEqual({ local: true })
    expect(await ask(`${JSON.stringify({ argv: ['send', TEAM, 'a', '--json'], env: sb.env })}\n`)).toEqual({ local: true })
    expect(await ask(`${JSON.stringify({ argv: ['status', TEAM], env: sb.env })}\n`)).toEqual({ local: true })
    expect((await inboxOfA()).length).toBe(before)
  })

  it('answers a malformed request with a usage error and keeps serving', async () => {
    for (const line of ['{not json\n', '{"argv": "status"}\n', `${JSON.stringify({ argv: ['status', TEAM, '--json'] })}\n`]) {
      const answer = await ask(line)
      expect(answer.code, line).toBe(2)
      expect(answer.stderr, line).toMatch(/^swarm: a (malformed leader-socket request|leader-socket request that is not JSON)/)
    }
    const asked = await sb.swarm(['status', TEAM, '--json'])
    expect(asked.code, asked.stderr).toBe(0)
    expect(fs.statSync(sock).mode & 0o777).toBe(0o600)
  })
})

describe('with no leader listening, the CLI runs the call itself', () => {
  it('after the leader exits: its socket is gone', async () => {
    const l = await startLeader()
    await stopLeader(l, 'SIGTERM')
    expect(fs.existsSync(sock)).toBe(false)
    const r = await sb.swarm(['status', TEAM, '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout).team).toBe(TEAM)
  })

  it('after the leader is killed: the stale socket refuses, the message is sent once, the next leader replaces the socket', async () => {
    const killed = await startLeader()
    await stopLeader(killed, 'SIGKILL')
    expect(fs.lstatSync(sock).isSocket()).toBe(true)
    expect(await connects(sock)).toBe(false)
    const before = (await inboxOfA()).length
    // a lives inside the leader: kept in its inbox, exit 7, as from a shell when no leader ever ran.
    expect(await sb.swarm(['send', TEAM, 'a', 'past a dead leader'])).toMatchObject({ code: 7, stdout: '' })
    expect((await inboxOfA()).slice(before).map((m) => m.text)).toEqual(['past a dead leader'])
    expect((await sb.swarm(['status', TEAM, '--json'])).code).toBe(0)
    const next = await startLeader()
    // startLeader waited for the path to take connections again: the dead leader's file was replaced.
    const answer = await ask(`${JSON.stringify({ argv: ['status', TEAM, '--json'], env: sb.env })}\n`)
    expect(answer.code).toBe(0)
    await stopLeader(next, 'SIGTERM')
  })

  it('a send the socket took but did not answer is not sent again (exit 9); a status then runs in the CLI', async () => {
    fs.mkdirSync(path.dirname(sock), { recursive: true })
    let requests = 0
    // A leader that dies with the request read: the message may or may not have gone.
    const server = net.createServer((c) =>
      c.once('data', () => {
        requests++
        c.destroy()
      }),
    )
    await new Promise<void>((resolve) => server.listen(sock, resolve))
    try {
      const before = (await inboxOfA()).length
      const sent = await sb.swarm(['send', TEAM, 'a', 'taken, never answered'])
      expect(sent.code).toBe(9)
      // A reset or a close, as the kernel delivers the end of the connection.
      expect(sent.stderr).toMatch(
        new RegExp(
          `^swarm: the leader of team ${TEAM} (closed the connection without an answer|dropped the connection before answering) — the message may have been sent: look with swarm inbox ${TEAM} a$`,
        ),
      )
      expect((await inboxOfA()).length).toBe(before)
      const status = await sb.swarm(['status', TEAM, '--json'])
      expect(status.code, status.stderr).toBe(0)
      expect(requests).toBe(2)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('a file at the socket path is neither followed nor removed: the leader runs without a socket', async () => {
    fs.writeFileSync(sock, 'not a socket')
    try {
      const l = await startLeader({ listening: false })
      expect(l.output()).toContain(`no leader socket: ${sock} is not a socket (left as it is)`)
      expect(await sb.swarm(['status', TEAM, '--json'])).toMatchObject({ code: 0 })
      await stopLeader(l, 'SIGTERM')
      expect(fs.readFileSync(sock, 'utf8')).toBe('not a socket')
    } finally {
      fs.rmSync(sock)
    }
  })

  it('a symbolic link at the socket path, to a listening socket, is not followed by the CLI nor replaced by the leader', async () => {
    const elsewhere = path.join(sb.root, 'elsewhere.sock')
    let connections = 0
    const server = net.createServer((c) => {
      connections++
      c.resume().end(`${JSON.stringify({ stdout: 'from elsewhere\n', stderr: '', code: 0 })}\n`)
    })
    await new Promise<void>((resolve) => server.listen(elsewhere, resolve))
    fs.symlinkSync(elsewhere, sock)
    try {
      const r = await sb.swarm(['status', TEAM, '--json'])
      expect(r.code, r.stderr).toBe(0)
      expect(JSON.parse(r.stdout).team).toBe(TEAM)
      const l = await startLeader({ listening: false })
      expect(l.output()).toContain(`no leader socket: ${sock} is not a socket (left as it is)`)
      await stopLeader(l, 'SIGTERM')
      expect(fs.readlinkSync(sock)).toBe(elsewhere)
      expect(connections).toBe(0)
    } finally {
      fs.rmSync(sock)
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe('where bin/swarm.js looks for the socket', () => {
  // A stand-in at leaderSocketPath for each way of naming the state root: the CLI must print its answer.
  it.each([
    ['SWARM_HOME', (e: NodeJS.ProcessEnv) => e],
    ['CLAUDE_CONFIG_DIR', (e: NodeJS.ProcessEnv) => ({ ...e, SWARM_HOME: '', CLAUDE_CONFIG_DIR: e.SWARM_HOME })],
    ['HOME', (e: NodeJS.ProcessEnv) => ({ ...e, SWARM_HOME: '', CLAUDE_CONFIG_DIR: '' })],
  ])('is leaderSocketPath with the root from %s', async (_how, envOf) => {
    const env: NodeJS.ProcessEnv = envOf(sb.env)
    // rootDir takes HOME from this process (os.homedir()); the CLI, from its own environment.
    const file = leaderSocketPath('probe', env.SWARM_HOME || env.CLAUDE_CONFIG_DIR ? env : { SWARM_HOME: path.join(env.HOME!, '.claude') })
    fs.mkdirSync(path.dirname(file), { recursive: true })
    // resume(): a connection whose request is never read would hold server.close() open.
    const server = net.createServer((c) =>
      c.resume().end(`${JSON.stringify({ stdout: 'from the socket\n', stderr: 'and its stderr\n', code: 4 })}\n`),
    )
    await new Promise<void>((resolve) => server.listen(file, resolve))
    try {
      expect(await sb.swarm(['status', 'probe', '--json'], { env })).toEqual({ code: 4, stdout: 'from the socket', stderr: 'and its stderr' })
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe('the answer', () => {
  it('is taken at its newline, in pieces, without waiting for the leader to close the connection', async () => {
    const file = leaderSocketPath('open', sb.env)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    const held = new Set<net.Socket>()
    const line = `${JSON.stringify({ stdout: 'answered\n', stderr: '', code: 3 })}\n`
    const server = net.createServer((c) => {
      held.add(c)
      // Half, then the rest with the newline after the request is read; the connection is left open.
      c.once('data', () => {
        c.write(line.slice(0, 10))
        setImmediate(() => c.write(line.slice(10)))
      })
    })
    await new Promise<void>((resolve) => server.listen(file, resolve))
    try {
      expect(await sb.swarm(['send', 'open', 'a', 'hi'])).toEqual({ code: 3, stdout: 'answered', stderr: '' })
    } finally {
      for (const c of held) c.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

const bash = await sandboxAvailability(defaultSandboxConfig(), process.env)

describe.skipIf(bash.status !== 'sandboxed')('from a member’s sandboxed Bash', () => {
  // Unix sockets allowed, so that only the view decides: teams/ is not there.
  it('the leader socket is not there to connect to', async () => {
    const server = net.createServer((c) => c.resume().end('reached\n'))
    fs.mkdirSync(path.dirname(sock), { recursive: true })
    await new Promise<void>((resolve) => server.listen(sock, resolve))
    const sandbox = memberSandbox({
      config: { ...defaultSandboxConfig(), allowAllUnixSockets: true },
      cwd: sb.project,
      env: sb.env,
      label: 'leader-socket-test',
      writableDirs: () => [sb.project],
      team: TEAM,
    })
    try {
      const client = `require('net').connect(${JSON.stringify(sock)}).on('data', (d) => console.log('connected', String(d).trim())).on('error', (e) => console.log('refused', e.code))`
      const out = (await runTool(bashTool, { command: `node -e ${JSON.stringify(client)}` }, makeContext(sb.project, { sandbox, env: sb.env })))
        .content
      expect(out).toContain('refused ENOENT')
    } finally {
      await sandbox.close()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
