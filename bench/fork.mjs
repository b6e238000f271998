#!/usr/bin/env node
// bench:fork — what 5 workers cost, started as forks of the lead vs started fresh, in one run on
// the honest loopback model (its prompt cache follows Anthropic's rules). Every request of the
// run is counted (the lead's and each worker's, not only first ones). Prints one JSON object as
// its last line (progress on stderr) with its target; exits 1 when it is missed.
//
// Both runs: the lead reads the same ~60 KB file (a tool result of ~15k tokens), then starts 5
// workers in one turn, each to check one part of it.
// forks:  Agent without subagent_type (SWARM_FORK_SUBAGENT=1): each worker's first request is the
//         lead's conversation byte for byte + placeholders + its directive.
// fresh:  Agent with subagent_type general-purpose, each prompt self-contained (the workers cannot
//         see the lead's conversation, so the file is in the prompt) — the baseline.
// Cost in input-token units: input + 1.25 × cache writes (5 m) + 0.1 × cache reads. A fresh
// worker writes cache it may never read again (one request each): the goal is judged against a
// fresh side whose writes all cost plain input (1 ×), the cheapest it could be — the ratio as
// measured is reported beside it. Ratio = forks / fresh (goal ≤ 0.3).
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const dist = (m) => import(path.join(root, 'dist', m))
const { startLoopbackServer } = await dist('loopback-model/loopback-server.js')
const { createTeam } = await dist('teams/team-store.js')
const { ensureTeamKeys } = await dist('trust/keys.js')
const { assembleAgent } = await dist('agent/start.js')
const { createOutput } = await dist('agent/render.js')
const { createLeadDelegation } = await dist('agent/subagents/lead-session.js')
const { allowAll } = await dist('agent/tool.js')
const { createModelClient } = await dist('agent/client.js')

const WORKERS = 5
const LEAD = 'team-lead'
const log = (s) => process.stderr.write(`bench:fork: ${s}\n`)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-bench-fork-')))
const notes = Array.from({ length: 1200 }, (_, i) => `line ${i}: measurement ${((i * 7919) % 1000) / 10} of part ${1 + Math.floor(i / 240)}`).join(
  '\n',
)
const directive = (n) => `Check part ${n} of notes.md: list every measurement of part ${n} above 90.`

function scenario(mode) {
  const calls = Array.from({ length: WORKERS }, (_, i) => ({
    type: 'tool_use',
    name: 'Agent',
    input:
      mode === 'fork'
        ? { description: `check part ${i + 1}`, prompt: directive(i + 1) }
        : { description: `check part ${i + 1}`, prompt: `${directive(i + 1)}\n\nThe file notes.md:\n${notes}`, subagent_type: 'general-purpose' },
  }))
  const agents = {
    [LEAD]: [
      { when: { lastUserIncludes: 'check the notes' }, content: [{ type: 'tool_use', name: 'Read', input: { file_path: 'notes.md' } }] },
      { content: [{ type: 'text', text: `Starting ${WORKERS} workers.` }, ...calls] },
      { text: 'Workers running.' },
    ],
  }
  const label = mode === 'fork' ? 'fork' : 'general-purpose'
  for (let i = 1; i <= WORKERS; i++) agents[`${LEAD}/${label}-${i}`] = { rules: [{ when: {}, text: `Part ${i}: done.` }] }
  return { agents, fallback: { text: 'Noted.' } }
}

async function run(mode, server) {
  server.setScenario(scenario(mode))
  const home = path.join(base, mode, 'home')
  const cwd = path.join(base, mode, 'project')
  await fs.mkdir(home, { recursive: true })
  await fs.mkdir(cwd, { recursive: true })
  await fs.writeFile(path.join(cwd, 'notes.md'), notes)
  const env = {
    ...process.env,
    HOME: path.join(base, mode, 'user-home'),
    SWARM_HOME: home,
    CLAUDE_CONFIG_DIR: '',
    NO_COLOR: '1',
    ANTHROPIC_API_KEY: 'test',
    ANTHROPIC_BASE_URL: server.url,
  }
  await fs.mkdir(env.HOME, { recursive: true })
  for (const k of ['SWARM_LEAD_VERIFY_KEY', 'ANTHROPIC_AUTH_TOKEN', 'SWARM_SUBAGENT_MODEL', 'SWARM_SUBAGENT_MODEL_FORCE', 'DISABLE_PROMPT_CACHING'])
    delete env[k]
  if (mode === 'fork') env.SWARM_FORK_SUBAGENT = '1'
  else delete env.SWARM_FORK_SUBAGENT
  const team = `bench-${mode}`
  await createTeam({ name: team, cwd, members: [] }, env)
  await ensureTeamKeys(team, env)
  const client = createModelClient(env)
  const sink = new PassThrough().resume()
  let lead
  const { delegation, tools } = await createLeadDelegation(
    { team, parent: LEAD, cwd, env, client, checkPermission: allowAll, deliver: (t) => lead?.notify(t) },
    { spawnTeammate: async () => 'no teammates here', stopTeammate: async () => 'no teammates here' },
  )
  const abort = new AbortController()
  ;({ runtime: lead } = await assembleAgent({
    team,
    name: LEAD,
    env,
    client,
    output: createOutput({ stream: sink, color: false }),
    signal: abort.signal,
    extraTools: tools,
    runtime: { external: true, autoClaimTasks: false },
  }))
  const done = lead.run()
  const start = server.requests.length
  lead.say('check the notes')
  const label = mode === 'fork' ? 'fork' : 'general-purpose'
  const ours = () => server.requests.slice(start).filter((r) => String(r.headers['x-swarm-agent'] ?? '').startsWith(LEAD))
  const workerOf = (r) => String(r.headers['x-swarm-agent']).slice(`${LEAD}/${label}-`.length)
  const isWorker = (r) => String(r.headers['x-swarm-agent']).startsWith(`${LEAD}/${label}-`)
  const deadline = Date.now() + 60_000
  const started = () => new Set(ours().filter(isWorker).map(workerOf)).size
  while (started() < WORKERS && Date.now() < deadline) await sleep(20)
  if (started() < WORKERS) throw new Error(`${mode}: not every worker reached the model within 60 s`)
  // Every request counts: wait until the run is quiet (the workers done, their notifications taken by the lead).
  for (let seen = -1; seen !== ours().length && Date.now() < deadline; ) {
    seen = ours().length
    await sleep(1000)
  }
  abort.abort()
  await done
  await delegation.close()
  const requests = ours().filter((r) => r.usage)
  const workers = requests.filter(isWorker)
  const leadOnly = requests.filter((r) => !isWorker(r))
  const totals = (list) => {
    const sum = (k) => list.reduce((n, r) => n + (r.usage[k] ?? 0), 0)
    return {
      requests: list.length,
      input_tokens: sum('input_tokens'),
      cache_creation_input_tokens: sum('cache_creation_input_tokens'),
      cache_read_input_tokens: sum('cache_read_input_tokens'),
    }
  }
  const cost = (t, writeRate = 1.25) => Math.round(t.input_tokens + writeRate * t.cache_creation_input_tokens + 0.1 * t.cache_read_input_tokens)
  const all = totals(requests)
  log(`${mode}: ${JSON.stringify(all)}`)
  return {
    workers: WORKERS,
    all_requests: all,
    lead_requests: totals(leadOnly),
    worker_requests: totals(workers),
    prompt_tokens: requests.reduce((n, r) => n + r.promptTokens, 0),
    full_price_input_tokens: all.input_tokens + all.cache_creation_input_tokens,
    per_worker_full_price_input: Array.from({ length: WORKERS }, (_, i) =>
      workers.filter((r) => workerOf(r) === String(i + 1)).reduce((n, r) => n + r.usage.input_tokens + (r.usage.cache_creation_input_tokens ?? 0), 0),
    ),
    cost_input_token_units: cost(all),
    cost_writes_at_input_price: cost(all, 1),
  }
}

const server = await startLoopbackServer({ scenario: {} })
try {
  const fresh = await run('fresh', server)
  const forks = await run('fork', server)
  const ratio = forks.cost_input_token_units / fresh.cost_input_token_units
  const conservative = forks.cost_input_token_units / fresh.cost_writes_at_input_price
  const GOAL = 0.3
  const result = {
    bench: 'fork',
    model_server: 'honest loopback (prompt cache by Anthropic rules; ceil(chars/4) tokens per block)',
    file_tokens_approx: Math.ceil(notes.length / 4),
    machine: { cores: os.availableParallelism(), loadavg: os.loadavg().map((x) => Math.round(x * 10) / 10) },
    forks,
    fresh,
    full_price_input_ratio: Math.round((forks.full_price_input_tokens / fresh.full_price_input_tokens) * 1000) / 1000,
    cost_ratio_as_measured: Math.round(ratio * 1000) / 1000,
    cost_ratio: Math.round(conservative * 1000) / 1000,
    target: { cost_ratio: GOAL },
    met: conservative <= GOAL,
    note: 'every request of the run (lead and workers); cost = input + 1.25 × cache writes + 0.1 × cache reads; cost_ratio divides by the fresh side with its cache writes at input price (it may never reuse them), cost_ratio_as_measured by what it paid',
  }
  process.exitCode = result.met ? 0 : 1
  console.log(JSON.stringify(result))
} finally {
  await server.close()
  await fs.rm(base, { recursive: true, force: true })
}
