import path from 'node:path'
import { LEAD_NAME } from '../home/paths.js'
import { memberMarker } from '../home/member-marker.js'
import type { Env } from '../home/env.js'
import { readArgv } from '../process/argv.js'
import { isAlive, waitForExit } from '../process/liveness.js'
import { launchDaemon } from '../process/launch.js'
import { markerEnv } from '../process/marker.js'
import { sendSignal } from '../process/signals.js'
import { ensureDir, readFileIfExists, atomicWriteFile } from '../util/fs.js'
import { withFileLock } from '../util/lock.js'
import type { RemoteHost } from './host.js'
import { linkDir } from './link.js'

/*
 * The link's process (`swarm remote link`): one per team and host, started when a member is first
 * placed there (or the team resumed), found again by its pid file, stopped with the team. It
 * carries the team marker, so `team delete` reaps it whatever became of the pid file.
 */

/** How long a stopped link has to close its channel before SIGKILL. */
const LINK_STOP_MS = 3_000

function pidFile(team: string, host: RemoteHost, env: Env): string {
  return path.join(linkDir(team, host, env), 'link.pid')
}

/** The link's pid while it runs. */
export async function linkPid(team: string, host: RemoteHost, env: Env): Promise<number | undefined> {
  const pid = Number((await readFileIfExists(pidFile(team, host, env)))?.trim())
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined
  const argv = readArgv(pid)
  return argv === undefined || (argv.includes('link') && argv.includes(host.spec)) ? pid : undefined
}

/** A running link for `team` to `host` (`argv` starts swarm); started when there is none. Returns its pid. */
export async function ensureLink(team: string, host: RemoteHost, argv: readonly string[], env: Env): Promise<number> {
  const file = pidFile(team, host, env)
  await ensureDir(path.dirname(file))
  return withFileLock(
    `${file}.start`,
    async () => {
      const running = await linkPid(team, host, env)
      if (running !== undefined) return running
      const childEnv = { ...env, ...markerEnv(memberMarker(team, LEAD_NAME, env)) }
      const pid = launchDaemon(argv[0]!, [...argv.slice(1), 'remote', 'link', '--team', team, '--host', host.spec], {
        env: childEnv,
        logFile: path.join(path.dirname(file), 'link.log'),
      })
      await atomicWriteFile(file, `${pid}\n`)
      return pid
    },
    { initial: '' },
  )
}

/** Stops the link (its channel closes, so the relay on the host ends too). */
export async function stopLink(team: string, host: RemoteHost, env: Env): Promise<void> {
  const pid = await linkPid(team, host, env)
  if (pid === undefined) return
  sendSignal(pid, 'SIGTERM')
  if (!(await waitForExit([pid], LINK_STOP_MS))) sendSignal(pid, 'SIGKILL')
}
