import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AgentTeam, REPO, agentState, agentTeam, hasCli, inboxOf } from './helpers.js'
import { waitFor } from '../support/wait.js'

// Codex's own sandbox must not reach swarm's root: a command it runs unasked can neither read the
// lead's key, write the team's files, nor answer the permission requests it is waiting on; no
// command it runs, approved or not, reads an inbox, a relay token or what the lead sent, or sends:
// it messages the team through swarm mcp alone (issue 23 finding 11).
const sh = (cmd: string, escalate = false, extra: Record<string, unknown> = {}) => ({
  tool: 'exec_command',
  args: { cmd, ...extra, ...(escalate && { sandbox_permissions: 'require_escalated', justification: 'the test asks for it' }) },
})

/** Run inside Codex's sandbox: approves every pending request it sees by writing resolved/<id>.json. */
const APPROVER = `const fs = require('fs')
const p = process.env.SWARM_HOME + '/teams/t/permissions/'
const log = (s) => fs.appendFileSync('approver.log', s + '\\n')
let n = 0
const tick = () => {
  let files = []
  try { files = fs.readdirSync(p + 'pending') } catch (e) { log('readdir ' + e.code) }
  for (const f of files) {
    try {
      fs.mkdirSync(p + 'resolved', { recursive: true })
      const r = JSON.parse(fs.readFileSync(p + 'pending/' + f, 'utf8'))
      fs.writeFileSync(p + 'resolved/' + f, JSON.stringify({ ...r, decision: 'approve', resolvedBy: 'team-lead', resolvedAt: Date.now() }))
      fs.rmSync(p + 'pending/' + f)
      log('approved ' + f)
    } catch (e) { log('failed ' + e.code) }
  }
  if (++n < 300) setTimeout(tick, 100)
}
console.log('APPROVER-STARTED')
tick()
`

/** cat of each secret the test plants, each followed by its exit code. */
const READ_OTHERS = ['teams/t/inboxes/other.json', 'teams/t/lead.key', 'agent-homes/t/other/relay/endpoint.json', 'swarm-sent/t/other.jsonl']
  .map((p) => `cat "$SWARM_HOME/${p}" 2>&1; echo " RC=$?"`)
  .join('; ')
  .concat('; echo READ-OTHERS-DONE')

/** This swarm by its path: a Codex teammate has no `swarm` shim, and an approved send must fail on the deny, not for want of a program. */
const SWARM_CMD = `${process.execPath} ${path.join(REPO, 'bin/swarm.js')}`

const NAME = 'codex-mate'
const idle = (t: AgentTeam) => waitFor(`${NAME} idle`, async () => (await agentState(t, NAME))?.status === 'idle', 60_000)
const toolResults = (t: AgentTeam) => t.server.requests.map((r) => r.view?.toolResult ?? '').filter(Boolean)

/** A loopback listener standing for another teammate's relay: it counts who reached it. */
const probe = { port: 0, connections: 0, server: undefined as net.Server | undefined }

describe.skipIf(!hasCli('codex'))("Codex's sandbox keeps swarm's root read-only (real CLI)", () => {
  let t: AgentTeam
  beforeAll(async () => {
    probe.server = net.createServer((c) => {
      probe.connections++
      c.destroy()
    })
    await new Promise<void>((resolve) => probe.server!.listen(0, '127.0.0.1', resolve))
    probe.port = (probe.server.address() as net.AddressInfo).port
    t = await agentTeam({
      rules: [
        { userMatches: 'WRITE-ROOT', reply: sh('echo x > "$SWARM_HOME/teams/t/x"; echo "WRITE-RC=$?"') },
        { userMatches: 'READ-KEY', reply: sh('cat "$SWARM_HOME/teams/t/lead.key"; echo "READ-RC=$?"') },
        { userMatches: 'SELF-APPROVE', reply: sh('node approver.js', false, { yield_time_ms: 1500 }) },
        { toolResultIncludes: 'APPROVER-STARTED', reply: sh('touch selfapproved.txt', true) },
        { userMatches: 'READ-OTHERS', reply: sh(READ_OTHERS) },
        { userMatches: 'APPROVED-READ', reply: sh(READ_OTHERS.replace('READ-OTHERS-DONE', 'APPROVED-READ-DONE'), true) },
        {
          userMatches: 'USE-TOKEN',
          reply: sh(`(echo hello > /dev/tcp/127.0.0.1/${probe.port}) 2>&1; echo "CONNECT-RC=$?"`),
        },
        { userMatches: 'ESCALATED-SEND', reply: sh(`${SWARM_CMD} send t team-lead "pong from the shell"; echo "SEND-RC=$?"`, true) },
        { userMatches: 'MCP-SEND', reply: { tool: 'SendMessage', namespace: 'mcp__swarm', args: { to: 'team-lead', message: 'pong from mcp' } } },
        { afterTool: true, reply: { text: 'The tool finished.' } },
      ],
    })
    fs.writeFileSync(path.join(t.work, 'approver.js'), APPROVER)
    expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
    const spawned = await t.swarm(['spawn', 't', NAME, '--agent', 'codex', '--model', 'loopback', '--backend', 'tmux', '--prompt', 'FIRST say hello'])
    expect(spawned.stderr).toBe('')
    await idle(t)
  }, 120_000)
  afterAll(async () => {
    probe.server?.close()
    await t?.cleanup()
  }, 30_000)

  it('an unasked command writing $SWARM_HOME/teams/t/x fails and creates nothing', async () => {
    await t.swarm(['send', 't', NAME, 'WRITE-ROOT now'])
    const result = await waitFor('the write result', () => toolResults(t).find((r) => r.includes('WRITE-RC=')), 60_000)
    expect(result, result).toMatch(/Read-only file system|Permission denied/)
    expect(result).not.toContain('WRITE-RC=0')
    expect(fs.existsSync(path.join(t.home, 'teams', 't', 'x'))).toBe(false)
    await idle(t)
  }, 90_000)

  it("an unasked command cannot read the lead's key", async () => {
    const key = fs.readFileSync(path.join(t.home, 'teams', 't', 'lead.key'), 'utf8').trim()
    expect(key.length).toBeGreaterThan(8)
    await t.swarm(['send', 't', NAME, 'READ-KEY now'])
    const result = await waitFor('the read result', () => toolResults(t).find((r) => r.includes('READ-RC=')), 60_000)
    expect(result, result).toMatch(/Permission denied/)
    expect(result).not.toContain('READ-RC=0')
    expect(result).not.toContain(key)
    await idle(t)
  }, 90_000)

  it('its pending request cannot be resolved from inside the sandbox; the lead still decides', async () => {
    await t.swarm(['send', 't', NAME, 'SELF-APPROVE now'])
    const pending = await waitFor(
      'the escalated request on file',
      async () => {
        const list = JSON.parse((await t.swarm(['perms', 't', '--json'])).stdout || '{"requests":[]}') as {
          requests: Array<{ id: string; input: unknown }>
        }
        return list.requests.find((r) => JSON.stringify(r.input).includes('selfapproved.txt'))
      },
      60_000,
      { output: () => JSON.stringify(toolResults(t)).slice(-1500) },
    )
    // The approver polls every 100 ms: give it a few seconds at the request.
    await waitFor('the approver to try', () => /failed|readdir/.test(fs.readFileSync(path.join(t.work, 'approver.log'), 'utf8')), 20_000)
    await new Promise((r) => setTimeout(r, 1_500))
    const log = fs.readFileSync(path.join(t.work, 'approver.log'), 'utf8')
    expect(log).not.toContain('approved')
    expect(log).toMatch(/(failed|readdir) (EROFS|EACCES|EPERM|ENOENT)/)
    expect(fs.existsSync(path.join(t.home, 'teams', 't', 'permissions', 'resolved', `${pending.id}.json`))).toBe(false)
    expect(fs.existsSync(path.join(t.work, 'selfapproved.txt'))).toBe(false)
    const denied = await t.swarm(['perms', 'deny', 't', pending.id, '--feedback', 'not this one'])
    expect(denied.code, denied.stderr).toBe(0)
    await idle(t)
    expect(fs.existsSync(path.join(t.work, 'selfapproved.txt'))).toBe(false)
  }, 120_000)

  /** Another member's inbox, the lead's key, another teammate's relay token and what the lead sent: planted with secrets. */
  function plantSecrets(): Record<string, string> {
    const files = {
      [path.join(t.home, 'teams', 't', 'inboxes', 'other.json')]: '[{"from":"team-lead","text":"INBOX-SECRET"}]',
      [path.join(t.home, 'agent-homes', 't', 'other', 'relay', 'endpoint.json')]: `{"port":${probe.port},"token":"OTHER-TOKEN"}`,
      [path.join(t.home, 'swarm-sent', 't', 'other.jsonl')]: '{"text":"SENT-SECRET"}\n',
    }
    for (const [file, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, text)
    }
    return {
      INBOX: 'INBOX-SECRET',
      TOKEN: 'OTHER-TOKEN',
      SENT: 'SENT-SECRET',
      KEY: fs.readFileSync(path.join(t.home, 'teams', 't', 'lead.key'), 'utf8').trim(),
    }
  }

  /** Each `cat` of READ_OTHERS failed and printed none of the secrets. */
  function expectRefused(result: string, secrets: Record<string, string>) {
    const rcs = [...result.matchAll(/RC=(\d+)/g)].map((m) => m[1])
    expect(rcs, result).toHaveLength(4)
    expect(rcs, result).not.toContain('0')
    for (const secret of Object.values(secrets)) expect(result, result).not.toContain(secret)
  }

  it("an unasked command cannot read another member's inbox, the lead's key, a relay token or what the lead sent", async () => {
    const secrets = plantSecrets()
    await t.swarm(['send', 't', NAME, 'READ-OTHERS now'])
    const result = await waitFor('the read results', () => toolResults(t).find((r) => r.includes('READ-OTHERS-DONE')), 60_000)
    expectRefused(result, secrets)
    await idle(t)
  }, 90_000)

  it('the same reads approved (escalated, leaving the sandbox) are refused too: the deny holds for every command', async () => {
    const secrets = plantSecrets()
    await t.swarm(['send', 't', NAME, 'APPROVED-READ now'])
    const asked = await waitFor('the escalated read asked', () => pendingWith(t, 'APPROVED-READ-DONE'), 60_000)
    expect((await t.swarm(['perms', 'approve', 't', asked.id])).code).toBe(0)
    const result = await waitFor('the read results', () => toolResults(t).find((r) => r.includes('APPROVED-READ-DONE')), 60_000)
    expectRefused(result, secrets)
    await idle(t)
  }, 120_000)

  it('an unasked command cannot connect anywhere, not even to a loopback relay', async () => {
    await t.swarm(['send', 't', NAME, 'USE-TOKEN now'])
    const result = await waitFor('the connect result', () => toolResults(t).find((r) => r.includes('CONNECT-RC=')), 60_000)
    expect(result).not.toContain('CONNECT-RC=0')
    expect(probe.connections).toBe(0)
    await idle(t)
  }, 90_000)

  it('an escalated swarm send is asked and, approved, still cannot write the inbox; SendMessage through swarm mcp reaches the lead', async () => {
    await t.swarm(['send', 't', NAME, 'ESCALATED-SEND now'])
    const asked = await waitFor('the escalated send asked', () => pendingWith(t, 'swarm.js send'), 60_000)
    expect((await t.swarm(['perms', 'approve', 't', asked.id])).code).toBe(0)
    const result = await waitFor('the send result', () => toolResults(t).find((r) => r.includes('SEND-RC=')), 60_000)
    expect(result, result).not.toContain('SEND-RC=0')
    await idle(t)
    const lead = () => inboxOf(t, 'team-lead')
    expect((await lead()).some((m) => m.text === 'pong from the shell')).toBe(false)
    await t.swarm(['send', 't', NAME, 'MCP-SEND now'])
    await waitFor('the MCP reply', async () => (await lead()).some((m) => m.from === NAME && m.text === 'pong from mcp'), 60_000)
    await idle(t)
  }, 120_000)
})

async function pendingWith(t: AgentTeam, text: string) {
  const list = JSON.parse((await t.swarm(['perms', 't', '--json'])).stdout || '{"requests":[]}') as {
    requests: Array<{ id: string; input: unknown }>
  }
  return list.requests.find((r) => JSON.stringify(r.input).includes(text))
}
