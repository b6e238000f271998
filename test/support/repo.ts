import path from 'node:path'

/** The repository root and the built CLI that subprocess tests run (dist/ through bin/swarm.js). */
export const REPO = path.resolve(import.meta.dirname, '../..')
export const BIN = path.join(REPO, 'bin/swarm.js')
