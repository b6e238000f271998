import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait.js'
import { type FileGateCase, gateIdle, itGatesFileWrites, toolResults, useFileGateTeam } from './file-gate.js'
import { hasCli } from './helpers.js'

// Gemini CLI runs in yolo mode: swarm's BeforeTool hook is the only gate. It must fail closed, and
// in acceptEdits its file writes still go through swarm's rules (protected paths are asked).
const gemini: FileGateCase = {
  kind: 'gemini',
  write: (file, content) => ({ tool: 'write_file', args: { file_path: file, content } }),
  protectedFile: '.claude/swarm-agents/gemini.yaml',
  rules: [{ userMatches: 'HOOK-CRASH', reply: { tool: 'run_shell_command', args: { command: 'touch crashed.txt' } } }],
}

describe.skipIf(!hasCli('gemini'))('Gemini CLI: the permission gate fails closed and covers file writes (real CLI, acceptEdits)', () => {
  const team = useFileGateTeam(gemini)

  it('a failing permission hook (pending/ is a file) denies the shell command, and the model is told why', async () => {
    const t = team()
    const pending = path.join(t.home, 'teams', 't', 'permissions', 'pending')
    fs.rmSync(pending, { recursive: true, force: true })
    fs.writeFileSync(pending, 'not a directory')
    try {
      const before = toolResults(t).length
      await t.swarm(['send', 't', 'gemini-mate', 'HOOK-CRASH now'])
      const result = await waitFor('the tool result', () => toolResults(t).slice(before)[0], 60_000)
      expect(result).toContain('swarm could not ask the team lead')
      await gateIdle(t, gemini)
      expect(fs.existsSync(path.join(t.work, 'crashed.txt'))).toBe(false)
    } finally {
      fs.rmSync(pending, { force: true })
    }
  }, 90_000)

  itGatesFileWrites(gemini, team)
})
