import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AgentTeam, agentState, agentTeam, hasCli } from './helpers.js'
import { waitFor } from '../support/wait.js'

// Gemini CLI runs in yolo mode: swarm's BeforeTool hook is the only gate. It must fail closed, and
// in acceptEdits its file writes still go through swarm's rules (protected paths are asked).
const NAME = 'gemini-mate'
const ADAPTER_FILE = '.claude/swarm-agents/gemini.yaml'
const idle = (t: AgentTeam) => waitFor(`${NAME} idle`, async () => (await agentState(t, NAME))?.status === 'idle', 60_000)
const toolResults = (t: AgentTeam) => t.server.requests.map((r) => r.view?.toolResult ?? '').filter(Boolean)

async function pendingRequests(t: AgentTeam) {
  const r = await t.swarm(['perms', 't', '--json'])
  return (JSON.parse(r.stdout || '{"requests":[]}') as { requests: Array<{ id: string; input: Record<string, unknown> }> }).requests
}

describe.skipIf(!hasCli('gemini'))('Gemini CLI: the permission gate fails closed and covers file writes (real CLI, acceptEdits)', () => {
  let t: AgentTeam
  beforeAll(async () => {
    t = await agentTeam({
      rules: [
        { userMatches: 'HOOK-CRASH', reply: { tool: 'run_shell_command', args: { command: 'touch crashed.txt' } } },
        { userMatches: 'WRITE-PROTECTED', reply: { tool: 'write_file', args: { file_path: ADAPTER_FILE, content: 'binary: gemini\n' } } },
        { userMatches: 'WRITE-CWD', reply: { tool: 'write_file', args: { file_path: 'notes.txt', content: 'plain notes\n' } } },
        { afterTool: true, reply: { text: 'The tool finished.' } },
      ],
    })
    expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
    const spawned = await t.swarm([
      'spawn',
      't',
      NAME,
      '--agent',
      'gemini',
      '--model',
      'loopback',
      '--backend',
      'tmux',
      '--mode',
      'acceptEdits',
      '--prompt',
      'FIRST say hello',
    ])
    expect(spawned.stderr).toBe('')
    await idle(t)
  }, 120_000)
  afterAll(async () => t?.cleanup(), 30_000)

  it('a failing permission hook (pending/ is a file) denies the shell command, and the model is told why', async () => {
    const pending = path.join(t.home, 'teams', 't', 'permissions', 'pending')
    fs.rmSync(pending, { recursive: true, force: true })
    fs.writeFileSync(pending, 'not a directory')
    try {
      const before = toolResults(t).length
      await t.swarm(['send', 't', NAME, 'HOOK-CRASH now'])
      const result = await waitFor('the tool result', () => toolResults(t).slice(before)[0], 60_000)
      expect(result).toContain('swarm could not ask the team lead')
      await idle(t)
      expect(fs.existsSync(path.join(t.work, 'crashed.txt'))).toBe(false)
    } finally {
      fs.rmSync(pending, { force: true })
    }
  }, 90_000)

  it('acceptEdits: a write_file into .claude/ is asked (and denied here); a write into the cwd is not', async () => {
    await t.swarm(['send', 't', NAME, 'WRITE-PROTECTED now'])
    const asked = await waitFor(
      'the protected write asked',
      async () => (await pendingRequests(t)).find((r) => JSON.stringify(r.input).includes('swarm-agents')),
      60_000,
    )
    expect((await agentState(t, NAME))?.status).toBe('waiting')
    expect(fs.existsSync(path.join(t.work, ADAPTER_FILE))).toBe(false)
    const denied = await t.swarm(['perms', 'deny', 't', asked.id, '--feedback', 'not the adapter files'])
    expect(denied.code, denied.stderr).toBe(0)
    await idle(t)
    expect(fs.existsSync(path.join(t.work, ADAPTER_FILE))).toBe(false)

    await t.swarm(['send', 't', NAME, 'WRITE-CWD now'])
    await waitFor('notes.txt written', () => fs.existsSync(path.join(t.work, 'notes.txt')), 60_000, {
      output: () => JSON.stringify(toolResults(t).slice(-2)),
    })
    await idle(t)
    expect(await pendingRequests(t)).toEqual([])
    expect(fs.readFileSync(path.join(t.work, 'notes.txt'), 'utf8')).toBe('plain notes\n')
  }, 120_000)
})
