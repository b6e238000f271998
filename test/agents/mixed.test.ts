import { execFile, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import {
  type MixedCli,
  MIXED_CONTENT,
  MIXED_DONE_LABEL,
  MIXED_FILES,
  MIXED_KICKOFF,
  MIXED_MEMBERS,
  MIXED_REPORTS,
  MIXED_TASKS,
  mixedCodexScript,
  mixedGeminiScript,
  mixedLeadScenario,
} from '../../src/demo/mixed-scenario.js'
import { leadPlayed, leadSaw, processesUnder, typeAtLeader, writeClaudeOnboarding } from '../../src/demo/mixed-support.js'
import { startAgentApiServer } from '../../src/loopback-model/agent-api-server.js'
import { startLoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { type AgentTeam, REPO, agentBinDir, agentTeam, claudeBinForTests, hasCli, inboxOf, leftovers, panePids } from './helpers.js'
import { waitFor } from '../support/wait.js'

const run = promisify(execFile)
const CLAUDE = claudeBinForTests()
const missing = [
  ...(hasCli('codex') ? [] : ['codex']),
  ...(hasCli('gemini') ? [] : ['gemini']),
  ...(CLAUDE ? [] : ['the Claude Code binary (npm run test:agents fetches it)']),
]
const KEY = 'sk-agents-mixed-0123456789abcdef'
const ALL: MixedCli[] = ['codex', 'gemini', 'claude']

/** `swarm status` and each pane's last lines, for a timeout's message. */
function statusNow(t: AgentTeam): string {
  const sh = (cmd: string, args: string[]) => {
    try {
      return execFileSync(cmd, args, { env: t.env, encoding: 'utf8', timeout: 10_000 })
    } catch (err) {
      return `(${cmd} ${args[0]}: ${err instanceof Error ? err.message : String(err)})`
    }
  }
  const panes = sh('tmux', ['-L', t.socket, 'list-panes', '-a', '-F', '#{pane_id}'])
    .split('\n')
    .filter((p) => p.startsWith('%'))
  const tails = panes.map(
    (p) => `--- pane ${p} ---\n${sh('tmux', ['-L', t.socket, 'capture-pane', '-p', '-t', p]).trimEnd().split('\n').slice(-15).join('\n')}`,
  )
  return [sh(process.execPath, [path.join(REPO, 'bin', 'swarm.js'), 'status', 't']), ...tails].join('\n')
}

/** The pids of live processes started under `dir`, the test's own tmux server aside (the fixture reaps it). */
async function teamProcesses(dir: string): Promise<number[]> {
  const pids = await processesUnder(dir)
  return pids.filter((p) => {
    try {
      return !fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').startsWith('tmux')
    } catch {
      return false
    }
  })
}

describe.skipIf(missing.length > 0)(
  `a mixed team: swarm lead, Codex, Gemini CLI and Claude Code teammates${missing.length ? ` (skipped: ${missing.join(', ')} not installed)` : ''}`,
  () => {
    let t: AgentTeam | undefined
    afterAll(async () => t?.cleanup(), 30_000)

    it('does the scripted two-task job end to end through `swarm team create`, then `team delete` leaves no process', async () => {
      t = await agentTeam(mixedCodexScript('t'))
      const gemini = await startAgentApiServer({ script: mixedGeminiScript(t.work, '2') })
      const messages = await startLoopbackServer({ scenario: mixedLeadScenario({ project: t.work, present: new Set(ALL) }) })
      try {
        Object.assign(t.env, {
          GOOGLE_GEMINI_BASE_URL: gemini.url,
          ANTHROPIC_BASE_URL: messages.url,
          ANTHROPIC_API_KEY: KEY,
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          SWARM_CLAUDE_BIN: CLAUDE,
        })
        await writeClaudeOnboarding(t.home, t.work, KEY)
        const members = ALL.map((cli) => ({
          name: MIXED_MEMBERS[cli],
          agent: cli,
          ...(cli !== 'claude' && { model: 'loopback' }),
          prompt: 'Wait for team-lead.',
        }))
        const file = path.join(t.dir, 'team.json')
        fs.writeFileSync(file, JSON.stringify({ backend: 'tmux', members }))
        const created = await t.swarm(['team', 'create', 't', '--from', file, '--no-attach'])
        expect(created.code, created.stderr).toBe(0)
        const leaderPane = (await run('tmux', ['-L', t.socket, 'display', '-p', '-t', 'swarm-t:0.0', '#{pane_id}'], { env: t.env })).stdout.trim()
        await typeAtLeader(t.env, leaderPane, MIXED_KICKOFF)

        const approved: string[] = []
        const team = t
        let progress = ''
        await waitFor(
          'both tasks completed and every report at the lead',
          async () => {
            const r = await team.swarm(['perms', 't', '--json'])
            for (const p of (JSON.parse(r.stdout || '{"requests":[]}') as { requests: Array<{ id: string; agent: string; toolName: string }> })
              .requests) {
              if ((await team.swarm(['perms', 'approve', 't', p.id])).code === 0) approved.push(`${p.agent}:${p.toolName}`)
            }
            const tasks = JSON.parse((await team.swarm(['tasks', 't', 'list', '--json'])).stdout) as Array<{ status: string }>
            const reports = leadSaw(messages, Object.values(MIXED_REPORTS))
            progress = `tasks ${tasks.map((x) => x.status).join(',')}; reports at the lead ${reports.length}; approved ${approved.join(',')}; done played ${leadPlayed(messages, MIXED_DONE_LABEL)}`
            return (
              tasks.length === 2 &&
              tasks.every((x) => x.status === 'completed') &&
              leadSaw(messages, Object.values(MIXED_REPORTS)).length === 3 &&
              leadPlayed(messages, MIXED_DONE_LABEL)
            )
          },
          180_000,
          { intervalMs: 250, output: () => `${progress}\n${statusNow(team)}` },
        )
        // Each CLI made its tool calls against its own loopback server: the shell outside Codex's sandbox
        // and Gemini's write were bubbled to the lead and approved.
        expect(approved.sort()).toEqual(['coder:Bash', 'writer:write_file'])
        expect(fs.readFileSync(path.join(t.work, MIXED_FILES.codex), 'utf8')).toBe(`${MIXED_CONTENT.codex}\n`)
        expect(fs.readFileSync(path.join(t.work, MIXED_FILES.gemini), 'utf8')).toBe(`${MIXED_CONTENT.gemini}\n`)
        const tasks = JSON.parse((await t.swarm(['tasks', 't', 'list', '--json'])).stdout) as Array<{
          id: string
          subject: string
          owner?: string
          status: string
        }>
        expect(tasks.map((x) => [x.id, x.subject, x.owner, x.status])).toEqual([
          ['1', MIXED_TASKS.codex, MIXED_MEMBERS.codex, 'completed'],
          ['2', MIXED_TASKS.gemini, MIXED_MEMBERS.gemini, 'completed'],
        ])
        // Each job order was submitted once to its CLI's model.
        expect(t.server.submissionsOf('JOB-STEP-codex')).toHaveLength(1)
        expect(gemini.submissionsOf('JOB-STEP-gemini')).toHaveLength(1)
        // Claude Code read the file it reviewed (its Read tool result carries the content).
        expect(messages.requests.some((r) => r.agent === undefined && JSON.stringify(r.body).includes(MIXED_CONTENT.codex))).toBe(true)
        // The reports came from the teammates themselves: swarm mcp (Codex, Gemini), Claude Code's SendMessage.
        const lead = await inboxOf(t, 'team-lead')
        for (const cli of ALL)
          expect(
            lead.some((m) => m.from === MIXED_MEMBERS[cli] && m.text.startsWith(MIXED_REPORTS[cli])),
            cli,
          ).toBe(true)

        await waitFor(
          'every teammate idle',
          async () => {
            const s = JSON.parse((await team.swarm(['status', 't', '--json'])).stdout) as { members: Array<{ name: string; status: string }> }
            return s.members.filter((m) => m.name !== 'team-lead').every((m) => m.status === 'idle')
          },
          60_000,
          { intervalMs: 250 },
        )
        const sids = await panePids(t.env, t.socket)
        const deleted = await t.swarm(['team', 'delete', 't'])
        expect(deleted.code, deleted.stderr).toBe(0)
        expect(await leftovers(sids)).toEqual([])
        expect(await teamProcesses(t.dir)).toEqual([])
      } finally {
        await Promise.all([gemini.close(), messages.close()])
      }
    }, 240_000)

    it('`swarm demo --mixed --json` runs the same job with the CLIs installed here and leaves nothing behind', async () => {
      const env = {
        PATH: process.env.PATH,
        LANG: 'C.UTF-8',
        TERM: 'xterm-256color',
        NO_COLOR: '1',
        SWARM_AGENT_BIN_DIR: agentBinDir(),
        SWARM_CLAUDE_BIN: CLAUDE,
      }
      const r = await run(process.execPath, [path.join(REPO, 'bin/swarm.js'), 'demo', '--mixed', '--json'], {
        env,
        maxBuffer: 16 * 1024 * 1024,
        timeout: 280_000,
      })
      const summary = JSON.parse(r.stdout) as {
        root: string
        teammates: Array<{ name: string; cli: string }>
        skipped: unknown[]
        tasks: Array<{ status: string; owner?: string }>
        reports: Record<string, string>
        files: Record<string, string>
        leftovers: number[]
      }
      expect(summary.teammates.map((m) => m.cli).sort()).toEqual(['claude', 'codex', 'gemini'])
      expect(summary.skipped).toEqual([])
      expect(summary.tasks.map((x) => [x.owner, x.status])).toEqual([
        [MIXED_MEMBERS.codex, 'completed'],
        [MIXED_MEMBERS.gemini, 'completed'],
      ])
      for (const cli of ALL) expect(summary.reports[MIXED_MEMBERS[cli]]).toContain(MIXED_REPORTS[cli])
      expect(summary.files).toMatchObject({ [MIXED_FILES.codex]: MIXED_CONTENT.codex, [MIXED_FILES.gemini]: MIXED_CONTENT.gemini })
      expect(summary.leftovers).toEqual([])
      expect(r.stderr).toContain('lead agent got: REVIEW PASS')
      expect(fs.existsSync(summary.root)).toBe(false)
      expect(await processesUnder(summary.root)).toEqual([])
    }, 300_000)

    const subsets: MixedCli[][] = [['codex'], ['claude'], ['gemini', 'claude']]
    for (const only of subsets) {
      it(`\`swarm demo --mixed\` with only ${only.join(' and ')} installed: the others are skipped with a note, their part of the job is done`, async () => {
        const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-mixed-bin-'))
        try {
          for (const cli of only) if (cli !== 'claude') fs.symlinkSync(path.join(agentBinDir(), cli), path.join(bin, cli))
          const env = {
            PATH: process.env.PATH,
            LANG: 'C.UTF-8',
            NO_COLOR: '1',
            SWARM_AGENT_BIN_DIR: bin,
            ...(only.includes('claude') && { SWARM_CLAUDE_BIN: CLAUDE }),
          }
          const r = await run(process.execPath, [path.join(REPO, 'bin/swarm.js'), 'demo', '--mixed', '--json'], {
            env,
            maxBuffer: 16 * 1024 * 1024,
            timeout: 200_000,
          })
          const summary = JSON.parse(r.stdout) as {
            teammates: Array<{ cli: string }>
            skipped: Array<{ cli: string }>
            tasks: Array<{ owner?: string; status: string }>
            reports: Record<string, string>
            files: Record<string, string>
            leftovers: number[]
          }
          expect(summary.teammates.map((m) => m.cli)).toEqual(only)
          expect(summary.skipped.map((k) => k.cli).sort()).toEqual(ALL.filter((c) => !only.includes(c)).sort())
          for (const k of summary.skipped) expect(r.stderr).toMatch(new RegExp(`skipping ${k.cli} \\(\\w+\\): not installed — `))
          const owners = only.filter((c) => c !== 'claude')
          expect(summary.tasks.map((x) => [x.owner, x.status])).toEqual(owners.map((c) => [MIXED_MEMBERS[c], 'completed']))
          expect(Object.keys(summary.reports).sort()).toEqual(only.map((c) => MIXED_MEMBERS[c]).sort())
          for (const c of only) expect(summary.reports[MIXED_MEMBERS[c]]).toContain(MIXED_REPORTS[c])
          // Without Codex, Claude Code reviews the greeting the demo wrote itself.
          if (only.includes('claude')) expect(summary.reports[MIXED_MEMBERS.claude]).toContain(summary.files[MIXED_FILES.codex])
          expect(summary.leftovers).toEqual([])
        } finally {
          fs.rmSync(bin, { recursive: true, force: true })
        }
      }, 240_000)
    }
  },
)
