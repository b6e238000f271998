import { spawn } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import puppeteer, { type Browser } from 'puppeteer-core'
import { BIN, REPO } from '../support/repo.js'
import { track, type Fixture } from '../support/agent-team.js'
import { waitFor } from '../support/wait.js'

/**
 * The web tests' parts: the real `swarm web` (bin/swarm.js, a child process in the fixture's
 * home), Debian's Chromium driven by puppeteer-core with a profile in the test's temp dir, and
 * plain HTTP requests for what a hostile client would send.
 */

export const CHROMIUM = process.env.SWARM_CHROMIUM ?? '/usr/bin/chromium'
export const hasChromium = fs.existsSync(CHROMIUM)
/** Where screenshots are kept (gitignored): `artefacts/web/`. */
export const ARTEFACTS = path.join(REPO, 'artefacts', 'web')

export interface RunningWeb {
  url: string
  origin: string
  output(): string
  /** Waits until the server has printed `text` (its log reaches the test through a pipe, after the response). */
  printed(text: string): Promise<void>
  exited: Promise<number | null>
  stop(): Promise<unknown>
}

/** `swarm web <args>` in the fixture's home; resolves once it printed its URL, stopped after the test. */
export async function startWeb(fx: Fixture, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<RunningWeb> {
  const child = spawn(process.execPath, [BIN, 'web', ...args], { env: { ...fx.env, ...env }, cwd: fx.cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    return exited
  }
  track('swarm web', stop, () => out)
  const url = await waitFor('swarm web URL', () => /open (http:\/\/\S+)/.exec(out)?.[1], 15_000, { output: () => out })
  const printed = async (text: string) => {
    await waitFor(`swarm web to print ${JSON.stringify(text)}`, () => out.includes(text), 10_000, { output: () => out })
  }
  return { url, origin: new URL(url).origin, output: () => out, printed, exited, stop }
}

/** One headless Chromium, its profile in `dir`, closed (and its processes gone) by `close`. */
export async function launchBrowser(dir: string, home: string): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: path.join(dir, 'chromium-profile'),
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-dev-shm-usage', '--disable-extensions'],
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_CACHE_HOME: path.join(home, '.cache') },
  })
}

export interface RawResponse {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

/** A plain HTTP request with exactly these headers (Host and Origin included): what any client could send — from `localAddress` (127.0.0.x: another client). */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const o = {
      method: options.method ?? 'GET',
      headers: options.headers ?? {},
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
    }
    const req = http.request(url, o, (res) => {
      let body = ''
      res.on('data', (d) => {
        body += d
        // An event stream does not end: its first event is enough.
        if (String(res.headers['content-type']).startsWith('text/event-stream') && body.includes('\n\n')) res.destroy()
      })
      res.on('close', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on('error', reject)
    req.end(options.body)
  })
}

/** The session cookie the printed URL's token is exchanged for (`swarm_web=…`). */
export async function login(web: RunningWeb): Promise<string> {
  const r = await rawRequest(web.url, { headers: { host: new URL(web.url).host } })
  const cookie = String(r.headers['set-cookie'] ?? '').split(';')[0]
  if (r.status !== 303 || !cookie.startsWith('swarm_web=')) throw new Error(`no session from ${web.url}: ${r.status} ${r.body}`)
  return cookie
}
