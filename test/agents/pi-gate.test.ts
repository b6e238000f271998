import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AgentTeam, agentState, agentTeam, hasCli } from './helpers.js'
import { waitFor } from '../support/wait.js'

// pi in acceptEdits: its write tool goes through swarm's rules, so a protected path is still asked.
const NAME = 'pi-mate'
const idle = (t: AgentTeam) => waitFor(`${NAME} idle`, async () => (await agentState(t, NAME))?.status === 'idle', 60_000)

async function pendingRequests(t: AgentTeam) {
  const r = await t.swarm(['perms', 't', '--json'])
  return (JSON.parse(r.stdout || '{"requests":[]}') as { requests: Array<{ id: string; input: Record<string, unknown> }> }).requests
}

describe.skipIf(!hasCli('pi'))('pi in acceptEdits: file writes go through swarm rules (real CLI)', () => {
  let t: AgentTeam
  beforeAll(async () => {
    t = await agentTeam({
      rules: [
        { userMatches: 'WRITE-PROTECTED', reply: { tool: 'write', args: { path: '.git/hooks/pre-commit', content: '#!/bin/sh\n' } } },
        { userMatches: 'WRITE-CWD', reply: { tool: 'write', args: { path: 'notes.txt', content: 'plain notes\n' } } },
        { afterTool: true, reply: { text: 'The tool finished.' } },
      ],
    })
    expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
    const spawned = await t.swarm([
      'spawn',
      't',
      NAME,
      '--agent',
      'pi',
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

  it('a write into .git/ is asked (and denied here); a write into the cwd is not', async () => {
    await t.swarm(['send', 't', NAME, 'WRITE-PROTECTED now'])
    const asked = await waitFor(
      'the protected write asked',
      async () => (await pendingRequests(t)).find((r) => JSON.stringify(r.input).includes('pre-commit')),
      60_000,
    )
    expect(fs.existsSync(path.join(t.work, '.git', 'hooks', 'pre-commit'))).toBe(false)
    expect((await t.swarm(['perms', 'deny', 't', asked.id, '--feedback', 'no git hooks'])).code).toBe(0)
    await idle(t)
    expect(fs.existsSync(path.join(t.work, '.git', 'hooks', 'pre-commit'))).toBe(false)

    await t.swarm(['send', 't', NAME, 'WRITE-CWD now'])
    await waitFor('notes.txt written', () => fs.existsSync(path.join(t.work, 'notes.txt')), 60_000)
    await idle(t)
    expect(await pendingRequests(t)).toEqual([])
  }, 120_000)
})
