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

/**
 * The command line for the remote shell: `cd && exec <swarm> <args…>` (cd: the remote HOME, never
 * a local path). <swarm> is SWARM_REMOTE_SWARM when set; else the helper of this version that
 * `swarm hosts install` put under the host's state root (remote/install.ts), when it is there;
 * else `swarm` on the remote user's PATH.
 */
export function remoteSwarm(env: Env, args: readonly string[]): string {
  const words = args.map(shellWord).join(' ')
  if (env.SWARM_REMOTE_SWARM) return `cd && exec ${env.SWARM_REMOTE_SWARM} ${words}`
  return `cd && h=${remoteHelperBin()} && if [ -f "$h" ]; then exec node "$h" ${words}; fi; exec swarm ${words}`
}

/** The host's state root in its shell, as home/paths.ts rootDir() resolves it there. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: a shell's parameter expansion, not a template
const REMOTE_ROOT = '${SWARM_HOME:-${CLAUDE_CONFIG_DIR:-$HOME/.claude}}'

/** Where the helper of `version` lives on a host, as a double-quoted shell word. */
export function remoteHelperDir(version = swarmVersion()): string {
  if (!/^[\w.+-]+$/.test(version)) throw new SwarmError('SWARM_VERSION', `a version that is no file name: ${version}`)
  return `"${REMOTE_ROOT}/swarm-helper/${version}"`
}

/** Its entry there (bin/swarm.js of the unpacked package). */
export function remoteHelperBin(version = swarmVersion()): string {
  return `${remoteHelperDir(version).slice(0, -1)}/package/bin/swarm.js"`
}

/** What the helper reports of its machine (`swarm remote hello`): the handshake and `swarm hosts check`. */
export const HelloReport = z.object({
  version: z.string(),
  protocol: z.number(),
  node: z.string(),
  platform: z.string(),
  home: z.string(),
  root: z.string(),
  /** The helper's entry there (its bin/swarm.js): an installed one, or the swarm on the PATH. */
  bin: z.string().optional(),
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
  return `install this version there: swarm hosts install ${host} (or set SWARM_REMOTE_SWARM to the command that starts it)`
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
