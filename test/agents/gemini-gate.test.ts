import { describe } from 'vitest'
import { type FileGateCase, itFailsClosed, itGatesFileWrites, useFileGateTeam } from './file-gate.js'
import { hasCli } from './helpers.js'

// Gemini CLI runs in yolo mode: swarm's BeforeTool hook is the only gate. It must fail closed, and
// in acceptEdits its file writes still go through swarm's rules (protected paths are asked).
const gemini = {
  kind: 'gemini',
  write: (file, content) => ({ tool: 'write_file', args: { file_path: file, content } }),
  protectedFile: '.claude/swarm-agents/gemini.yaml',
  shell: (cmd) => ({ tool: 'run_shell_command', args: { command: cmd } }),
} satisfies FileGateCase

describe.skipIf(!hasCli('gemini'))('Gemini CLI: the permission gate fails closed and covers file writes (real CLI, acceptEdits)', () => {
  const team = useFileGateTeam(gemini)
  itFailsClosed(gemini, team)
  itGatesFileWrites(gemini, team)
})
