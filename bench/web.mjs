// swarm web benchmark. Prints one JSON object as its last line (progress on stderr); exits 1 when a target is missed.
// Run: npm run bench:web (builds first). Needs Debian's chromium (SWARM_CHROMIUM overrides /usr/bin/chromium).
//
// visibleMs: a pending request written (as a teammate's ask writes it) → shown on an open page
//   (the real `swarm web` child, headless Chromium). Beside it, in the same run, the baseline:
//   permsMs, the same request → listed by a `swarm perms <team> --json` started at that moment.
// idleCpu: the `swarm web` process's CPU (user + system, share of one core) over IDLE_MS with
//   PAGES pages open and a team of MEMBERS running teammates: `swarm team create --backend
//   in-process`, every teammate a real swarm agent inside the leader process on the loopback
//   model, idle (state files written, inboxes watched) — nothing asked of them during the window.
//   The leader's own CPU over the same window is printed beside it (teamIdleCpuShare).
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import puppeteer from 'puppeteer-core'
import { resolveRequest, writePending } from '../dist/asks/store.js'
import { startLoopbackServer } from '../dist/loopback-model/loopback-server.js'

const ROUNDS = 20
const PAGES = 3
const MEMBERS = 16
const IDLE_MS = 10_000
const TEAM = 'bench'
const TARGETS = { visibleP95Ms: 1_000, idleCpuShare: 0.02 }
const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'swarm.js')
const CHROMIUM = process.env.SWARM_CHROMIUM ?? '/usr/bin/chromium'

const log = (s) => process.stderr.write(`${s}\n`)
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const stats = (xs) => ({ p50: pct(xs, 50), p95: pct(xs, 95), max: Math.max(...xs) })

/** utime + stime of `pid`, in clock ticks (Linux /proc). */
function cpuTicks(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return Number(fields[11]) + Number(fields[12])
}
const TICKS_PER_S = 100

function readState(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'))
  } catch {
    return undefined
  }
}

/** Every teammate's state.json says idle (within `ms`), else throws naming those that do not. */
async function allIdle(env, names, ms) {
  const dir = path.join(env.SWARM_HOME, 'teams', TEAM, 'agents')
  const t0 = Date.now()
  for (;;) {
    const busy = names.filter((m) => readState(path.join(dir, m, 'state.json'))?.status !== 'idle')
    if (!busy.length) return Date.now() - t0
    if (Date.now() - t0 > ms) throw new Error(`teammates not idle after ${ms} ms: ${busy.join(', ')}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

function run(args, env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.on('close', (code) => resolve({ code, out }))
  })
}

async function main() {
  const base = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'swarm-bench-web-')))
  const loopback = await startLoopbackServer({ scenario: { fallback: { text: 'ok' } } })
  const env = {
    ...process.env,
    HOME: path.join(base, 'user-home'),
    SWARM_HOME: path.join(base, 'home'),
    TMUX_TMPDIR: base,
    NO_COLOR: '1',
    ANTHROPIC_API_KEY: 'bench',
    ANTHROPIC_BASE_URL: loopback.url,
  }
  delete env.TMUX
  await fsp.mkdir(env.HOME, { recursive: true })
  const cwd = path.join(base, 'project')
  await fsp.mkdir(cwd)
  let web
  let browser
  let leader
  try {
    // The team runs: its leader (the foreground of `team create`, stdin kept open) holds every teammate.
    const names = Array.from({ length: MEMBERS }, (_, i) => `m${i}`)
    leader = spawn(
      process.execPath,
      [BIN, 'team', 'create', TEAM, '--agents', names.join(','), '--backend', 'in-process', '--no-attach', '--cwd', cwd],
      {
        env,
        stdio: ['pipe', 'ignore', 'ignore'],
      },
    )
    const readyMs = await allIdle(env, names, 120_000)
    log(`${MEMBERS} in-process teammates idle after ${readyMs} ms (leader pid ${leader.pid})`)
    web = spawn(process.execPath, [BIN, 'web'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    web.stdout.on('data', (d) => (out += d))
    web.stderr.on('data', (d) => (out += d))
    const url = await new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`swarm web printed no URL: ${out}`)), 15_000)
      web.stdout.on('data', () => {
        const m = /open (http:\/\/\S+)/.exec(out)
        if (m) {
          clearTimeout(t)
          resolve(m[1])
        }
      })
    })
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir: path.join(base, 'chromium-profile'),
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-dev-shm-usage'],
      env: { ...process.env, HOME: env.HOME },
    })
    const pages = []
    for (let i = 0; i < PAGES; i++) {
      // Each in its own context: a page is then not a background tab (whose animation frames are paused).
      const p = await (await browser.createBrowserContext()).newPage()
      await p.goto(url)
      await p.waitForFunction(() => document.getElementById('conn')?.textContent === 'live')
      pages.push(p)
    }
    log(`${PAGES} pages open on ${url.replace(/token=.*/, 'token=…')}`)

    const visible = []
    const perms = []
    for (let i = 0; i < ROUNDS; i++) {
      const id = `perm-bench${i.toString(36)}-${(100000 + i).toString(16)}`
      const t0 = Date.now()
      await writePending(
        TEAM,
        {
          id,
          kind: 'permission',
          agent: `m${i % MEMBERS}`,
          agentId: `m${i % MEMBERS}@${TEAM}`,
          toolName: 'Bash',
          toolUseId: `toolu_${i}`,
          input: { command: `echo ${i}` },
          description: 'bench',
          createdAt: t0,
        },
        env,
      )
      const [shown, listed] = await Promise.all([
        pages[i % PAGES].waitForSelector(`[data-request="${id}"]`, { timeout: 10_000 }).then(() => Date.now() - t0),
        run(['perms', TEAM, '--json'], env).then((r) => {
          if (!r.out.includes(id)) throw new Error(`swarm perms did not list ${id}`)
          return Date.now() - t0
        }),
      ])
      visible.push(shown)
      perms.push(listed)
      await resolveRequest(TEAM, id, { decision: 'deny', resolvedBy: 'bench' }, env)
      await pages[i % PAGES].waitForSelector(`[data-request="${id}"]`, { hidden: true, timeout: 10_000 })
    }
    log(`visible p50 ${pct(visible, 50)} ms; swarm perms p50 ${pct(perms, 50)} ms`)

    await allIdle(env, names, 30_000)
    await new Promise((r) => setTimeout(r, 1_000)) // settle: the last answer's refresh is done
    const before = cpuTicks(web.pid)
    const teamBefore = cpuTicks(leader.pid)
    await new Promise((r) => setTimeout(r, IDLE_MS))
    const idleCpuShare = (cpuTicks(web.pid) - before) / TICKS_PER_S / (IDLE_MS / 1000)
    const teamIdleCpuShare = (cpuTicks(leader.pid) - teamBefore) / TICKS_PER_S / (IDLE_MS / 1000)
    // Running: idle, and the state written by the leader process that holds them (in-process).
    const stillRunning = names.filter((m) => {
      const st = readState(path.join(env.SWARM_HOME, 'teams', TEAM, 'agents', m, 'state.json'))
      return st?.status === 'idle' && st.pid === leader.pid
    }).length

    const result = {
      bench: 'web',
      rounds: ROUNDS,
      pages: PAGES,
      members: MEMBERS,
      runningTeammates: stillRunning,
      teammates: 'in-process, on the loopback model, idle',
      visibleMs: stats(visible),
      permsMs: stats(perms),
      idleCpuShare: Number(idleCpuShare.toFixed(4)),
      teamIdleCpuShare: Number(teamIdleCpuShare.toFixed(4)),
      idleMs: IDLE_MS,
      targets: TARGETS,
      loadavg1: os.loadavg()[0],
    }
    const missed = []
    if (result.visibleMs.p95 > TARGETS.visibleP95Ms) missed.push(`visible p95 ${result.visibleMs.p95} ms > ${TARGETS.visibleP95Ms} ms`)
    if (stillRunning !== MEMBERS) missed.push(`${MEMBERS - stillRunning} teammates stopped running during the idle window`)
    if (idleCpuShare > TARGETS.idleCpuShare) missed.push(`idle CPU ${(idleCpuShare * 100).toFixed(2)}% > ${TARGETS.idleCpuShare * 100}%`)
    result.missed = missed
    console.log(JSON.stringify(result))
    if (missed.length) process.exitCode = 1
  } finally {
    await browser?.close()
    if (web && web.exitCode === null) {
      web.kill('SIGTERM')
      await new Promise((r) => web.once('exit', r))
    }
    if (leader && leader.exitCode === null) {
      leader.kill('SIGTERM')
      const gone = await Promise.race([
        new Promise((r) => leader.once('exit', () => r(true))),
        new Promise((r) => setTimeout(() => r(false), 10_000)),
      ])
      if (!gone) leader.kill('SIGKILL')
    }
    await loopback.close()
    await fsp.rm(base, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
