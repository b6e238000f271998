import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AgentTeam, agentState, agentTeam, deliveryMessages, hasCli, inboxOf, leftovers, panePids, waitFor, watchStates } from './helpers.js'

const ESCALATE = { sandbox_permissions: 'require_escalated', justification: 'the test asks for it' }

describe.skipIf(!hasCli('codex'))('Codex as a teammate (real CLI, loopback Responses API)', () => {
  let t: AgentTeam
  beforeAll(async () => {
    t = await agentTeam({
      rules: [
        { userMatches: 'RUN-APPROVE', reply: { tool: 'exec_command', args: { cmd: 'touch approved.txt', ...ESCALATE } } },
        { userMatches: 'RUN-DENY', reply: { tool: 'exec_command', args: { cmd: 'touch denied.txt', ...ESCALATE } } },
        { userMatches: 'REPLY-SHELL', reply: { tool: 'exec_command', args: { cmd: 'swarm send t team-lead "pong from the shell"' } } },
        { userMatches: 'REPLY-MCP', reply: { tool: 'SendMessage', namespace: 'mcp__swarm', args: { to: 'team-lead', message: 'pong from mcp' } } },
        { afterTool: true, reply: { text: 'The tool finished.' } },
      ],
    })
    expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
    const spawned = await t.swarm([
      'spawn',
      't',
      'cody',
      '--agent',
      'codex',
      '--model',
      'loopback',
      '--backend',
      'tmux',
      '--prompt',
      'FIRST-PROMPT say hello',
    ])
    expect(spawned.stderr).toBe('')
    await waitFor('cody idle after its first prompt', async () => (await agentState(t, 'cody'))?.status === 'idle', 60_000)
  }, 90_000)
  afterAll(async () => t?.cleanup(), 30_000)

  it('submits 20 messages (multi-line, /- and @-leading, 10 kB, unicode) each exactly once, as one prompt per idle turn', async () => {
    expect(t.server.submissionsOf('FIRST-PROMPT')).toHaveLength(1)
    const states = watchStates(t, 'cody')
    const messages = deliveryMessages('cx')
    for (const m of messages) expect((await t.swarm(['send', 't', 'cody', m, '--from', 'team-lead'])).code).toBe(0)
    for (let k = 0; k < messages.length; k++) {
      await waitFor(`message ${k} submitted`, () => t.server.submissionsOf(`m${k}-cx`).length > 0, 60_000)
    }
    await waitFor(
      'cody idle again',
      async () => (await agentState(t, 'cody'))?.status === 'idle' && (await inboxOf(t, 'cody')).every((m) => (m as { read?: boolean }).read),
      60_000,
    )
    states.stop()
    for (let k = 0; k < messages.length; k++) {
      const subs = t.server.submissionsOf(`m${k}-cx`)
      expect(subs, `message ${k}`).toHaveLength(1)
      // Intact: every line of the message is in the submitted prompt, with its sender named.
      for (const line of messages[k].split('\n')) expect(subs[0].view?.lastUser).toContain(line)
      expect(subs[0].view?.lastUser).toContain('[message from team-lead]')
    }
    // working while a turn runs, idle after it: seen within a second of the model request / reply.
    const turns = t.server.requests.filter((r) => !r.aux && r.view?.lastUser?.includes('-cx'))
    const working = states.changes.filter((c) => c.status === 'working')
    expect(working.length).toBeGreaterThan(0)
    for (const r of turns) {
      const seen = states.changes.find((c) => c.status === 'working' && c.at >= r.receivedAt - 1_000)
      expect(seen && seen.at - r.receivedAt).toBeLessThan(1_000)
    }
  }, 180_000)

  it('bubbles a shell command that leaves the sandbox to swarm perms: approve runs it, deny does not', async () => {
    for (const [word, decision, file] of [
      ['RUN-APPROVE', 'approve', 'approved.txt'],
      ['RUN-DENY', 'deny', 'denied.txt'],
    ] as const) {
      await t.swarm(['send', 't', 'cody', `${word} please`])
      const pending = await waitFor(
        `a pending request (${word})`,
        async () => {
          const r = await t.swarm(['perms', 't', '--json'])
          const list = JSON.parse(r.stdout || '{"requests":[]}') as { requests: Array<{ id: string; agent: string; input: Record<string, unknown> }> }
          return list.requests.find((p) => p.agent === 'cody')
        },
        60_000,
      )
      expect(JSON.stringify(pending.input)).toContain(file === 'approved.txt' ? 'touch approved.txt' : 'touch denied.txt')
      expect((await agentState(t, 'cody'))?.status).toBe('waiting')
      const answered = await t.swarm(['perms', decision, 't', pending.id, ...(decision === 'deny' ? ['--feedback', 'not this one'] : [])])
      expect(answered.code, answered.stderr).toBe(0)
      await waitFor(`cody idle after ${word}`, async () => (await agentState(t, 'cody'))?.status === 'idle', 60_000)
    }
    expect(fs.existsSync(path.join(t.work, 'approved.txt'))).toBe(true)
    expect(fs.existsSync(path.join(t.work, 'denied.txt'))).toBe(false)
  }, 180_000)

  it('replies to the lead through swarm send from its shell and through swarm mcp', async () => {
    await t.swarm(['send', 't', 'cody', 'REPLY-SHELL now'])
    await waitFor(
      'the shell reply',
      async () => (await inboxOf(t, 'team-lead')).some((m) => m.from === 'cody' && m.text === 'pong from the shell'),
      60_000,
    )
    await waitFor('cody idle', async () => (await agentState(t, 'cody'))?.status === 'idle', 60_000)
    await t.swarm(['send', 't', 'cody', 'REPLY-MCP now'])
    await waitFor('the MCP reply', async () => (await inboxOf(t, 'team-lead')).some((m) => m.from === 'cody' && m.text === 'pong from mcp'), 60_000)
    // One idle notification per transition, with the last assistant text as its summary.
    const idles = (await inboxOf(t, 'team-lead')).filter((m) => m.from === 'cody' && m.text.includes('idle_notification'))
    expect(idles.length).toBeGreaterThan(3)
    expect(idles.some((m) => m.text.includes('The tool finished.'))).toBe(true)
  }, 120_000)

  it('team delete asks it to quit its own way and leaves no process behind', async () => {
    const sids = await panePids(t.env, t.socket)
    const deleted = await t.swarm(['team', 'delete', 't'])
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(await leftovers(sids)).toEqual([])
  }, 60_000)
})
