import { describe, expect, it } from 'vitest'
import { parseClaudeVerifyKey, verifyClaudeLeadEntry } from '../../../src/trust/claude-scheme.js'
import { appendMessage, readInbox } from '../../../src/mailbox/inbox.js'
import { encodeStructured, parseStructured } from '../../../src/mailbox/messages.js'
import { loadLeadPrivateKey } from '../../../src/trust/keys.js'
import { claudeVerifyKeyFor } from '../../../src/trust/sign.js'
import { inboxPath } from '../../../src/home/paths.js'
import { answerRequest, listRequests } from '../../../src/permissions/requests/broker.js'
import { createTeam } from '../../../src/teams/team-store.js'
import { isolatedEnv, useTempDir } from '../../support/home.js'

let dir: string
let env: NodeJS.ProcessEnv
const TEAM = 'crew'

/** A permission_request as a Claude Code 2.1.332 teammate writes it into team-lead's inbox. */
function claudeRequest(from: string, id: string, agentId = from) {
  return {
    from,
    color: 'blue',
    text: encodeStructured({
      type: 'permission_request',
      request_id: id,
      agent_id: agentId,
      tool_name: 'Bash',
      tool_use_id: 'toolu_01',
      description: 'write ran',
      input: { command: 'echo ran > ran.txt', description: 'write ran' },
      permission_suggestions: [{ type: 'addDirectories', directories: ['/tmp/x'], destination: 'session' }],
    }),
  }
}

useTempDir('swarm-inboxreq-', async (d) => {
  dir = d
  env = isolatedEnv(dir, { CLAUDE_CONFIG_DIR: '' })
  await createTeam({ name: TEAM, cwd: dir, members: [{ name: 'cc' }, { name: 'bob' }] }, env)
})

describe("Claude Code teammates' permission requests join the broker's queue", () => {
  it("a request found only in team-lead's inbox is listed once, under its requester", async () => {
    await appendMessage(inboxPath(TEAM, 'team-lead', env), claudeRequest('cc', 'perm-1796116594867-704agc2'))
    const first = await listRequests(TEAM, { env })
    expect(first.requests).toEqual([
      expect.objectContaining({ id: 'perm-1796116594867-704agc2', agent: 'cc', toolName: 'Bash', summary: 'echo ran > ran.txt' }),
    ])
    expect((await listRequests(TEAM, { env })).requests).toHaveLength(1)
  })

  it('the answer goes back in the shape Claude Code acts on, signed in both schemes', async () => {
    await appendMessage(inboxPath(TEAM, 'team-lead', env), claudeRequest('cc', 'perm-1-a'))
    const result = await answerRequest(TEAM, 'perm-1-a', { kind: 'approve' }, { env })
    expect(result.delivered).toBe(true)
    const [entry] = await readInbox(inboxPath(TEAM, 'cc', env))
    expect(parseStructured(entry!.text)).toMatchObject({
      type: 'permission_response',
      request_id: 'perm-1-a',
      subtype: 'success',
      tool_use_id: 'toolu_01',
    })
    expect(entry!.leadSig).toBeDefined()
    const key = parseClaudeVerifyKey(claudeVerifyKeyFor(await loadLeadPrivateKey(TEAM, env), 'cc', Date.now()))
    expect(verifyClaudeLeadEntry(key, entry!)).toBe(true)
    // Answered: the inbox copy is not queued again.
    expect((await listRequests(TEAM, { env })).requests).toEqual([])
  })

  it('a denial carries the feedback as the error Claude Code shows its model', async () => {
    await appendMessage(inboxPath(TEAM, 'team-lead', env), claudeRequest('cc', 'perm-2-b'))
    await answerRequest(TEAM, 'perm-2-b', { kind: 'deny', feedback: 'not that one' }, { env })
    const [entry] = await readInbox(inboxPath(TEAM, 'cc', env))
    expect(parseStructured(entry!.text)).toMatchObject({
      type: 'permission_response',
      subtype: 'error',
      error: 'not that one',
      tool_use_id: 'toolu_01',
    })
  })

  it('a request naming another agent than its sender, or from a non-member, is not queued', async () => {
    await appendMessage(inboxPath(TEAM, 'team-lead', env), claudeRequest('cc', 'perm-3-c', 'bob'))
    await appendMessage(inboxPath(TEAM, 'team-lead', env), claudeRequest('mallory', 'perm-4-d'))
    await appendMessage(inboxPath(TEAM, 'team-lead', env), claudeRequest('cc', '../escape'))
    expect((await listRequests(TEAM, { env })).requests).toEqual([])
  })

  it('`name@team` in agent_id (older writers) still names the sender', async () => {
    await appendMessage(inboxPath(TEAM, 'team-lead', env), claudeRequest('cc', 'perm-5-e', `cc@${TEAM}`))
    expect((await listRequests(TEAM, { env })).requests.map((r) => r.agent)).toEqual(['cc'])
  })
})
