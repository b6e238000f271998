#!/usr/bin/env node
// bench:fanout — one broadcast to N recipient processes, each watching its own inbox in the same
// team directory, as N pane teammates do; two ways in the same run, one thing changed: how a
// recipient is woken.
//
// file:      swarm's watchInbox (watch/file-watch.ts): the recipient's own inbox file is watched.
// directory: the same reader (InboxTail, markDelivered) woken by a watch on the shared inboxes
//            directory (watch/dir-watch.ts), as watchInbox was before issue 25: every write to
//            any inbox wakes every recipient (N² wakeups).
// The sender appends the broadcast with appendMessage to every inbox (Promise.all, as `swarm send
// '*'` does). allSeenMs: the first append called → the last recipient reports the message.
// recipientsCpuS: CPU-seconds of all recipients over the rounds. Prints one JSON object with its
// targets; exits 1 when one is missed.
//
//   node bench/fanout.mjs [--recipients 64] [--rounds 5]
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const dist = (m) => import(path.join(root, 'dist', m))
const args = process.argv.slice(2)
const opt = (name, fallback) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : fallback)
const TEAM = 'fan'
const TARGETS = { allSeenMs: 1000, cpuFileOverDirectory: 0.5, lost: 0, duplicated: 0 }
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

if (args[0] === '--recipient') await recipient(args[1], args[2])
else await main()

async function recipient(mode, name) {
  const { inboxPath } = await dist('home/paths.js')
  const seen = new Set()
  const report = (msgs) => {
    for (const m of msgs) {
      if (seen.has(m.msg_id)) process.stdout.write(`dup ${name} ${m.text}\n`)
      seen.add(m.msg_id)
      process.stdout.write(`got ${name} ${m.text} ${Date.now()}\n`)
    }
  }
  if (mode === 'file') {
    const { watchInbox } = await dist('mailbox/watch.js')
    await watchInbox(TEAM, name, report, { markDelivered: true }).ready
  } else {
    const { DirWatch } = await dist('watch/dir-watch.js')
    const { InboxTail } = await dist('mailbox/inbox-tail.js')
    const { markDelivered } = await dist('mailbox/inbox.js')
    const file = inboxPath(TEAM, name)
    const tail = new InboxTail(file)
    let running = false
    let again = false
    const scan = async () => {
      if (running) {
        again = true
        return
      }
      running = true
      do {
        again = false
        const { entries, from } = tail.read()
        const fresh = entries.slice(from).filter((m) => !m.read && !seen.has(m.msg_id))
        if (fresh.length) {
          report(fresh)
          await markDelivered(
            file,
            fresh.map((m) => m.msg_id),
          )
        }
      } while (again)
      running = false
    }
    const watch = new DirWatch(
      file,
      () => void scan(),
      () => undefined,
    )
    await watch.check()
    setInterval(() => void scan(), 1_000) // the same safety poll
  }
  process.stdout.write('ready\n')
  process.stdin.on('end', () => process.exit(0))
  process.stdin.resume()
}

async function main() {
  const N = Number(opt('recipients', '64'))
  const ROUNDS = Number(opt('rounds', '5'))
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-bench-fanout-')))
  process.env.SWARM_HOME = path.join(base, 'home')
  process.env.HOME = path.join(base, 'user-home')
  const { appendMessage } = await dist('mailbox/inbox.js')
  const { inboxPath } = await dist('home/paths.js')
  const names = Array.from({ length: N }, (_, i) => `m${i}`)
  fs.mkdirSync(path.dirname(inboxPath(TEAM, 'm0')), { recursive: true })
  const results = {}
  try {
    for (const mode of ['file', 'directory']) {
      for (const n of names) fs.writeFileSync(inboxPath(TEAM, n), '[]')
      const seen = new Map()
      let dups = 0
      let ready = 0
      const kids = names.map((n) => {
        const c = spawn(process.execPath, [fileURLToPath(import.meta.url), '--recipient', mode, n], {
          stdio: ['pipe', 'pipe', 'inherit'],
          env: process.env,
        })
        let buf = ''
        c.stdout.on('data', (d) => {
          buf += d
          for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
            const [kind, who, text, at] = buf.slice(0, i).split(' ')
            buf = buf.slice(i + 1)
            if (kind === 'ready') ready++
            else if (kind === 'dup') dups++
            else if (kind === 'got') seen.set(`${who} ${text}`, Number(at))
          }
        })
        return c
      })
      while (ready < N) await sleep(20)
      await sleep(1000)
      const cpu0 = kids.map((c) => cpuTicks(c.pid))
      const rounds = []
      for (let k = 0; k < ROUNDS; k++) {
        const text = `${mode}-${k}`
        const t0 = Date.now()
        const c0 = process.cpuUsage()
        await Promise.all(names.map((n) => appendMessage(inboxPath(TEAM, n), { from: 'team-lead', text })))
        const sendMs = Date.now() - t0
        const c = process.cpuUsage(c0)
        const deadline = Date.now() + 30_000
        while (!names.every((n) => seen.has(`${n} ${text}`)) && Date.now() < deadline) await sleep(5)
        const got = names.filter((n) => seen.has(`${n} ${text}`))
        rounds.push({
          sendMs,
          senderCpuMs: Math.round((c.user + c.system) / 1000),
          allSeenMs: got.length === N ? Math.max(...got.map((n) => seen.get(`${n} ${text}`))) - t0 : undefined,
          seen: got.length,
        })
        await sleep(1500)
      }
      const cpu1 = kids.map((c) => cpuTicks(c.pid))
      for (const c of kids) c.stdin.end()
      await Promise.all(kids.map((c) => new Promise((r) => (c.exitCode !== null ? r() : c.once('exit', r)))))
      const CLK = 100
      results[mode] = {
        rounds,
        allSeenMsMedian: median(rounds.map((r) => r.allSeenMs ?? Infinity)),
        recipientsCpuS: Math.round((cpu1.reduce((s, v, i) => s + v - cpu0[i], 0) / CLK) * 100) / 100,
        lost: rounds.reduce((s, r) => s + N - r.seen, 0),
        duplicated: dups,
      }
    }
  } finally {
    fs.rmSync(base, { recursive: true, force: true })
  }
  const cpuRatio = results.file.recipientsCpuS / results.directory.recipientsCpuS
  const checks = {
    allSeenMs: results.file.allSeenMsMedian <= TARGETS.allSeenMs,
    cpuFileOverDirectory: cpuRatio <= TARGETS.cpuFileOverDirectory,
    lost: results.file.lost <= TARGETS.lost,
    duplicated: results.file.duplicated <= TARGETS.duplicated,
  }
  const out = {
    bench: 'fanout',
    recipients: N,
    rounds: ROUNDS,
    machine: { cores: os.availableParallelism(), loadavg: os.loadavg().map((x) => Math.round(x * 10) / 10) },
    ...results,
    cpuFileOverDirectory: Math.round(cpuRatio * 1000) / 1000,
    targets: TARGETS,
    checks,
    missed: Object.entries(checks)
      .filter(([, ok]) => !ok)
      .map(([k]) => k),
  }
  console.log(JSON.stringify(out))
  process.exitCode = out.missed.length ? 1 : 0
}

function cpuTicks(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ')
    return Number(f[11]) + Number(f[12])
  } catch {
    return 0
  }
}

function median(xs) {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
}
