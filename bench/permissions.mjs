// Permission bubbling benchmark: a teammate (in this process, real permission layer, loopback
// model) makes ROUNDS Bash calls in default mode; each is bubbled to team-lead and approved as
// soon as the leader side sees it. Prints one JSON object as its last line (progress on stderr).
// Run: npm run build && node bench/permissions.mjs
//
// First ROUNDS calls: the leader side watches permissions/pending (fs.watch, as the console does);
// next ROUNDS calls, the baseline: a leader that polls every 1,000 ms (Claude Code's inbox poll).
// requestWrittenMs: the model's tool_use response served → pending file written by the teammate.
// visibleMs / baselineVisibleMs: … → the leader side sees it.
// resumeMs:         answerRequest() called → the tool result reaches the model (the command ran).
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
// The adapter registry installs the agent CLIs' protected config dirs every sandbox protects (as every swarm entry point loads it).
import '../dist/adapters/registry.js'
import { assembleAgent } from '../dist/agent/start.js'
import { createOutput } from '../dist/agent/render.js'
import { startLoopbackServer } from '../dist/loopback-model/loopback-server.js'
import { answerRequest } from '../dist/permissions/requests/broker.js'
import { createPermissionLayer } from '../dist/permissions/requests/client.js'
import { ensureTeamKeys } from '../dist/trust/keys.js'
import { readPending } from '../dist/asks/store.js'
import { sendTeamMessage } from '../dist/teams/messaging.js'
import { pendingPermissionsDir } from '../dist/home/paths.js'
import { createTeam } from '../dist/teams/team-store.js'

const ROUNDS = 20
const BASELINE_POLL_MS = 1_000
const TEAM = 'bench'

async function main() {
  const base = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'swarm-bench-perms-')))
  const cwd = path.join(base, 'project')
  await fsp.mkdir(cwd)
  const steps = Array.from({ length: 2 * ROUNDS }, (_, i) => ({
    content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'Bash', input: { command: `echo ${i} >> count.txt` } }],
  }))
  const served = []
  const loopback = await startLoopbackServer({ scenario: { agents: { alice: [...steps, { text: 'done' }] } } })
  loopback.onRequest = (r) => served.push(r.receivedAt)
  const env = {
    ...process.env,
    HOME: path.join(base, 'user-home'),
    SWARM_HOME: path.join(base, 'home'),
    ANTHROPIC_API_KEY: 'test',
    ANTHROPIC_BASE_URL: loopback.url,
    NO_COLOR: '1',
  }
  await fsp.mkdir(env.HOME, { recursive: true })
  delete env.TMUX
  const abort = new AbortController()
  const loadBefore = os.loadavg()[0]
  try {
    await createTeam({ name: TEAM, cwd, members: [{ name: 'alice', cwd }] }, env)
    await ensureTeamKeys(TEAM, env)
    const dir = pendingPermissionsDir(TEAM, env)
    await fsp.mkdir(dir, { recursive: true })
    const { runtime } = await assembleAgent({
      team: TEAM,
      name: 'alice',
      env,
      mode: 'default',
      signal: abort.signal,
      output: createOutput({ stream: { write: () => true } }),
      runtime: { autoClaimTasks: false },
      permissions: (a) => createPermissionLayer(a, { notifyTmux: false }),
    })
    const done = runtime.run()

    const seen = new Map() // id → first sighting
    const samples = []
    let finished
    const allDone = new Promise((r) => (finished = r))
    const onSeen = async (id) => {
      if (seen.has(id)) return
      const entry = { at: Date.now() }
      seen.set(id, entry)
      if (samples.length === 2 * ROUNDS) return
      const pending = await readPending(TEAM, id, env)
      if (!pending) return
      const round = samples.length
      const toolServedAt = served[served.length - 1]
      const answeredAt = Date.now()
      await answerRequest(TEAM, id, { kind: 'approve', by: 'bench' }, { env })
      // The next model request carries this call's tool result.
      while (served.length <= round + 1) await new Promise((r) => setTimeout(r, 1))
      samples.push({ id, toolServedAt, writtenAt: pending.createdAt, visibleAt: entry.at, answeredAt, resumedAt: served[round + 1] })
      process.stderr.write(`\r${samples.length}/${2 * ROUNDS}`)
      if (samples.length === ROUNDS) watcher.close()
      if (samples.length === 2 * ROUNDS) finished()
    }
    const watcher = fs.watch(dir, (_e, name) => {
      if (name?.endsWith('.json') && !name.startsWith('.')) void onSeen(name.slice(0, -5))
    })
    const poller = setInterval(async () => {
      if (samples.length < ROUNDS) return
      for (const name of await fsp.readdir(dir)) {
        if (name.endsWith('.json') && !name.startsWith('.')) void onSeen(name.slice(0, -5))
      }
    }, BASELINE_POLL_MS)

    await sendTeamMessage({ team: TEAM, to: 'alice', text: 'count to thirty, one Bash call at a time', env })
    await allDone
    watcher.close()
    clearInterval(poller)
    abort.abort()
    await done
    process.stderr.write('\n')

    const watched = samples.slice(0, ROUNDS)
    const polled = samples.slice(ROUNDS)
    const ms = (list, f) =>
      list
        .map(f)
        .filter((v) => Number.isFinite(v))
        .sort((a, b) => a - b)
    const stats = (xs) => ({ p50: pct(xs, 50), p95: pct(xs, 95), max: xs[xs.length - 1] })
    const lines = (await fsp.readFile(path.join(cwd, 'count.txt'), 'utf8')).split('\n').filter(Boolean).length
    const result = {
      rounds: 2 * ROUNDS,
      commandsRun: lines,
      requestWrittenMs: stats(ms(samples, (s) => s.writtenAt - s.toolServedAt)),
      visibleMs: stats(ms(watched, (s) => s.visibleAt - s.toolServedAt)),
      baselineVisibleMs: stats(ms(polled, (s) => s.visibleAt - s.toolServedAt)),
      resumeMs: stats(ms(samples, (s) => s.resumedAt - s.answeredAt)),
      cpus: os.cpus().length,
      loadavg1m: Math.round(loadBefore * 100) / 100,
    }
    console.log(JSON.stringify(result))
  } finally {
    abort.abort()
    await loopback.close()
    await fsp.rm(base, { recursive: true, force: true })
  }
}

function pct(xs, p) {
  if (xs.length === 0) return undefined
  return xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
