import path from 'node:path'
import { describe } from 'vitest'
import { type FileGateCase, itFailsClosed, itGatesFileWrites, useFileGateTeam } from './file-gate.js'
import { hasCli } from './helpers.js'

// Its write_file takes absolute paths only.
const write: FileGateCase['write'] = (file, content, cwd) => ({ tool: 'write_file', args: { file_path: path.join(cwd, file), content } })

// acceptEdits: Qwen Code in its `default` approval mode asks before writes and the shell; its
// PermissionRequest hook is swarm's gate, which must fail closed and put writes through swarm's
// rules — `.qwen/settings.json` (its hooks, MCP servers) is a protected path.
const asking = {
  kind: 'qwen',
  write,
  protectedFile: '.qwen/settings.json',
  shell: (cmd) => ({ tool: 'run_shell_command', args: { command: cmd } }),
} satisfies FileGateCase

// bypassPermissions: it runs `yolo`, asking nothing; a PreToolUse hook still puts its file writes through swarm's rules.
const yolo: FileGateCase = { kind: 'qwen', write, protectedFile: '.claude/swarm-agents/qwen.yaml', mode: 'bypassPermissions' }

describe.skipIf(!hasCli('qwen'))(
  'Qwen Code: its permission prompts fail closed and file writes go through swarm rules (real CLI, acceptEdits)',
  () => {
    const team = useFileGateTeam(asking)
    itFailsClosed(asking, team)
    itGatesFileWrites(asking, team)
  },
)

describe.skipIf(!hasCli('qwen'))('Qwen Code in bypassPermissions (yolo): file writes still go through swarm rules (real CLI)', () => {
  itGatesFileWrites(yolo, useFileGateTeam(yolo))
})
