import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { ExitCode, SwarmError } from '../errors.js'
import type { Env } from '../home/env.js'
import { runCommand } from '../process/launch.js'
import { swarmArgv } from '../backends/teammate-launch.js'
import { pathExists } from '../util/fs.js'

/** Packing runs a build first in a checkout whose dist/ is older than src/. */
const PACK_TIMEOUT_MS = 600_000

/**
 * This swarm as the tarball users install (`swarm hosts install`): in a checkout,
 * scripts/pack.mjs (the release's package.json, no development scripts); in an installed package
 * (already the release's), `npm pack` of it. In a temporary directory, removed by cleanup().
 */
export async function packSelf(env: Env): Promise<{ tarball: string; cleanup(): Promise<void> }> {
  const root = path.resolve(path.dirname(swarmArgv()[1]!), '..')
  const out = await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-helper-'))
  const cleanup = () => fs.rm(out, { recursive: true, force: true })
  const script = path.join(root, 'scripts', 'pack.mjs')
  const r = (await pathExists(script))
    ? await runCommand(process.execPath, [script, '--out', out], { cwd: root, env, timeoutMs: PACK_TIMEOUT_MS })
    : await runCommand('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', out], { cwd: root, env, timeoutMs: PACK_TIMEOUT_MS })
  const name = (await fs.readdir(out)).find((f) => f.endsWith('.tgz'))
  if (r.code !== 0 || !name) {
    await cleanup()
    throw new SwarmError('SWARM_PACK', `packing swarm (in ${root}) failed: ${r.stderr.trim().split('\n').at(-1) ?? `exit ${r.code}`}`, {
      exitCode: ExitCode.processFailure,
    })
  }
  return { tarball: path.join(out, name), cleanup }
}
