import { describe } from 'vitest'
import { type FileGateCase, itGatesFileWrites, useFileGateTeam } from './file-gate.js'
import { hasCli } from './helpers.js'

// pi in acceptEdits: its write tool goes through swarm's rules, so a protected path is still asked.
const pi: FileGateCase = {
  kind: 'pi',
  write: (file, content) => ({ tool: 'write', args: { path: file, content } }),
  protectedFile: '.git/hooks/pre-commit',
}

describe.skipIf(!hasCli('pi'))('pi in acceptEdits: file writes go through swarm rules (real CLI)', () => {
  itGatesFileWrites(pi, useFileGateTeam(pi))
})
