import { describe } from 'vitest'
import { type FileGateCase, itGatesFileWrites, useFileGateTeam } from './file-gate.js'
import { hasCli } from './helpers.js'

// opencode in acceptEdits: its edit permission is asked of swarm, whose rules ask for a protected path only.
const opencode: FileGateCase = {
  kind: 'opencode',
  write: (file, content) => ({ tool: 'write', args: { filePath: file, content } }),
  protectedFile: '.claude/swarm-agents/opencode.yaml',
}

describe.skipIf(!hasCli('opencode'))('opencode in acceptEdits: file edits go through swarm rules (real CLI)', () => {
  itGatesFileWrites(opencode, useFileGateTeam(opencode))
})
