import fs from 'node:fs/promises'
import { ExitCode, SwarmError } from '../errors.js'
import type { HostConnection } from './connection.js'
import { remoteHelperDir, shellWord } from './helper.js'
import { swarmVersion } from './version.js'

/*
 * The helper installed on a host over its connection (`swarm hosts install <host>`): the packed
 * tarball (`npm pack`'s, as users install it) streamed through the channel as base64, unpacked
 * on the host into `<remote state root>/swarm-helper/<version>/package`, checked, then moved into
 * place (a half-made install is never the one that runs). Nothing is fetched there: the CLI
 * bundle (dist/bundle, scripts/bundle.mjs) carries every dependency the helper and its members
 * run, so the host needs only node and tar — no npm, no registry. remoteSwarm (helper.ts) runs
 * that copy when it is there, before any `swarm` on the PATH.
 */

/** Unpacking and checking a few MB on the host, at the end of a slow link. */
const INSTALL_TIMEOUT_MS = 180_000

export interface Installed {
  /** The helper's path on the host. */
  bin: string
  bytes: number
  ms: number
}

/** Sends `tarball` (this swarm, packed) to the host and installs it there. */
export async function installHelper(conn: HostConnection, tarball: string): Promise<Installed> {
  const started = Date.now()
  const bytes = await fs.readFile(tarball)
  const dir = remoteHelperDir()
  const version = swarmVersion()
  const script = [
    'set -e',
    `d=${dir}`,
    'rm -rf "$d.new"',
    'mkdir -p "$d.new"',
    'base64 -d > "$d.new/swarm.tgz"',
    'tar -xzf "$d.new/swarm.tgz" -C "$d.new"',
    'rm -f "$d.new/swarm.tgz"',
    // The copy answers with this version before it replaces the one in place.
    `v=$(node "$d.new/package/bin/swarm.js" --version)`,
    `[ "$v" = ${shellWord(version)} ] || { echo "the unpacked helper says $v" >&2; exit 3; }`,
    'rm -rf "$d"',
    'mv "$d.new" "$d"',
    'echo "$d/package/bin/swarm.js"',
  ].join('\n')
  const r = await conn.run(`sh -c ${shellWord(script)}`, { input: bytes.toString('base64'), timeoutMs: INSTALL_TIMEOUT_MS })
  if (r.code !== 0) {
    throw new SwarmError(
      'SWARM_REMOTE_INSTALL',
      `installing swarm ${version} on ${conn.host.spec} failed: ${r.stderr.trim().split('\n').at(-1) ?? `exit ${r.code}`}`,
      {
        exitCode: ExitCode.processFailure,
        hint: 'the host needs node (≥ 20.19), tar and base64 on its PATH for non-interactive shells',
      },
    )
  }
  return { bin: r.stdout.trim().split('\n').at(-1) ?? '', bytes: bytes.length, ms: Date.now() - started }
}
