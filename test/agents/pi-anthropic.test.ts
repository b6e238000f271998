import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LoopbackServer, startLoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { lastUserMessage } from '../../src/loopback-model/script-player.js'
import { type AgentTeam, agentState, agentTeam, hasCli, leftovers, panePids, waitFor } from './helpers.js'

const NAME = 'pi-claude'

/** Requests whose last user message is a submitted prompt containing `needle` (not a tool result). */
function submissions(server: LoopbackServer, needle: string) {
  return server.requests.filter((r) => {
    if (!r.body || !r.path.endsWith('/messages')) return false
    const last = lastUserMessage(r.body as never)
    return last.toolResults.length === 0 && last.text.includes(needle)
  })
}

/** pi configured for Anthropic Messages (ANTHROPIC_BASE_URL, no OPENAI_BASE_URL) against swarm's loopback Messages server. */
describe.skipIf(!hasCli('pi'))('pi over the Anthropic Messages API (real CLI, loopback Messages server)', () => {
  let t: AgentTeam
  let messages: LoopbackServer
  const idle = () => waitFor(`${NAME} idle`, async () => (await agentState(t, NAME))?.status === 'idle', 60_000)
  beforeAll(async () => {
    t = await agentTeam()
    messages = await startLoopbackServer({
      scenario: {
        rules: [
          {
            when: { lastUserIncludes: 'PI-RUN' },
            times: 1,
            content: [{ type: 'tool_use', name: 'bash', input: { command: 'touch ran-by-pi.txt' } }],
          },
        ],
        fallback: { text: 'Noted.' },
      },
    })
    delete t.env.OPENAI_BASE_URL
    Object.assign(t.env, { ANTHROPIC_BASE_URL: messages.url, ANTHROPIC_API_KEY: 'sk-pi-anthropic-loopback' })
    expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
    const r = await t.swarm([
      'spawn',
      't',
      NAME,
      '--agent',
      'pi',
      '--model',
      'claude-loopback',
      '--backend',
      'tmux',
      '--prompt',
      'FIRST-PROMPT say hello',
    ])
    expect(r.stderr).toBe('')
    await idle()
  }, 90_000)
  afterAll(async () => {
    await t?.cleanup()
    await messages?.close()
  }, 30_000)

  it('writes an anthropic-messages provider and streams from /v1/messages', async () => {
    const models = JSON.parse(fs.readFileSync(path.join(t.home, 'agent-homes', 't', NAME, 'models.json'), 'utf8'))
    expect(models.providers['swarm-anthropic']).toMatchObject({ api: 'anthropic-messages', baseUrl: messages.url })
    const first = submissions(messages, 'FIRST-PROMPT')
    expect(first).toHaveLength(1)
    expect(first[0].path).toBe('/v1/messages')
    expect(first[0].stream).toBe(true)
    expect(first[0].headers['x-api-key']).toBe('sk-pi-anthropic-loopback')
    expect((first[0].body as { model?: string }).model).toBe('claude-loopback')
  })

  it('a message is submitted exactly once, multi-line and unicode intact', async () => {
    const text = 'PI-MSG-1 first line ünïcødé 日本語\nsecond line'
    expect((await t.swarm(['send', 't', NAME, text])).code).toBe(0)
    await waitFor('the message submitted', () => submissions(messages, 'PI-MSG-1').length > 0, 60_000)
    await idle()
    const subs = submissions(messages, 'PI-MSG-1')
    expect(subs).toHaveLength(1)
    const last = lastUserMessage(subs[0].body as never).text
    expect(last).toContain('[message from team-lead]')
    for (const line of text.split('\n')) expect(last).toContain(line)
  }, 90_000)

  it('its bash call is bubbled to swarm perms, and runs once approved', async () => {
    expect((await t.swarm(['send', 't', NAME, 'PI-RUN now'])).code).toBe(0)
    const pending = await waitFor(
      'the bash request',
      async () => {
        const list = JSON.parse((await t.swarm(['perms', 't', '--json'])).stdout || '{"requests":[]}') as {
          requests: Array<{ id: string; agent: string; toolName: string; input: Record<string, unknown> }>
        }
        return list.requests.find((p) => p.agent === NAME)
      },
      60_000,
    )
    expect(pending.input).toMatchObject({ command: 'touch ran-by-pi.txt' })
    expect((await agentState(t, NAME))?.status).toBe('waiting')
    expect(fs.existsSync(path.join(t.work, 'ran-by-pi.txt'))).toBe(false)
    expect((await t.swarm(['perms', 'approve', 't', pending.id])).code).toBe(0)
    await waitFor('the command ran', () => fs.existsSync(path.join(t.work, 'ran-by-pi.txt')), 30_000)
    await idle()
    // The tool result went back to the model over the same API.
    expect(messages.requests.some((r) => r.body && lastUserMessage(r.body as never).toolResults.length > 0)).toBe(true)
  }, 90_000)

  it('team delete leaves no process behind', async () => {
    const sids = await panePids(t.env, t.socket)
    const r = await t.swarm(['team', 'delete', 't'])
    expect(r.code, r.stderr).toBe(0)
    expect(await leftovers(sids)).toEqual([])
  }, 60_000)
})
