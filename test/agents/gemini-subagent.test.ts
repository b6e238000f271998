import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait.js'
import { type AgentTeam, agentState, agentTeam, hasCli, pendingRequests, spawnCliTeammate } from './helpers.js'

/**
 * Gemini CLI's subagents: the model calls `invoke_agent` (its built-in `generalist` has every
 * tool), and the subagent's own model turn calls `run_shell_command`. That inner call must reach
 * swarm's BeforeTool hook and be bubbled to `swarm perms` like a top-level one: approve runs it,
 * deny does not. Real Gemini CLI against swarm's Gemini loopback server.
 */
const NAME = 'gemini-mate'

const seen = (t: AgentTeam) =>
  JSON.stringify(t.server.requests.filter((r) => !r.aux).map((r) => r.view?.toolResult?.slice(0, 200) ?? r.view?.lastUser?.slice(0, 80)))

describe.skipIf(!hasCli('gemini'))('Gemini CLI subagents (invoke_agent): their shell calls are asked of the lead', () => {
  let t: AgentTeam
  const idle = () => waitFor(`${NAME} idle`, async () => (await agentState(t, NAME))?.status === 'idle', 90_000, { output: () => seen(t) })
  beforeAll(async () => {
    const delegate = (word: string) => ({
      tool: 'invoke_agent',
      args: { agent_name: 'generalist', prompt: `${word} run the command you are given` },
    })
    t = await agentTeam({
      rules: [
        // The lead session delegates; the subagent's first turn (its query) runs the shell.
        { userMatches: 'DELEGATE-APPROVE', reply: delegate('INNER-APPROVE') },
        { userMatches: 'DELEGATE-DENY', reply: delegate('INNER-DENY') },
        { userMatches: 'INNER-APPROVE', reply: { tool: 'run_shell_command', args: { command: 'touch sub-approved.txt' } } },
        { userMatches: 'INNER-DENY', reply: { tool: 'run_shell_command', args: { command: 'touch sub-denied.txt' } } },
        // The subagent's result back in the lead session ends the turn.
        { toolResultIncludes: 'SUBAGENT-DONE', reply: { text: 'The subagent finished.' } },
        // Any other tool result is the subagent's shell result: it completes its task.
        { afterTool: true, reply: { tool: 'complete_task', args: { result: { response: 'SUBAGENT-DONE' } } } },
      ],
    })
    await spawnCliTeammate(t, NAME, 'gemini')
    await idle()
  }, 120_000)
  afterAll(async () => t?.cleanup(), 30_000)

  it("the subagent's run_shell_command is bubbled to swarm perms: approve runs it, deny does not", async () => {
    for (const [word, file, decision] of [
      ['DELEGATE-APPROVE', 'sub-approved.txt', 'approve'],
      ['DELEGATE-DENY', 'sub-denied.txt', 'deny'],
    ] as const) {
      await t.swarm(['send', 't', NAME, `${word} now`])
      const asked = await waitFor(
        `the subagent's touch ${file} pending`,
        async () => (await pendingRequests(t)).find((p) => JSON.stringify(p.input).includes(`touch ${file}`)),
        90_000,
        { output: () => seen(t) },
      )
      expect(asked.agent).toBe(NAME)
      expect((await agentState(t, NAME))?.status).toBe('waiting')
      expect(fs.existsSync(path.join(t.work, file))).toBe(false)
      const answered = await t.swarm(['perms', decision, 't', asked.id, ...(decision === 'deny' ? ['--feedback', 'not from a subagent'] : [])])
      expect(answered.code, answered.stderr).toBe(0)
      await idle()
    }
    expect(fs.existsSync(path.join(t.work, 'sub-approved.txt'))).toBe(true)
    expect(fs.existsSync(path.join(t.work, 'sub-denied.txt'))).toBe(false)
    // The subagent's model was asked (its query arrived as a turn of its own), it was told the
    // lead's feedback, and its completion came back to the lead session as invoke_agent's result.
    const results = t.server.requests.map((r) => r.view?.toolResult ?? '')
    expect(t.server.requests.some((r) => r.view?.lastUser?.includes('INNER-APPROVE'))).toBe(true)
    expect(results.some((r) => r.includes('not from a subagent'))).toBe(true)
    expect(results.filter((r) => r.includes('SUBAGENT-DONE'))).toHaveLength(2)
  }, 240_000)
})
