import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { AgentReply } from '../../src/loopback-model/agent-script.js'
import { waitFor } from '../support/wait.js'
import { type AgentTeam, agentState, agentTeam } from './helpers.js'

/**
 * The file-gate checks shared by the agent CLIs whose file writes swarm's rules decide: a teammate
 * in acceptEdits (or another mode) writes a protected path (asked, denied here, never written) and
 * a plain file in its cwd (written, not asked); for a CLI whose shell swarm gates, a failing
 * permission hook denies the command. Each CLI names its tools.
 */
export interface FileGateCase {
  kind: string
  /** The CLI's write-tool call writing `content` to `file` (relative to `cwd`, the teammate's). */
  write(file: string, content: string, cwd: string): AgentReply
  /** A protected path, relative to the cwd, that acceptEdits still asks for. */
  protectedFile: string
  /** The swarm mode it is spawned in (default: acceptEdits). */
  mode?: 'acceptEdits' | 'bypassPermissions'
  /** Its shell tool's call running `cmd`, for the fail-closed check (itFailsClosed). */
  shell?: (cmd: string) => AgentReply
}

export const gateName = (c: FileGateCase) => `${c.kind}-mate`

export function gateIdle(t: AgentTeam, c: FileGateCase) {
  return waitFor(`${gateName(c)} idle`, async () => (await agentState(t, gateName(c)))?.status === 'idle', 60_000)
}

export const toolResults = (t: AgentTeam) => t.server.requests.map((r) => r.view?.toolResult ?? '').filter(Boolean)

async function pendingRequests(t: AgentTeam) {
  const r = await t.swarm(['perms', 't', '--json'])
  return (JSON.parse(r.stdout || '{"requests":[]}') as { requests: Array<{ id: string; input: Record<string, unknown> }> }).requests
}

/** Starts the CLI's teammate in its mode once for the file (beforeAll); returns a getter for its team. */
export function useFileGateTeam(c: FileGateCase): () => AgentTeam {
  let t: AgentTeam
  beforeAll(async () => {
    t = await agentTeam()
    t.server.setScript({
      rules: [
        ...(c.shell ? [{ userMatches: 'HOOK-CRASH', reply: c.shell('touch crashed.txt') }] : []),
        { userMatches: 'WRITE-PROTECTED', reply: c.write(c.protectedFile, '#!/bin/sh\n', t.work) },
        { userMatches: 'WRITE-CWD', reply: c.write('notes.txt', 'plain notes\n', t.work) },
        { afterTool: true, reply: { text: 'The tool finished.' } },
      ],
    })
    expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
    const spawned = await t.swarm(
      ['spawn', 't', gateName(c), '--agent', c.kind, '--model', 'loopback', '--backend', 'tmux', '--mode', c.mode ?? 'acceptEdits'].concat([
        '--prompt',
        'FIRST say hello',
      ]),
    )
    expect(spawned.stderr).toBe('')
    await gateIdle(t, c)
  }, 120_000)
  afterAll(async () => t?.cleanup(), 30_000)
  return () => t
}

/** The shared check: the protected write is asked (the state says waiting) and denied; the cwd write is not asked. */
export function itGatesFileWrites(c: FileGateCase, team: () => AgentTeam): void {
  it(`${c.mode ?? 'acceptEdits'}: a write into ${c.protectedFile} is asked (and denied here); a write into the cwd is not`, async () => {
    const t = team()
    const target = path.join(t.work, c.protectedFile)
    await t.swarm(['send', 't', gateName(c), 'WRITE-PROTECTED now'])
    const asked = await waitFor(
      'the protected write asked',
      async () => (await pendingRequests(t)).find((r) => JSON.stringify(r.input).includes(path.basename(c.protectedFile))),
      60_000,
      { output: () => JSON.stringify([toolResults(t), fs.existsSync(target)]) },
    )
    expect((await agentState(t, gateName(c)))?.status).toBe('waiting')
    expect(fs.existsSync(target)).toBe(false)
    const denied = await t.swarm(['perms', 'deny', 't', asked.id, '--feedback', 'not that file'])
    expect(denied.code, denied.stderr).toBe(0)
    await gateIdle(t, c)
    expect(fs.existsSync(target)).toBe(false)

    await t.swarm(['send', 't', gateName(c), 'WRITE-CWD now'])
    await waitFor('notes.txt written', () => fs.existsSync(path.join(t.work, 'notes.txt')), 60_000, {
      output: () => JSON.stringify(toolResults(t).slice(-2)),
    })
    await gateIdle(t, c)
    expect(await pendingRequests(t)).toEqual([])
    expect(fs.readFileSync(path.join(t.work, 'notes.txt'), 'utf8')).toBe('plain notes\n')
  }, 120_000)
}

/** A failing permission hook (pending/ is a file) denies the shell command, and the model is told why. */
export function itFailsClosed(c: FileGateCase & { shell: NonNullable<FileGateCase['shell']> }, team: () => AgentTeam): void {
  it('a failing permission hook (pending/ is a file) denies the shell command, and the model is told why', async () => {
    const t = team()
    const pending = path.join(t.home, 'teams', 't', 'permissions', 'pending')
    fs.rmSync(pending, { recursive: true, force: true })
    fs.writeFileSync(pending, 'not a directory')
    try {
      const before = toolResults(t).length
      await t.swarm(['send', 't', gateName(c), 'HOOK-CRASH now'])
      const result = await waitFor('the tool result', () => toolResults(t).slice(before)[0], 60_000)
      // The one ask flow records nothing it cannot write, withdraws the ask and says why (asks/ask.ts).
      expect(result).toContain('could not ask team-lead')
      await gateIdle(t, c)
      expect(fs.existsSync(path.join(t.work, 'crashed.txt'))).toBe(false)
    } finally {
      fs.rmSync(pending, { force: true })
    }
  }, 90_000)
}
