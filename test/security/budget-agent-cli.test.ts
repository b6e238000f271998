import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { type AgentTeam, agentTeam } from '../agents/helpers.js'
import { type LoopbackServer, startLoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { readMemberState } from '../../src/store/member-state.js'
import { waitFor } from '../support/wait.js'
import { bashCliAdapter, writeProjectAdapter } from '../support/bash-cli.js'

/**
 * An agent-CLI teammate's model requests count against its budgets (issue 23, finding 8): a "CLI"
 * (a shell script through a user-defined adapter that declares its model route, run in swarm's
 * sandbox by its real pane wrapper) sends Anthropic Messages requests, streamed and not, to where
 * its environment points it — the metering proxy — which forwards them to a loopback Messages API
 * until the member's (or the team's) budget is spent, then refuses them in the API's own error shape.
 */
const REQUESTS = 5
const CLI = `
out="$PWD/meter.out"
echo "key $ANTHROPIC_API_KEY" >> "$out"
# Another teammate's path (a wrong token) on the same proxy.
other="\${ANTHROPIC_BASE_URL%/*}/0123456789abcdef0123456789abcdef0123456789abcdef"
echo "other $(curl -s -o /dev/null -w '%{http_code}' -H 'content-type: application/json' -d '{}' "$other/v1/messages")" >> "$out"
for i in $(seq 1 ${REQUESTS}); do
  if [ $((i % 2)) = 1 ]; then stream=true; else stream=false; fi
  code=$(curl -sS -N -o "$PWD/body$i" -w '%{http_code}' -H "x-api-key: $ANTHROPIC_API_KEY" -H 'anthropic-version: 2023-06-01' \\
    -H 'content-type: application/json' \\
    -d "{\\"model\\":\\"claude-sonnet-4-5\\",\\"max_tokens\\":64,\\"stream\\":$stream,\\"messages\\":[{\\"role\\":\\"user\\",\\"content\\":\\"request $i\\"}]}" \\
    "$ANTHROPIC_BASE_URL/v1/messages")
  echo "request $i $code" >> "$out"
done
echo done >> "$out"
# One more once the test says its budget was raised.
while [ ! -e "$PWD/go" ]; do sleep 0.1; done
echo "after-raise $(curl -s -o /dev/null -w '%{http_code}' -H "x-api-key: $ANTHROPIC_API_KEY" -H 'content-type: application/json' \
  -d '{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"request after"}]}' "$ANTHROPIC_BASE_URL/v1/messages")" >> "$out"
exec sleep 600
`

const ADAPTER = [
  bashCliAdapter(CLI).trimEnd(),
  'providerEnv: [ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL]',
  'modelRoute: { api: anthropic-messages, baseUrlEnv: ANTHROPIC_BASE_URL, defaultBaseUrl: "https://api.anthropic.com", keyEnv: ANTHROPIC_API_KEY }',
  '',
].join('\n')

/** Each answer: 100k input and 1000 output tokens of Sonnet, $0.315 at list prices. */
const COST_PER_REQUEST = 0.315
const SECRET = 'sk-ant-the-real-key-the-cli-never-sees'

async function run(t: AgentTeam, api: LoopbackServer, budget: { member?: string; team?: string }): Promise<string[]> {
  t.env.ANTHROPIC_BASE_URL = api.url
  t.env.ANTHROPIC_API_KEY = SECRET
  await writeProjectAdapter(t.work, 'meter', ADAPTER)
  const created = await t.swarm(['team', 'create', 't', '--no-start', ...(budget.team ? ['--team-max-cost', budget.team] : [])])
  expect(created.code, created.stderr).toBe(0)
  const spawned = await t.swarm([
    'spawn',
    't',
    'fay',
    '--agent',
    'meter',
    '--backend',
    'tmux',
    ...(budget.member ? ['--max-cost', budget.member] : []),
  ])
  expect(spawned.code, spawned.stderr).toBe(0)
  const out = path.join(t.work, 'meter.out')
  await waitFor('the CLI to send its requests', async () => (await fs.readFile(out, 'utf8').catch(() => '')).includes('done'), 60_000)
  return (await fs.readFile(out, 'utf8')).split('\n').filter(Boolean)
}

const servers: LoopbackServer[] = []

describe("an agent-CLI teammate's model requests", () => {
  let t: AgentTeam
  afterEach(async () => {
    await t?.cleanup()
    for (const s of servers.splice(0)) await s.close()
  }, 30_000)

  async function anthropic(): Promise<LoopbackServer> {
    const s = await startLoopbackServer({
      scenario: { rules: [{ when: { lastUserIncludes: 'request' }, text: 'ok', usage: { input_tokens: 100_000, output_tokens: 1000 } }] },
    })
    servers.push(s)
    return s
  }

  it('are counted in its state.json, refused past --max-cost until `swarm budget` raises it, the key kept out of its environment', async () => {
    t = await agentTeam()
    const api = await anthropic()
    const lines = await run(t, api, { member: '0.5' })
    // Two requests fit under $0.50 ($0.315 after the first); every one after is refused, as the API would.
    expect(lines.filter((l) => l.startsWith('request '))).toEqual([
      'request 1 200',
      'request 2 200',
      'request 3 400',
      'request 4 400',
      'request 5 400',
    ])
    const refusal = JSON.parse(await fs.readFile(path.join(t.work, 'body3'), 'utf8')) as { type: string; error: { type: string; message: string } }
    expect(refusal.type).toBe('error')
    expect(refusal.error.type).toBe('invalid_request_error')
    expect(refusal.error.message).toContain('budget_exhausted: fay spent $0.6300 of $0.5000 (its budget)')
    expect(await fs.readFile(path.join(t.work, 'body1'), 'utf8')).toContain('event: message_delta')
    // Only what was forwarded reached the API, with the real key the CLI never held.
    const messages = api.requests.filter((r) => r.path === '/v1/messages')
    expect(messages).toHaveLength(2)
    expect(messages.map((r) => r.headers['x-api-key'])).toEqual([SECRET, SECRET])
    const key = lines.find((l) => l.startsWith('key '))!
    expect(key).toMatch(/^key swarm-meter-[0-9a-f]{24}$/)
    // Another teammate's token does not spend through this proxy.
    expect(lines).toContain('other 404')
    const state = await readMemberState('t', 'fay', t.env)
    expect(state?.costUsd).toBeCloseTo(2 * COST_PER_REQUEST, 6)
    expect(state?.usage).toMatchObject({ inputTokens: 200_000, outputTokens: 2000 })
    expect(state?.budget).toEqual({ maxCostUsd: 0.5 })
    expect(state?.detail).toContain('budget_exhausted')
    // `swarm budget` raises its team entry's limit: the next request is forwarded again, and counted.
    expect((await t.swarm(['budget', 't', 'fay', '--add', '0.5'])).code).toBe(0)
    await fs.writeFile(path.join(t.work, 'go'), '')
    const out = path.join(t.work, 'meter.out')
    await waitFor('the request after the raise', async () => (await fs.readFile(out, 'utf8')).includes('after-raise'), 30_000)
    expect(await fs.readFile(out, 'utf8')).toContain('after-raise 200')
    await waitFor('its spend counted', async () => ((await readMemberState('t', 'fay', t.env))?.costUsd ?? 0) > 0.9, 10_000)
    expect((await readMemberState('t', 'fay', t.env))?.detail).toBeUndefined()
  }, 120_000)

  it("are refused once the team's budget (--team-max-cost) is spent", async () => {
    t = await agentTeam()
    const api = await anthropic()
    const lines = await run(t, api, { team: '0.7' })
    // $0.315, $0.63 are under $0.70; $0.945 is not: the fourth request is refused.
    expect(lines.filter((l) => l.startsWith('request '))).toEqual([
      'request 1 200',
      'request 2 200',
      'request 3 200',
      'request 4 400',
      'request 5 400',
    ])
    expect(JSON.parse(await fs.readFile(path.join(t.work, 'body4'), 'utf8'))).toMatchObject({
      error: { message: expect.stringContaining("(the team's budget)") as unknown },
    })
    expect(api.requests.filter((r) => r.path === '/v1/messages')).toHaveLength(3)
    expect((await readMemberState('t', 'fay', t.env))?.costUsd).toBeCloseTo(3 * COST_PER_REQUEST, 6)
  }, 120_000)
})
