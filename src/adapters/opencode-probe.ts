/**
 * `swarm doctor`'s check of opencode's control channel: `opencode serve` on a free port, in a
 * throwaway home (its own XDG dirs, offline variables, a password), must open its SSE `/event`
 * stream and send `server.connected` within the time limit; then it is stopped and the home removed.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { errorMessage } from '../errors.js'
import { delay } from '../process/delay.js'
import { launchProcess } from '../process/launch.js'
import { OpencodeApi, freePort } from './opencode-api.js'
import { OPENCODE_QUIET_ENV, opencodeDirs, writeOpencodeConfigDir } from './opencode-home.js'

const PROBE_MS = 20_000

export async function probeOpencode(binary: string, env: NodeJS.ProcessEnv): Promise<string> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-opencode-probe-'))
  const dirs = opencodeDirs(home)
  await writeOpencodeConfigDir(dirs.XDG_CONFIG_HOME, { autoupdate: false, share: 'disabled' })
  const port = await freePort()
  const password = randomBytes(12).toString('base64url')
  const child = launchProcess(binary, ['serve', '--port', String(port)], {
    cwd: home,
    env: { PATH: env.PATH, HOME: home, ...dirs, ...OPENCODE_QUIET_ENV, OPENCODE_SERVER_PASSWORD: password },
  })
  const exited = child.exited.then((s) =>
    s.error ? `opencode serve did not start: ${s.error}` : `opencode serve exited (${s.code}) before its event stream opened`,
  )
  const api = new OpencodeApi(`http://127.0.0.1:${port}`, password)
  const stop = new AbortController()
  const connected = (async (): Promise<string> => {
    const deadline = Date.now() + PROBE_MS
    let last = 'no answer'
    while (Date.now() < deadline && !stop.signal.aborted) {
      let seen = false
      try {
        await api.events((e) => {
          if (e.type === 'server.connected') {
            seen = true
            stop.abort()
          }
        }, stop.signal)
      } catch (err) {
        if (seen) return 'ok'
        last = errorMessage(err)
      }
      if (seen) return 'ok'
      await delay(200)
    }
    return `its event stream did not open within ${PROBE_MS / 1000} s (${last})`
  })()
  try {
    return await Promise.race([connected, exited])
  } finally {
    stop.abort()
    await child.stop().catch(() => undefined) // its answer is the probe's result; the child is tracked and killed at exit anyway
    await fs.rm(home, { recursive: true, force: true }).catch(() => undefined) // a temp dir: best effort
  }
}
