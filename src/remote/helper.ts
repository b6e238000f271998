import { z } from 'zod'
import { ExitCode, SwarmError } from '../errors.js'
import type { Env } from '../home/env.js'
import type { HostConnection } from './connection.js'
import { swarmVersion } from './version.js'

/*
 * swarm on the host: every call runs `swarm remote …` there (SWARM_REMOTE_SWARM: the command line
 * that starts it, default `swarm` on the remote user's PATH), from the remote user's HOME, with
 * arguments quoted for its shell. The handshake refuses a helper of another version, naming the
 * command that installs this one.
 */

/** One word for a POSIX shell: single-quoted. */
export function shellWord(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`
}

/** The command line for the remote shell: `cd && exec <swarm> <args…>` (cd: the remote HOME, never a local path). */
export function remoteSwarm(env: Env, args: readonly string[]): string {
  const swarm = env.SWARM_REMOTE_SWARM || 'swarm'
  return `cd && exec ${swarm} ${args.map(shellWord).join(' ')}`
}

/** What the helper reports of its machine (`swarm remote hello`): the handshake and `swarm hosts check`. */
export const HelloReport = z.object({
  version: z.string(),
  protocol: z.number(),
  node: z.string(),
  platform: z.string(),
  home: z.string(),
  root: z.string(),
  /** Each tool the remote may need, with its version line, or null when missing. */
  tools: z.record(z.string(), z.string().nullable()),
})
export type HelloReport = z.infer<typeof HelloReport>

/** The helper's report; SwarmError when there is no helper or it answers nothing readable. */
export async function hello(conn: HostConnection, env: Env): Promise<HelloReport> {
  const r = await conn.run(remoteSwarm(env, ['remote', 'hello']))
  if (r.code === 127 || /not found/.test(r.stderr)) throw missingHelper(conn.host.spec, r.stderr)
  if (r.code !== 0) {
    throw new SwarmError('SWARM_REMOTE_HELPER', `swarm on ${conn.host.spec} failed (exit ${r.code}): ${r.stderr.trim().split('\n').at(-1) ?? ''}`, {
      exitCode: ExitCode.backendUnavailable,
      hint: installHint(conn.host.spec),
    })
  }
  const parsed = HelloReport.safeParse(safeJson(r.stdout))
  if (!parsed.success) throw missingHelper(conn.host.spec, 'its `swarm remote hello` printed no report (an older swarm?)')
  return parsed.data
}

/** The handshake before a host gets work: its helper, of this version. */
export async function handshake(conn: HostConnection, env: Env): Promise<HelloReport> {
  const report = await hello(conn, env)
  if (report.version !== swarmVersion()) {
    throw new SwarmError('SWARM_REMOTE_VERSION', `swarm on ${conn.host.spec} is ${report.version}; this one is ${swarmVersion()}`, {
      exitCode: ExitCode.backendUnavailable,
      hint: installHint(conn.host.spec),
    })
  }
  return report
}

function installHint(host: string): string {
  return `install this version there: ssh ${host} npm install -g swarm-supervisor@${swarmVersion()} (or set SWARM_REMOTE_SWARM to the command that starts it)`
}

function missingHelper(host: string, why: string): SwarmError {
  return new SwarmError('SWARM_REMOTE_HELPER', `no swarm helper on ${host}: ${why.trim().split('\n').at(-1) ?? ''}`, {
    exitCode: ExitCode.backendUnavailable,
    hint: installHint(host),
  })
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
