import fs from 'node:fs'
import path from 'node:path'

/** The repository root and the built CLI that subprocess tests run (dist/ through bin/swarm.js). */
export const REPO = path.resolve(import.meta.dirname, '../..')
export const BIN = path.join(REPO, 'bin/swarm.js')

/** Fails fast, naming the command, when `file` of the build that subprocess tests run is missing. */
export function requireBuilt(file: string): void {
  if (!fs.existsSync(path.join(REPO, file))) throw new Error(`${file} is missing: run "npm run build" before these tests`)
}
