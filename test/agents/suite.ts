import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { builtInAdapter } from '../../src/adapters/registry.js'
import type { AgentReply, AgentRule } from '../../src/loopback-model/agent-script.js'
import {
  type AgentTeam,
  REPO,
  agentState,
  hookLog,
  agentTeam,
  deliveryMessages,
  hasCli,
  inboxOf,
  leftovers,
  panePids,
  watchStates,
} from './helpers.js'
import { waitFor } from '../support/wait.js'

/** What differs between CLIs: how the scripted model calls their shell and their MCP tools. */
export interface AgentCliCase {
  kind: string
  bin: string
  /** `--agent` value (a built-in kind, or a user-defined one written by `setup`). */
  agent?: string
  model: string
  /** A shell tool call running `cmd` (that asks permission where the CLI asks for it). */
  shell(cmd: string, escalate: boolean): AgentReply
  /** The swarm MCP SendMessage call; undefined for a CLI without MCP. */
  mcpSend?: (message: string) => AgentReply
  /**
   * How long before its turn's model request a CLI may already say `working` (default: within 1 s
   * either side). opencode turns busy when the prompt is submitted and sends its model request
   * later — seconds later on a loaded machine — so its state is early, never late.
   */
  workingLeadMs?: number
  /** Writes files the case needs before the team starts (a user-defined adapter). */
  setup?: (t: AgentTeam) => Promise<void>
  /**
   * False for a CLI with its own sandbox (Codex: an approved escalated command leaves it); else
   * the whole CLI runs in swarm's, where even an approved command finds the team's files hidden.
   */
  inSwarmSandbox?: boolean
}

/**
 * The approved command: it also looks into the team's directory — spelled without `$(…)`, which
 * Gemini CLI refuses, and without the control plane's path, which string checks would stop first.
 */
const SWARM_CMD = `${process.execPath} ${path.join(REPO, 'bin/swarm.js')}`

const APPROVED = "touch approved.txt && printenv SWARM_HOME | sed 's,$,/teams/t,' | xargs ls > seen.txt 2>&1; true"

async function pendingFor(t: AgentTeam, name: string) {
  const r = await t.swarm(['perms', 't', '--json'])
  const list = JSON.parse(r.stdout || '{"requests":[]}') as { requests: Array<{ id: string; agent: string; input: Record<string, unknown> }> }
  return list.requests.find((p) => p.agent === name)
}

const idle = (t: AgentTeam, name: string) => waitFor(`${name} idle`, async () => (await agentState(t, name))?.status === 'idle', 60_000)

/** The issue's checks for one CLI, run against the real CLI in a real tmux pane. */
export function describeAgentCli(c: AgentCliCase): void {
  const name = `${c.kind}-mate`
  // A CLI whose adapter talks to the team through swarm mcp alone (Codex): its shell cannot send, approved or not.
  const mcpOnly = builtInAdapter(c.agent ?? c.kind)?.teamChannel === 'mcp'
  describe.skipIf(!hasCli(c.bin))(`${c.kind} as a teammate (real CLI, loopback model server)`, () => {
    let t: AgentTeam
    beforeAll(async () => {
      const rules: AgentRule[] = [
        { userMatches: 'RUN-APPROVE', reply: c.shell(APPROVED, true) },
        { userMatches: 'RUN-DENY', reply: c.shell('touch denied.txt', true) },
        // Escalated: swarm's root is not writable inside a CLI's own sandbox (Codex), so this is asked. This swarm by
        // its path: a CLI talking through swarm mcp alone (Codex) has no `swarm` shim, and its approved send must fail on the deny.
        { userMatches: 'REPLY-SHELL', reply: c.shell(`${mcpOnly ? SWARM_CMD : 'swarm'} send t team-lead "pong from the shell"`, true) },
        ...(c.mcpSend ? [{ userMatches: 'REPLY-MCP', reply: c.mcpSend('pong from mcp') }] : []),
        { afterTool: true, reply: { text: 'The tool finished.' } },
      ]
      t = await agentTeam({ rules })
      await c.setup?.(t)
      expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
      const spawned = await t.swarm([
        'spawn',
        't',
        name,
        '--agent',
        c.agent ?? c.kind,
        '--model',
        c.model,
        '--backend',
        'tmux',
        '--prompt',
        'FIRST-PROMPT say hello',
      ])
      expect(spawned.stderr).toBe('')
      await idle(t, name)
    }, 90_000)
    afterAll(async () => t?.cleanup(), 30_000)

    it('submits 20 messages (multi-line, /- and @-leading, 10 kB, unicode) each exactly once; states seen within 1 s', async () => {
      expect(t.server.submissionsOf('FIRST-PROMPT')).toHaveLength(1)
      const states = watchStates(t, name)
      const messages = deliveryMessages(c.kind)
      for (const m of messages) expect((await t.swarm(['send', 't', name, m, '--from', 'team-lead'])).code).toBe(0)
      for (let k = 0; k < messages.length; k++)
        await waitFor(`message ${k} submitted`, () => t.server.submissionsOf(`m${k}-${c.kind}`).length > 0, 60_000)
      await waitFor(
        `${name} idle with every message read`,
        async () => (await agentState(t, name))?.status === 'idle' && (await inboxOf(t, name)).every((m) => (m as { read?: boolean }).read),
        60_000,
      )
      states.stop()
      for (let k = 0; k < messages.length; k++) {
        const subs = t.server.submissionsOf(`m${k}-${c.kind}`)
        expect(subs, `message ${k}`).toHaveLength(1)
        for (const line of messages[k].split('\n')) expect(subs[0].view?.lastUser).toContain(line)
        expect(subs[0].view?.lastUser).toContain('[message from team-lead]')
      }
      // The state file is written by the hooks: each turn's `working` (prompt-submit) and `idle` (stop)
      // are recorded within a second of the model request that started and the reply that ended it.
      const turns = t.server.requests.filter((r) => !r.aux && r.view?.lastUser?.includes(`-${c.kind}`))
      expect(turns.length).toBeGreaterThan(0)
      // The stop hook logs just after it writes `idle`, which the wait above may have seen first.
      const log = await waitFor(
        'a stop logged after every turn',
        async () => {
          const l = await hookLog(t, name)
          return turns.every((r) => l.some((e) => e.event === 'stop' && e.at >= r.receivedAt)) && l
        },
        5_000,
      )
      for (const r of turns) {
        const lead = c.workingLeadMs
        const submit =
          lead === undefined
            ? log.find((e) => e.event === 'prompt-submit' && Math.abs(e.at - r.receivedAt) < 1_000)
            : [...log].reverse().find((e) => e.event === 'prompt-submit' && e.at - r.receivedAt < 1_000 && r.receivedAt - e.at < lead)
        expect(submit, 'working within 1 s of the turn').toBeDefined()
        const stop = log.find((e) => e.event === 'stop' && e.at >= r.receivedAt)
        expect(stop && stop.at - r.receivedAt, 'idle within 1 s of the reply').toBeLessThan(1_000)
      }
      expect(states.changes.some((s) => s.status === 'working')).toBe(true)
    }, 180_000)

    it('bubbles a shell command to swarm perms: approve runs it, deny does not', async () => {
      for (const [word, decision] of [
        ['RUN-APPROVE', 'approve'],
        ['RUN-DENY', 'deny'],
      ] as const) {
        await t.swarm(['send', 't', name, `${word} please`])
        const pending = await waitFor(`a pending request (${word})`, () => pendingFor(t, name), 60_000)
        expect(JSON.stringify(pending.input)).toContain(decision === 'approve' ? 'touch approved.txt' : 'touch denied.txt')
        expect((await agentState(t, name))?.status).toBe('waiting')
        const answered = await t.swarm(['perms', decision, 't', pending.id, ...(decision === 'deny' ? ['--feedback', 'not this one'] : [])])
        expect(answered.code, answered.stderr).toBe(0)
        await idle(t, name)
      }
      expect(fs.existsSync(path.join(t.work, 'approved.txt'))).toBe(true)
      expect(fs.existsSync(path.join(t.work, 'denied.txt'))).toBe(false)
      // What the approved command saw of the team's directory: nothing inside swarm's sandbox.
      const seen = fs.readFileSync(path.join(t.work, 'seen.txt'), 'utf8')
      if (c.inSwarmSandbox === false) expect(seen).toContain('config.json')
      else expect(seen).toMatch(/No such file or directory/)
    }, 180_000)

    it(`replies to the lead ${mcpOnly ? 'through swarm mcp only: an approved swarm send from its shell does not arrive' : `through swarm send from its shell${c.mcpSend ? ' and through swarm mcp' : ''}`}`, async () => {
      const results = () => t.server.requests.filter((r) => r.view?.toolResult !== undefined).length
      const before = results()
      await t.swarm(['send', 't', name, 'REPLY-SHELL now'])
      let approvedShell = false
      await waitFor(
        'the shell reply',
        async () => {
          // A CLI that asks before every shell command asks here too: approved, as a user would.
          const p = await pendingFor(t, name)
          if (p) approvedShell = (await t.swarm(['perms', 'approve', 't', p.id])).code === 0 || approvedShell
          const arrived = (await inboxOf(t, 'team-lead')).some((m) => m.from === name && m.text === 'pong from the shell')
          // mcp only: the approved command ran (its result went to the model) and the turn ended, with nothing sent.
          return mcpOnly ? approvedShell && results() > before && (await agentState(t, name))?.status === 'idle' : arrived
        },
        60_000,
        { intervalMs: 200 },
      )
      await idle(t, name)
      const shellArrived = (await inboxOf(t, 'team-lead')).some((m) => m.from === name && m.text === 'pong from the shell')
      expect(shellArrived).toBe(!mcpOnly)
      if (c.mcpSend) {
        await t.swarm(['send', 't', name, 'REPLY-MCP now'])
        await waitFor('the MCP reply', async () => (await inboxOf(t, 'team-lead')).some((m) => m.from === name && m.text === 'pong from mcp'), 60_000)
        await idle(t, name)
      }
      const idles = (await inboxOf(t, 'team-lead')).filter((m) => m.from === name && m.text.includes('idle_notification'))
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
}
