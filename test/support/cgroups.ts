import fs from 'node:fs'
import path from 'node:path'
import { memberCgroup } from '../../src/process/containment.js'

/** Whether this system lets swarm make member cgroups (cgroup v2, writable); the probe's directories are removed again. */
export function cgroupsHere(): boolean {
  if (process.platform !== 'linux') return false
  const probeHome = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'swarm-cg-probe-'))
  try {
    const dir = memberCgroup(probeHome, 'probe', process.env)
    if (dir) {
      fs.rmdirSync(dir)
      fs.rmdirSync(path.dirname(dir))
    }
    return dir !== undefined
  } finally {
    fs.rmSync(probeHome, { recursive: true, force: true })
  }
}
