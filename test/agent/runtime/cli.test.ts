import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { execa } from 'execa'
import { beforeAll, describe, expect, it } from 'vitest'
import { readMemberState } from '../../../src/store/member-state.js'
import { Transcript, transcriptPath } from '../../../src/agent/transcript.js'
import { encodeStructured } from '../../../src/mailbox/messages.js'
import type { LoopbackServer } from '../../../src/loopback-model/loopback-server.js'
import { sendTeamMessage } from '../../../src/teams/messaging.js'
import { LEAD_NAME } from '../../../src/home/paths.js'
import { getMember } from '../../../src/teams/team-store.js'
import { BIN, TEAM, inbox, leadStructured, makeFixture, modelRequests, sleep, startChildAgent, toolResults, type Fixture } from './helpers.js'
import { useAgentTeam } from '../../support/agent-team.js'
import { requireBuilt } from '../../support/repo.js'
import { waitFor } from '../../support/wait.js'

let loopback: LoopbackServer
let fx: Fixture
beforeAll(() => requireBuilt('dist/cli/logs.js'))
useAgentTeam({ team: (l) => makeFixture(l, [{ name: 'alice' }, { name: 'bob' }]), onReady: (t) => ({ loopback, fx } = t) })

const swarm = (args: string[], env = fx.env) => execa(process.execPath, [BIN, ...args], { env, reject: false, timeout: 15_000 })

describe('swarm agent (child process)', () => {
  it('works a message with tools, reports, goes idle once, then exits 0 on a signed shutdown_request', async () => {
    await fs.writeFile(path.join(fx.cwd, 'in.txt'), 'alpha\n')
    loopback.setScenario({
      agents: {
        alice: [
          { content: [{ type: 'tool_use', id: 'toolu_r', name: 'Read', input: { file_path: 'in.txt' } }] },
          { content: [{ type: 'tool_use', id: 'toolu_w', name: 'Write', input: { file_path: 'out.txt', content: 'beta\n' } }] },
          { content: [{ type: 'tool_use', id: 'toolu_b', name: 'Bash', input: { command: 'cat in.txt out.txt | wc -l' } }] },
          {
            when: { toolResultIncludes: '2' },
            content: [{ type: 'tool_use', id: 'toolu_s', name: 'SendMessage', input: { to: 'team-lead', message: 'two lines' } }],
          },
          { text: 'Reported.' },
        ],
      },
    })
    const child = startChildAgent(fx, 'alice', ['--mode', 'bypassPermissions'])
    await waitFor('alice to start', async () => (await readMemberState(TEAM, 'alice', fx.env))?.status === 'idle', 15_000, { output: child.output })
    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'count the lines', env: fx.env })
    await waitFor('the idle notification', async () => (await leadStructured(fx, 'idle_notification', 'alice')).length > 0, 15_000, {
      output: child.output,
    })
    await sleep(400)
    expect(await leadStructured(fx, 'idle_notification', 'alice')).toHaveLength(1)
    expect((await inbox(fx, LEAD_NAME)).some((m) => m.from === 'alice' && m.text === 'two lines')).toBe(true)
    expect(await fs.readFile(path.join(fx.cwd, 'out.txt'), 'utf8')).toBe('beta\n')
    const results = toolResults(loopback, 'alice')
    expect([...results.values()].every((r) => !r.isError)).toBe(true)
    expect(results.get('toolu_b')?.content.trim()).toBe('2')
    expect(child.output()).toMatch(/✓ Bash cat in\.txt out\.txt \| wc -l/)
    expect((await inbox(fx, 'alice')).every((m) => m.read)).toBe(true)

    await sendTeamMessage({
      team: TEAM,
      to: 'alice',
      text: encodeStructured({ type: 'shutdown_request', requestId: 'sd-cli', from: LEAD_NAME, timestamp: new Date().toISOString() }),
      env: fx.env,
    })
    expect(await child.exited).toBe(0)
    expect(await leadStructured(fx, 'shutdown_approved', 'alice')).toEqual([expect.objectContaining({ requestId: 'sd-cli' })])
    expect((await readMemberState(TEAM, 'alice', fx.env))?.status).toBe('exited')
    expect((await getMember(TEAM, 'alice', fx.env)).isActive).toBe(false)
    expect(modelRequests(loopback, 'alice')).toHaveLength(5)
  })

  it('fails fast with the right exit codes: not a member (3), a bad name (2), no model configured (2)', async () => {
    const notMember = await swarm(['agent', '--team', TEAM, '--name', 'mallory'])
    expect(notMember.exitCode).toBe(3)
    expect(notMember.stderr).toMatch(/^swarm: .*mallory/)
    const badName = await swarm(['agent', '--team', TEAM, '--name', '../x'])
    expect(badName.exitCode).toBe(2)
    const { ANTHROPIC_API_KEY: _, ...noKey } = fx.env
    const unconfigured = await swarm(['agent', '--team', TEAM, '--name', 'alice'], noKey)
    expect(unconfigured.exitCode).toBe(2)
    expect(unconfigured.stderr).toMatch(/no model is configured/)
  })
})

describe('swarm logs', () => {
  const events = async () => {
    const tr = new Transcript(transcriptPath(TEAM, 'alice', fx.env))
    await tr.append(
      { kind: 'start', model: 'claude-haiku-4-5', mode: 'default', resume: false, pid: 4242 },
      { kind: 'state', state: 'idle' },
      { kind: 'message', message: { role: 'user', content: '<teammate-message teammate_id="team-lead">\nhi\n</teammate-message>' } },
      {
        kind: 'message',
        message: {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Reading.' },
            { type: 'tool_use', id: 't1', name: 'Read', input: { file_path: 'a.txt' } },
          ],
        },
      },
      { kind: 'usage', model: 'claude-haiku-4-5', inputTokens: 12, outputTokens: 3, cacheReadTokens: 4, cacheWriteTokens: 5 },
      { kind: 'tool', tool: 'Read', input: { file_path: 'a.txt' }, isError: true, output: 'File does not exist: a.txt', ms: 2 },
      { kind: 'message', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'nope', is_error: true }] } },
      { kind: 'error', errorType: 'overloaded_error', status: 529, requestId: 'req_9', message: 'Overloaded' },
      { kind: 'state', state: 'working', detail: 'task #3' },
    )
    return tr
  }

  it('prints a transcript readably, and as JSON lines with --json', async () => {
    await events()
    const plain = await swarm(['logs', TEAM, 'alice'])
    expect(plain.exitCode, plain.stderr).toBe(0)
    const lines = plain.stdout.split('\n')
    expect(plain.stdout).not.toContain('\x1b[')
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d start model claude-haiku-4-5, mode default \(pid 4242\)$/)
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d ● idle$/)
    expect(plain.stdout).toContain('user <teammate-message teammate_id="team-lead">')
    expect(plain.stdout).toContain('assistant Reading. [tool_use Read]')
    expect(plain.stdout).toContain('tokens: 12 in, 3 out, 4 cache read, 5 cache write')
    expect(plain.stdout).toMatch(/✗ Read \{"file_path":"a\.txt"\} 2 ms\n\s+File does not exist: a\.txt/)
    expect(plain.stdout).toContain('user [tool_result error]')
    expect(plain.stdout).toContain('error overloaded_error 529 req_9: Overloaded')
    expect(plain.stdout).toContain('● working — task #3')

    const json = await swarm(['logs', TEAM, 'alice', '--json'])
    expect(json.exitCode).toBe(0)
    const parsed = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(parsed.map((e) => e.kind)).toEqual(['start', 'state', 'message', 'message', 'usage', 'tool', 'message', 'error', 'state'])
    expect(parsed[7]).toMatchObject({ errorType: 'overloaded_error', status: 529, requestId: 'req_9' })
  })

  it('lines that are JSON but not events, or events of an unknown kind, do not break it', async () => {
    const tr = await events()
    await fs.appendFile(
      tr.file,
      '{"kind":"state","state":"no time"}\n42\nnull\n{"t":"2025-01-01T10:11:12.000Z","kind":"message"}\n{"t":"2025-01-01T10:11:12.000Z","kind":"compaction","tokens":9}\n',
    )
    const plain = await swarm(['logs', TEAM, 'alice'])
    expect(plain.exitCode, plain.stderr).toBe(0)
    expect(plain.stdout).not.toContain('undefined')
    expect(plain.stdout).toContain('10:11:12 compaction {"tokens":9}')
    expect(plain.stdout).not.toContain('no time')
  })

  it('--follow prints new events as they are appended', async () => {
    const tr = await events()
    const follower = spawn(process.execPath, [BIN, 'logs', TEAM, 'alice', '--follow'], { env: fx.env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    follower.stdout.on('data', (d) => (out += d))
    const exited = new Promise((r) => follower.on('exit', r))
    try {
      await waitFor('the existing events', () => out.includes('● working — task #3'), 10_000, { output: () => out })
      await tr.append({ kind: 'state', state: 'idle', detail: 'after follow' })
      await waitFor('the appended event', () => out.includes('● idle — after follow'), 10_000, { output: () => out })
    } finally {
      follower.kill('SIGINT')
      await exited
    }
  })

  it('an agent without a transcript, or not in the team → exit 3', async () => {
    const none = await swarm(['logs', TEAM, 'bob'])
    expect(none.exitCode).toBe(3)
    expect(none.stderr).toMatch(/bob has no transcript yet/)
    expect((await swarm(['logs', TEAM, 'mallory'])).exitCode).toBe(3)
    expect((await swarm(['logs', 'no-such-team', 'alice'])).exitCode).toBe(3)
  })
})
