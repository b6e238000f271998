#!/usr/bin/env node
// bench:long — a scripted 200-turn teammate session on the honest loopback model (200k window,
// prompt cache by Anthropic's rules), run in this process four times, one variable changed at a
// time: caching + compaction on; caching on, compaction off (DISABLE_AUTO_COMPACT=1); caching off
// (DISABLE_PROMPT_CACHING=1), compaction on; both off. Each turn: a message → the model Reads a
// file of ≈ 4k tokens → a short answer; so the conversation passes 200k about four times. Then
// the real Claude Code (the pinned binary: SWARM_CLAUDE_BIN, else fetched into SWARM_TEST_CACHE as
// `npm run test:interop` does) on the same loopback for a shorter scripted session, for its cached
// share. Prints one JSON object as its last line (progress on stderr) with its targets; exits 1
// when one is missed.
//
//   node bench/long.mjs [--turns 200]   (BENCH_LONG_TURNS too)
import { spawn } from 'node:child_process'
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
const { estimateCost, usageFromApi } = await dist('agent/pricing.js')
const { readTranscript, transcriptPath } = await dist('agent/transcript.js')

const turnsArg = process.argv.indexOf('--turns')
const TURNS = Number(turnsArg > 0 ? process.argv[turnsArg + 1] : (process.env.BENCH_LONG_TURNS ?? 200))
const CLAUDE_TURNS = 30
const MODEL = 'claude-sonnet-4-6'
const WINDOW = 200_000
const TEAM = 'long'
const SUMMARY_CUE = 'Your conversation is about to be compacted'
const log = (s) => process.stderr.write(`bench:long: ${s}\n`)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** File i: 100 lines of ~150 characters (≈ 4k tokens once Read numbers them). */
const fileText = (i) =>
  Array.from(
    { length: 100 },
    (_, l) => `file ${i} line ${l}: ${'lorem ipsum dolor sit amet consectetur adipiscing elit '.repeat(2)}${String(i * 1000 + l).padStart(8, '0')}`,
  ).join('\n') + '\n'

function scenario(agent, fileFor) {
  const steps = []
  for (let i = 1; i <= TURNS; i++) {
    steps.push({ when: { lastUserIncludes: `turn ${i}:` }, content: [{ type: 'tool_use', name: 'Read', input: { file_path: fileFor(i) } }] })
    steps.push({ text: `Read file ${i}; noted what matters.` })
  }
  const summary = {
    when: { lastUserIncludes: SUMMARY_CUE },
    text: '<summary>Task: read the files one per turn. Done: all files so far. Left: the next file.</summary>',
  }
  return { agents: { [agent]: { rules: [summary], steps } } }
}

async function run(label, extraEnv) {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), `swarm-bench-long-${label}-`)))
  const cwd = path.join(base, 'project')
  await fs.mkdir(path.join(cwd, 'files'), { recursive: true })
  for (let i = 1; i <= TURNS; i++) await fs.writeFile(path.join(cwd, 'files', `f${i}.txt`), fileText(i))
  const server = await startLoopbackServer({ scenario: scenario('alice', (i) => `files/f${i}.txt`) })
  const env = {
    ...process.env,
    HOME: path.join(base, 'user-home'),
    SWARM_HOME: path.join(base, 'home'),
    CLAUDE_CONFIG_DIR: '',
    NO_COLOR: '1',
    ANTHROPIC_API_KEY: 'test',
    ANTHROPIC_BASE_URL: server.url,
    ...extraEnv,
  }
  await fs.mkdir(env.HOME, { recursive: true })
  for (const k of [
    'TMUX',
    'TMUX_PANE',
    'SWARM_LEAD_VERIFY_KEY',
    'ANTHROPIC_AUTH_TOKEN',
    'SWARM_SUBAGENT_MODEL',
    'SWARM_SUBAGENT_MODEL_FORCE',
    'SWARM_CONTEXT_WINDOW',
    'CLAUDE_AUTOCOMPACT_PCT_OVERRIDE',
  ])
    delete env[k]
  await createTeam({ name: TEAM, cwd, members: [{ name: 'alice', cwd }] }, env)
  await ensureTeamKeys(TEAM, env)
  const abort = new AbortController()
  const { runtime } = await assembleAgent({
    team: TEAM,
    name: 'alice',
    env,
    model: MODEL,
    output: createOutput({ stream: new PassThrough().resume(), color: false }),
    signal: abort.signal,
    runtime: { autoClaimTasks: false },
  })
  const done = runtime.run()
  const started = Date.now()
  const ends = [] // server.requests.length after each completed turn
  let completed = 0
  let died
  try {
    while (runtime.currentStatus !== 'idle') await sleep(5)
    for (let i = 1; i <= TURNS; i++) {
      const before = server.requests.length
      runtime.say(`turn ${i}: read files/f${i}.txt and note what matters`)
      while (!(server.requests.length > before && runtime.currentStatus === 'idle')) await sleep(2)
      const mine = server.requests.slice(before)
      const refused = mine.find((r) => r.status !== 200)
      if (refused) {
        died = { turn: i, status: refused.status, promptTokens: refused.promptTokens }
        break
      }
      completed = i
      ends.push(server.requests.length)
      if (i % 20 === 0) log(`${label}: ${i} turns, ${Math.round((Date.now() - started) / 1000)} s`)
    }
  } finally {
    abort.abort()
    await done
    await server.close()
  }
  const wallMs = Date.now() - started
  const usages = server.requests.map((r) => (r.usage ? usageFromApi(r.usage) : undefined))
  const costAfter = ends.map((end) => usages.slice(0, end).reduce((sum, u) => sum + (u ? estimateCost(MODEL, u) : 0), 0))
  const total = usages.reduce(
    (a, u) => (u ? { input: a.input + u.inputTokens, write: a.write + u.cacheWriteTokens, read: a.read + u.cacheReadTokens } : a),
    { input: 0, write: 0, read: 0 },
  )
  const tooLong = server.requests.filter((r) => r.status === 400 && (r.promptTokens ?? 0) > WINDOW).length
  const events = await readTranscript(transcriptPath(TEAM, 'alice', env))
  const compactions = events.filter((e) => e.kind === 'compaction')
  await fs.rm(base, { recursive: true, force: true })
  return {
    turnsCompleted: completed,
    ...(died ? { diedAt: died } : {}),
    promptTooLongFailures: tooLong,
    requests: server.requests.length,
    maxPromptTokens: Math.max(...server.requests.map((r) => r.promptTokens ?? 0)),
    inputTokens: total,
    cachedShare: round(total.read / Math.max(1, total.input + total.write + total.read), 4),
    costUsd: round(costAfter.at(-1) ?? 0, 4),
    costAfter,
    compactions: {
      toolResultsCleared: compactions.filter((e) => e.stage === 'tool_results_cleared').length,
      summarized: compactions.filter((e) => e.stage === 'summarized').length,
      failed: compactions.filter((e) => e.stage === 'failed').length,
    },
    wallMs,
  }
}

const round = (n, d) => Math.round(n * 10 ** d) / 10 ** d

/** Claude Code on the same loopback: `claude -p` reading CLAUDE_TURNS files one per tool call. */
async function claudeCode() {
  let bin = process.env.SWARM_CLAUDE_BIN
  if (!bin) {
    try {
      const { ensureClaudeBinary } = await import(path.join(root, 'scripts/interop.mjs'))
      bin = ensureClaudeBinary()
    } catch (err) {
      return { skipped: `the Claude Code binary could not be fetched: ${String(err?.message ?? err).split('\n')[0]}` }
    }
  }
  if (!(await fs.stat(bin).catch(() => undefined))?.isFile()) return { skipped: `no Claude Code binary at ${bin}` }
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-bench-long-cc-')))
  const cwd = path.join(base, 'project')
  const cfg = path.join(base, 'cfg')
  await fs.mkdir(path.join(cwd, 'files'), { recursive: true })
  await fs.mkdir(cfg)
  for (let i = 1; i <= CLAUDE_TURNS; i++) await fs.writeFile(path.join(cwd, 'files', `f${i}.txt`), fileText(i))
  await fs.writeFile(
    path.join(cfg, '.claude.json'),
    JSON.stringify({
      hasCompletedOnboarding: true,
      theme: 'dark',
      projects: { [cwd]: { hasTrustDialogAccepted: true } },
      customApiKeyResponses: { approved: ['sk-test-123'], rejected: [] },
    }),
  )
  // One long agentic turn: each tool result cues the next Read; requests other than the main loop get a short answer.
  const steps = []
  for (let i = 1; i <= CLAUDE_TURNS; i++)
    steps.push({
      content: [{ type: 'tool_use', name: 'Read', input: { file_path: path.join(cwd, 'files', `f${i}.txt`) } }],
      ...(i > 1 ? { when: { toolResultIncludes: `file ${i - 1} line 0:` } } : {}),
    })
  steps.push({ text: 'Read them all.', when: { toolResultIncludes: `file ${CLAUDE_TURNS} line 0:` } })
  const server = await startLoopbackServer({ scenario: { rules: [], steps, fallback: { text: 'ok' } } })
  const started = Date.now()
  const code = await new Promise((resolve) => {
    const child = spawn(
      bin,
      [
        '-p',
        `Read files/f1.txt through files/f${CLAUDE_TURNS}.txt one at a time.`,
        '--model',
        MODEL,
        '--permission-mode',
        'default',
        '--allowedTools',
        'Read',
      ],
      {
        cwd,
        env: {
          PATH: process.env.PATH,
          TERM: 'dumb',
          HOME: base,
          CLAUDE_CONFIG_DIR: cfg,
          ANTHROPIC_BASE_URL: server.url,
          ANTHROPIC_API_KEY: 'sk-test-123',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let err = ''
    child.stderr.on('data', (d) => (err += d))
    child.stdout.resume()
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000)
    child.on('exit', (c) => {
      clearTimeout(timer)
      if (c !== 0) log(`claude exited ${c}: ${err.slice(0, 300)}`)
      resolve(c)
    })
  })
  await server.close()
  // The main loop: the requests that carried our Read results (side requests are left out).
  const loop = server.requests.filter((r) => r.usage && JSON.stringify(r.body?.messages ?? []).includes('line 0:'))
  const u = loop.reduce(
    (a, r) => ({
      input: a.input + r.usage.input_tokens,
      write: a.write + r.usage.cache_creation_input_tokens,
      read: a.read + r.usage.cache_read_input_tokens,
    }),
    { input: 0, write: 0, read: 0 },
  )
  await fs.rm(base, { recursive: true, force: true })
  return {
    exitCode: code,
    toolCalls: CLAUDE_TURNS,
    requests: loop.length,
    inputTokens: u,
    cachedShare: round(u.read / Math.max(1, u.input + u.write + u.read), 4),
    wallMs: Date.now() - started,
  }
}

const variants = {
  on: {},
  cachingOnCompactionOff: { DISABLE_AUTO_COMPACT: '1' },
  cachingOffCompactionOn: { DISABLE_PROMPT_CACHING: '1' },
  off: { DISABLE_PROMPT_CACHING: '1', DISABLE_AUTO_COMPACT: '1' },
}
const runs = {}
for (const [label, env] of Object.entries(variants)) {
  runs[label] = await run(label, env)
  const r = runs[label]
  log(`${label}: ${r.turnsCompleted} turns${r.diedAt ? `, died at turn ${r.diedAt.turn}` : ''}, cached ${r.cachedShare}, $${r.costUsd}`)
}
/** Cost of `a` over `b` over the turns both completed (compaction off dies near the window). */
function costRatio(a, b) {
  const both = Math.min(a.turnsCompleted, b.turnsCompleted)
  return both > 0 ? { turns: both, ratio: round(a.costAfter[both - 1] / b.costAfter[both - 1], 4) } : null
}
const claude = await claudeCode()
const targets = {
  turnsOn: TURNS,
  promptTooLongOn: 0,
  cachedShareOn: 0.85,
  costOnOverOff: 0.25,
  // What each part buys, the other held on: caching cuts the cost, compaction keeps the session alive.
  costOnOverCachingOff: 0.5,
  turnsOverCompactionOff: 1,
  // Claude Code on the same loopback: swarm's cached share within 0.05 of it (or above).
  cachedShareVsClaudeCode: -0.05,
}
const ratios = {
  onOverOff: costRatio(runs.on, runs.off),
  onOverCachingOff: costRatio(runs.on, runs.cachingOffCompactionOn),
}
const checks = {
  turnsOn: runs.on.turnsCompleted >= targets.turnsOn,
  promptTooLongOn: runs.on.promptTooLongFailures <= targets.promptTooLongOn,
  cachedShareOn: runs.on.cachedShare >= targets.cachedShareOn,
  costOnOverOff: ratios.onOverOff !== null && ratios.onOverOff.ratio <= targets.costOnOverOff,
  costOnOverCachingOff: ratios.onOverCachingOff !== null && ratios.onOverCachingOff.ratio <= targets.costOnOverCachingOff,
  turnsOverCompactionOff: runs.on.turnsCompleted > runs.cachingOnCompactionOff.turnsCompleted * targets.turnsOverCompactionOff,
  ...(claude.cachedShare !== undefined
    ? { cachedShareVsClaudeCode: runs.on.cachedShare - claude.cachedShare >= targets.cachedShareVsClaudeCode }
    : {}),
}
const strip = ({ costAfter: _c, ...rest }) => rest
const result = {
  bench: 'long',
  turns: TURNS,
  model: MODEL,
  contextWindow: WINDOW,
  tokenRule: 'ceil(characters of each block JSON / 4)',
  machine: { cores: os.availableParallelism(), loadavg: os.loadavg().map((x) => round(x, 1)) },
  ...Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, strip(v)])),
  costRatios: ratios,
  claudeCode: claude,
  targets,
  checks,
  missed: Object.entries(checks)
    .filter(([, ok]) => !ok)
    .map(([k]) => k),
}
console.log(JSON.stringify(result))
process.exitCode = result.missed.length ? 1 : 0
