import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { type AgentTeam, agentTeam } from '../agents/helpers.js'
import { waitFor } from '../support/wait.js'
import { bashCliAdapter, writeProjectAdapter } from '../support/bash-cli.js'

/**
 * Adversarial review of the whole-CLI sandbox: a hostile agent-CLI teammate (a shell script
 * through a user-defined adapter, as in sandbox-agent-cli.test.ts) tries what its approved
 * command could — the file descriptors it inherited, directories of the control plane created
 * after it started, and signals across the sandbox boundary into its own pane wrapper.
 */
const PROBE = String.raw`
out="$PWD/probe.out"
rec() { printf '%s: %s\n' "$1" "$2" >> "$out"; }
check() { name=$1; shift; if ( "$@" ) >/dev/null 2>>"$PWD/probe.err"; then rec "$name" yes; else rec "$name" no; fi; }
# What it inherited: every descriptor of the CLI itself, and what each one is.
# (The directory listing's own descriptor shows in the list and is gone by its readlink: skipped.)
rec fds "$(for f in /proc/$$/fd/*; do n=$(basename "$f"); l=$(readlink "$f") || continue; [ "$n" -gt 2 ] && printf '%s=%s ' "$n" "$l"; done)"
rec started yes
while [ ! -e "$PWD/go" ]; do sleep 0.05; done
# The control plane's directories swarm created after the sandbox was set up.
check read-sent-later sh -c 'grep -rq secret-for-gus "$SWARM_HOME/swarm-sent"'
check read-plans-later sh -c 'grep -rq secret-plan "$SWARM_HOME/plans"'
rec phase2 done
while [ ! -e "$PWD/go-signal" ]; do sleep 0.05; done
# Its process group is its pane wrapper's: SIGUSR1 opens Node's inspector there, outside the sandbox.
# Its wrapper outlives it while it settles the sandbox (a scan of its home): a wide tree keeps that door open longer.
mkdir -p "$PROBE_HOME"/w/d{1..120}/e{1..120}
kill -USR1 0
exec sleep 600
`

const ADAPTER = bashCliAdapter(PROBE, { env: { PROBE_HOME: '{{configDir}}' } })

async function start(t: AgentTeam): Promise<string> {
  await writeProjectAdapter(t.work, 'probe', ADAPTER)
  expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
  const spawned = await t.swarm(['spawn', 't', 'fay', '--agent', 'probe', '--backend', 'tmux'])
  expect(spawned.code, spawned.stderr).toBe(0)
  const out = path.join(t.work, 'probe.out')
  await waitFor('the probe to start', async () => (await fs.readFile(out, 'utf8').catch(() => '')).includes('started: yes'), 30_000)
  return out
}

async function results(out: string): Promise<Record<string, string>> {
  const lines = (await fs.readFile(out, 'utf8')).split('\n').filter((l) => l.includes(': '))
  return Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)]))
}

describe('adversarial: a hostile agent-CLI teammate in swarm sandbox', () => {
  let t: AgentTeam
  afterEach(async () => {
    await t?.cleanup()
  }, 30_000)

  it('inherits no descriptor beyond its terminal, and cannot read control-plane directories created after it started', async () => {
    t = await agentTeam()
    const out = await start(t)
    // What swarm writes later: the sent log of a message to a Claude Code teammate, a submitted plan.
    await fs.mkdir(path.join(t.home, 'swarm-sent', 't'), { recursive: true })
    await fs.writeFile(path.join(t.home, 'swarm-sent', 't', 'gus.jsonl'), '{"text":"secret-for-gus"}\n')
    await fs.mkdir(path.join(t.home, 'plans', 't'), { recursive: true })
    await fs.writeFile(path.join(t.home, 'plans', 't', 'gus.md'), 'secret-plan\n')
    await fs.writeFile(path.join(t.work, 'go'), '')
    await waitFor('phase 2', async () => (await fs.readFile(out, 'utf8')).includes('phase2: done'), 15_000)
    const r = await results(out)
    // Past its terminal: bash's own script (255) and the drained pipe bwrap read the seccomp program from (3); no socket, no lock.
    const fds = r.fds
      .trim()
      .split(' ')
      .filter((f) => f && !f.startsWith('255='))
    expect(
      fds.filter((f) => !/^\d+=pipe:\[\d+\]$/.test(f)),
      'descriptors the CLI inherited',
    ).toEqual([])
    expect(r['read-sent-later']).toBe('no')
    expect(r['read-plans-later']).toBe('no')
  }, 60_000)

  it('cannot open a debugger in its pane wrapper with a signal to its process group (another local process would run code outside every sandbox)', async () => {
    t = await agentTeam()
    const out = await start(t)
    const escaped = path.join(t.dir, 'escaped-through-inspector')
    // The accomplice: any process on the loopback — another teammate's sandbox keeps the network.
    let stop = false
    const accomplice = (async () => {
      while (!stop) {
        const url = await inspectorUrl().catch(() => undefined)
        if (url) {
          const argv = await cdpEvaluate(url, 'JSON.stringify(process.argv)').catch(() => undefined)
          if (typeof argv === 'string' && argv.includes('agent-cli') && argv.includes('fay')) {
            await cdpEvaluate(url, `process.getBuiltinModule('fs').writeFileSync(${JSON.stringify(escaped)}, 'ran in the wrapper')`)
            return argv
          }
        }
        await new Promise((r) => setTimeout(r, 10))
      }
      return undefined
    })()
    await fs.writeFile(path.join(t.work, 'go'), '')
    await waitFor('phase 2', async () => (await fs.readFile(out, 'utf8')).includes('phase2: done'), 15_000)
    await fs.writeFile(path.join(t.work, 'go-signal'), '')
    // Its wrapper ends with it (bwrap dies of the signal); give the accomplice that window and more.
    await new Promise((r) => setTimeout(r, 5_000))
    stop = true
    const hit = await accomplice
    expect(hit, 'the wrapper opened an inspector that ran code').toBeUndefined()
    await expect(fs.stat(escaped)).rejects.toThrow()
  }, 60_000)
})

/** The websocket URL of a Node inspector on 127.0.0.1:9229 (what `kill -USR1` opens), if any. */
async function inspectorUrl(): Promise<string | undefined> {
  const res = await fetch('http://127.0.0.1:9229/json/list', { signal: AbortSignal.timeout(500) })
  const list = (await res.json()) as Array<{ webSocketDebuggerUrl?: string }>
  return list[0]?.webSocketDebuggerUrl
}

/** One Runtime.evaluate over the Chrome DevTools protocol (a minimal websocket client: one masked frame out, frames in). */
async function cdpEvaluate(wsUrl: string, expression: string): Promise<unknown> {
  const u = new URL(wsUrl)
  const sock = net.connect(Number(u.port), u.hostname)
  sock.setTimeout(2_000, () => sock.destroy(new Error('timeout')))
  await new Promise<void>((resolve, reject) => sock.once('connect', resolve).once('error', reject))
  const key = randomBytes(16).toString('base64')
  sock.write(
    `GET ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  )
  const payload = Buffer.from(JSON.stringify({ id: 1, method: 'Runtime.evaluate', params: { expression, returnByValue: true } }))
  const mask = randomBytes(4)
  const head =
    payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 255])
  const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]))
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0)
    let upgraded = false
    sock.on('error', reject)
    sock.on('close', () => reject(new Error('closed')))
    sock.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk])
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n')
        if (end < 0) return
        upgraded = true
        buf = buf.subarray(end + 4)
        sock.write(Buffer.concat([head, mask, masked]))
      }
      while (buf.length >= 2) {
        let len = buf[1] & 127
        let off = 2
        if (len === 126) [len, off] = [buf.readUInt16BE(2), 4]
        else if (len === 127) [len, off] = [Number(buf.readBigUInt64BE(2)), 10]
        if (buf.length < off + len) return
        const msg = JSON.parse(buf.subarray(off, off + len).toString('utf8')) as { id?: number; result?: { result?: { value?: unknown } } }
        buf = buf.subarray(off + len)
        if (msg.id === 1) {
          sock.destroy()
          resolve(msg.result?.result?.value)
        }
      }
    })
  })
}
