// swarm web benchmark. Prints one JSON object as its last line (progress on stderr); exits 1 when a target is missed.
// Run: npm run bench:web (builds first). Needs Debian's chromium (SWARM_CHROMIUM overrides /usr/bin/chromium).
//
// visibleMs: a pending request written (as a teammate's ask writes it) → shown on an open page
//   (the real `swarm web` child, headless Chromium). Beside it, in the same run, the baseline:
//   permsMs, the same request → listed by a `swarm perms <team> --json` started at that moment.
// idleCpu: the `swarm web` process's CPU (user + system, share of one core) over IDLE_MS with
//   PAGES pages open and a team of MEMBERS teammates (team file, inboxes and state files; no
//   processes: an idle team writes nothing), nothing changing.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import puppeteer from 'puppeteer-core'
import { resolveRequest, writePending } from '../dist/asks/store.js'
import { createTeam } from '../dist/teams/team-store.js'
import { ensureTeamKeys } from '../dist/trust/keys.js'

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
  const env = { ...process.env, HOME: path.join(base, 'user-home'), SWARM_HOME: path.join(base, 'home'), TMUX_TMPDIR: base, NO_COLOR: '1' }
  delete env.TMUX
  await fsp.mkdir(env.HOME, { recursive: true })
  const cwd = path.join(base, 'project')
  await fsp.mkdir(cwd)
  let web
  let browser
  try {
    const members = Array.from({ length: MEMBERS }, (_, i) => ({ name: `m${i}`, cwd }))
    await createTeam({ name: TEAM, cwd, members }, env)
    await ensureTeamKeys(TEAM, env)
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

    await new Promise((r) => setTimeout(r, 1_000)) // settle: the last answer's refresh is done
    const before = cpuTicks(web.pid)
    await new Promise((r) => setTimeout(r, IDLE_MS))
    const idleCpuShare = (cpuTicks(web.pid) - before) / TICKS_PER_S / (IDLE_MS / 1000)

    const result = {
      bench: 'web',
      rounds: ROUNDS,
      pages: PAGES,
      members: MEMBERS,
      visibleMs: stats(visible),
      permsMs: stats(perms),
      idleCpuShare: Number(idleCpuShare.toFixed(4)),
      idleMs: IDLE_MS,
      targets: TARGETS,
      loadavg1: os.loadavg()[0],
    }
    const missed = []
    if (result.visibleMs.p95 > TARGETS.visibleP95Ms) missed.push(`visible p95 ${result.visibleMs.p95} ms > ${TARGETS.visibleP95Ms} ms`)
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
    await fsp.rm(base, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
