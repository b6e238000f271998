import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait.js'
import { type AgentTeam, agentState, agentTeam, hasCli } from './helpers.js'

/**
 * Gemini CLI and Qwen Code have a "shell mode": `!` typed into an empty prompt box turns it on and
 * the line then runs as a shell command with no tool call, so no hook and no lead. A teammate's
 * message that starts with `!` (or has `!` after a newline, or — for Qwen Code's pieces of at most
 * 1000 characters — at the start of a later piece) is delivered as text: it reaches the model, and
 * the command never runs.
 */
for (const kind of ['gemini', 'qwen'] as const) {
  describe.skipIf(!hasCli(kind))(`${kind}: a message starting with \`!\` is text, never a shell command (real CLI)`, () => {
    const name = `${kind}-mate`
    let t: AgentTeam
    beforeAll(async () => {
      t = await agentTeam({ rules: [{ afterTool: true, reply: { text: 'The tool finished.' } }] })
      expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
      const spawned = await t.swarm(['spawn', 't', name, '--agent', kind, '--model', 'loopback', '--backend', 'tmux', '--prompt', 'FIRST say hello'])
      expect(spawned.stderr).toBe('')
      await waitFor(`${name} idle`, async () => (await agentState(t, name))?.status === 'idle', 60_000)
    }, 120_000)
    afterAll(async () => t?.cleanup(), 30_000)

    it('`!touch`, first, after a newline and at a piece boundary, reaches the model and creates nothing', async () => {
      const file = (k: number) => path.join(t.work, `bang-${k}.txt`)
      // "[message from team-lead] " is 25 characters: the padding ends Qwen Code's first 1000-character piece.
      const messages = [`!touch ${file(0)}`, `BANG1\n!touch ${file(1)}`, `${'x'.repeat(975)}!touch ${file(2)} BANG2`]
      const marks = [file(0), 'BANG1', 'BANG2']
      for (let k = 0; k < messages.length; k++) {
        expect((await t.swarm(['send', 't', name, messages[k], '--from', 'team-lead'])).code).toBe(0)
        await waitFor(`message ${k} reached the model`, () => t.server.submissionsOf(marks[k]).length > 0, 60_000)
        await waitFor(`${name} idle`, async () => (await agentState(t, name))?.status === 'idle', 60_000)
        expect(t.server.submissionsOf(marks[k])[0].view?.lastUser).toContain(`!touch ${file(k)}`)
      }
      for (let k = 0; k < messages.length; k++) expect(fs.existsSync(file(k)), file(k)).toBe(false)
    }, 180_000)
  })
}
