/**
 * `swarm demo --mixed`: a swarm lead (the leader console's lead agent) with Codex, Gemini CLI and
 * Claude Code teammates — the CLIs installed here, found on PATH / SWARM_AGENT_BIN_DIR /
 * SWARM_CLAUDE_BIN — does the two-task job of mixed-scenario.ts offline, against loopback servers
 * started here, in a temp project, home and tmux server of its own; then the team is deleted and
 * nothing it started may survive. Exit 7 when tmux or every CLI is missing.
 */
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pc from 'picocolors'
import { locateAgentBinary } from '../adapters/binary.js'
import { CLAUDE_INSTALL_HINT, findClaudeBinary } from '../adapters/claude.js'
import { closeServer } from '../backends/registry.js'
import { BackendUnavailableError, ExitCode, SwarmError, errorMessage } from '../errors.js'
import { busyMembers, deleteTeamFully, startTeam } from '../leader/lifecycle.js'
import { type AgentApiServer, startAgentApiServer } from '../loopback-model/agent-api-server.js'
import { type LoopbackServer, startLoopbackServer } from '../loopback-model/loopback-server.js'
import { answerRequest, listRequests } from '../permissions/requests/broker.js'
import { delay } from '../process/delay.js'
import { runCommand } from '../process/launch.js'
import { sendSignal } from '../process/signals.js'
import { listTasks } from '../tasks/task-store.js'
import { createTeam, readTeam } from '../teams/team-store.js'
import { decide } from './demo.js'
import {
  MIXED_DONE_LABEL,
  MIXED_FILES,
  MIXED_KICKOFF,
  MIXED_MEMBERS,
  MIXED_REPORTS,
  type MixedCli,
  mixedCodexScript,
  mixedGeminiScript,
  mixedLeadScenario,
  reviewedText,
} from './mixed-scenario.js'
import {
  type Colors,
  leadPlayed,
  leadSaw,
  processesUnder,
  projectFiles,
  typeAtLeader,
  withoutProviderVars,
  writeClaudeOnboarding,
} from './mixed-support.js'

export const MIXED_TIMEOUT_MS = 240_000
const TEAM = 'mixed'
const API_KEY = 'sk-swarm-demo-mixed-0123456789'

const INSTALL: Record<MixedCli, string> = {
  codex: 'npm install -g @openai/codex (or put its bin directory in SWARM_AGENT_BIN_DIR)',
  gemini: 'npm install -g @google/gemini-cli (or put its bin directory in SWARM_AGENT_BIN_DIR)',
  claude: CLAUDE_INSTALL_HINT,
}

export interface MixedDemoOptions {
  keep?: boolean
  /** Answer permission prompts at this terminal (default: when stdin and stdout are TTYs). */
  interactive?: boolean
  out?: NodeJS.WritableStream
  /** The environment the CLIs are looked up in (default: process.env). */
  env?: NodeJS.ProcessEnv
  /** Ctrl-C / SIGTERM: the job stops and the team is deleted as at the end. */
  signal?: AbortSignal
}

export interface MixedDemoSummary {
  ms: number
  root: string
  /** Which CLI ran which teammate, and the ones skipped (not installed). */
  teammates: Array<{ name: string; cli: MixedCli; binary: string }>
  skipped: Array<{ cli: MixedCli; install: string }>
  tasks: Array<{ id: string; subject: string; owner?: string; status: string }>
  /** The reports the lead agent's model requests carried, by teammate. */
  reports: Record<string, string>
  files: Record<string, string>
  permissions: Array<{ agent: string; tool: string; decision: string }>
  /** Model requests per loopback server (turns, side queries excluded). */
  requests: Record<string, number>
  /** Processes still running after `team delete` (killed then): none is the goal. */
  leftovers: number[]
}

/** The CLIs found here: codex and gemini on PATH / SWARM_AGENT_BIN_DIR, Claude Code by SWARM_CLAUDE_BIN or PATH. */
export function findMixedClis(env: NodeJS.ProcessEnv): { found: Map<MixedCli, string>; missing: MixedCli[] } {
  const found = new Map<MixedCli, string>()
  for (const cli of ['codex', 'gemini'] as const) {
    const bin = locateAgentBinary({ binary: cli }, env)
    if (bin.found) found.set(cli, bin.path)
  }
  try {
    found.set('claude', findClaudeBinary(env))
  } catch {
    // not installed: skipped with a note
  }
  return { found, missing: (['codex', 'gemini', 'claude'] as const).filter((c) => !found.has(c)) }
}

export async function runMixedDemo(opts: MixedDemoOptions = {}): Promise<MixedDemoSummary> {
  const out = opts.out ?? process.stdout
  const c = pc.createColors(Boolean((out as { isTTY?: boolean }).isTTY) && !process.env.NO_COLOR)
  const say = (s: string) => out.write(`${c.bold(c.cyan('demo'))} ${s}\n`)
  const base = opts.env ?? process.env
  const { found, missing } = findMixedClis(base)
  if (!found.size) {
    throw new BackendUnavailableError('no agent CLI for the mixed demo is installed (codex, gemini, claude)', {
      hint: 'npm install -g @openai/codex @google/gemini-cli @anthropic-ai/claude-code, or point SWARM_AGENT_BIN_DIR / SWARM_CLAUDE_BIN at them',
    })
  }
  if ((await runCommand('tmux', ['-V'], { env: base, timeoutMs: 3_000 }).catch(() => undefined))?.code !== 0)
    throw new BackendUnavailableError('the mixed demo needs tmux (the agent CLIs run in panes)', {
      hint: 'install tmux ≥ 3.2 (apt-get install tmux)',
    })
  for (const cli of missing) say(`skipping ${cli} (${MIXED_MEMBERS[cli]}): not installed — ${INSTALL[cli]}`)
  const present = new Set(found.keys())
  const started = Date.now()
  const root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-demo-mixed-')))
  const project = path.join(root, 'project')
  const dirs = ['project', 'home', 'user', 'tmp', 'tmux']
  await Promise.all(dirs.map((d) => fs.mkdir(path.join(root, d), { recursive: true })))
  const lead: LoopbackServer = await startLoopbackServer({ scenario: mixedLeadScenario({ project, present }) })
  const geminiTask = String([...present].filter((p) => p !== 'claude').indexOf('gemini') + 1)
  const codexServer: AgentApiServer = await startAgentApiServer({ script: mixedCodexScript(TEAM) })
  const geminiServer: AgentApiServer = await startAgentApiServer({ script: mixedGeminiScript(project, geminiTask) })
  const env: NodeJS.ProcessEnv = {
    ...withoutProviderVars(base),
    // Everything the CLIs write goes under the demo's temp root, never the user's config.
    HOME: path.join(root, 'user'),
    // Codex refuses to set up its sandbox helper in a home under TMPDIR.
    TMPDIR: path.join(root, 'tmp'),
    TMUX_TMPDIR: path.join(root, 'tmux'),
    SWARM_HOME: path.join(root, 'home'),
    SWARM_TMUX_SOCKET: `swarm-demo-mixed-${process.pid}`,
    ANTHROPIC_BASE_URL: lead.url,
    ANTHROPIC_API_KEY: API_KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    OPENAI_BASE_URL: `${codexServer.url}/v1`,
    OPENAI_API_KEY: 'swarm-demo-mixed',
    GOOGLE_GEMINI_BASE_URL: geminiServer.url,
    GEMINI_API_KEY: 'swarm-demo-mixed',
    ...(found.has('claude') && { SWARM_CLAUDE_BIN: found.get('claude')! }),
  }
  delete env.TMUX
  const interactive = opts.interactive ?? Boolean(process.stdin.isTTY && process.stdout.isTTY)
  const permissions: MixedDemoSummary['permissions'] = []
  let leftovers: number[] = []
  let summary: Omit<MixedDemoSummary, 'ms' | 'leftovers'>
  try {
    say(`project ${project}; models: scripted, on ${lead.url} (Messages), ${codexServer.url} (Responses), ${geminiServer.url} (Gemini)`)
    await writeClaudeOnboarding(env.SWARM_HOME!, project, API_KEY)
    if (present.has('claude') && !present.has('codex')) await fs.writeFile(path.join(project, MIXED_FILES.codex), `${reviewedText(present)}\n`)
    await createTeam(
      {
        name: TEAM,
        description: 'swarm demo --mixed',
        cwd: project,
        members: [...present].map((cli) => ({
          name: MIXED_MEMBERS[cli],
          agent: cli,
          ...(cli !== 'claude' && { model: 'loopback' }),
          prompt: `You are ${MIXED_MEMBERS[cli]} in team ${TEAM}; wait for team-lead's instructions.`,
        })),
      },
      env,
    )
    const team = await startTeam(TEAM, { backend: 'tmux', env })
    for (const t of team.teammates) say(`${t.name} (${[...present].find((p) => MIXED_MEMBERS[p] === t.name)}) started in pane ${t.pane}`)
    say(`watch: ${c.dim(`TMUX_TMPDIR=${env.TMUX_TMPDIR} tmux -L ${env.SWARM_TMUX_SOCKET} attach -t swarm-${TEAM}`)}`)
    await typeAtLeader(env, team.leaderPane!, MIXED_KICKOFF)
    say(`you → lead agent: ${MIXED_KICKOFF}`)
    const deadline = Date.now() + MIXED_TIMEOUT_MS
    const answered = new Set<string>()
    const expected = [...present].map((cli) => MIXED_REPORTS[cli])
    for (;;) {
      for (const r of (await listRequests(TEAM, { env })).requests) {
        if (answered.has(r.id)) continue
        answered.add(r.id)
        const decision = await decide(r, interactive, say, c)
        await answerRequest(
          TEAM,
          r.id,
          decision === 'deny'
            ? { kind: 'deny', by: 'swarm demo --mixed', feedback: 'denied at the demo prompt' }
            : { kind: 'approve', by: 'swarm demo --mixed' },
          { env },
        )
        permissions.push({ agent: r.agent, tool: r.toolName, decision })
      }
      const seen = leadSaw(lead, expected)
      const tasks = await listTasks(TEAM, env)
      const done = seen.length === expected.length && tasks.every((t) => t.status === 'completed') && leadPlayed(lead, MIXED_DONE_LABEL)
      if (done && !(await busyMembers(await readTeam(TEAM, env), env)).length) break
      if (opts.signal?.aborted)
        throw new SwarmError('SWARM_INTERRUPTED', 'the mixed demo was interrupted', { hint: 'nothing is left running: the team was deleted' })
      if (Date.now() > deadline) {
        throw new SwarmError(
          'SWARM_DEMO_TIMEOUT',
          `the mixed team did not finish within ${MIXED_TIMEOUT_MS / 1000} s (the lead saw: ${seen.join(', ') || 'no report'})`,
          {
            exitCode: ExitCode.timeout,
            hint: `rerun with --keep and look at ${path.join(root, 'home/teams', TEAM)}`,
          },
        )
      }
      await delay(200)
    }
    for (const report of leadSaw(lead, expected)) say(`lead agent got: ${report}`)
    summary = {
      root,
      teammates: [...present].map((cli) => ({ name: MIXED_MEMBERS[cli], cli, binary: found.get(cli)! })),
      skipped: missing.map((cli) => ({ cli, install: INSTALL[cli] })),
      tasks: (await listTasks(TEAM, env)).map((t) => ({ id: t.id, subject: t.subject, ...(t.owner && { owner: t.owner }), status: t.status })),
      reports: Object.fromEntries([...present].map((cli) => [MIXED_MEMBERS[cli], leadSaw(lead, [MIXED_REPORTS[cli]])[0] ?? ''])),
      files: await projectFiles(project),
      permissions,
      requests: {
        messages: lead.requests.length,
        codex: codexServer.requests.filter((r) => !r.aux && r.view).length,
        gemini: geminiServer.requests.filter((r) => !r.aux && r.view).length,
      },
    }
  } finally {
    say('deleting the team…')
    await deleteTeamFully(TEAM, { env, timeoutMs: 15_000 }).catch((err) => say(`delete: ${errorMessage(err)}`))
    await closeServer('tmux', env)
    leftovers = await processesUnder(root)
    for (const pid of leftovers) sendSignal(pid, 'SIGKILL')
    if (leftovers.length) say(c.red(`${leftovers.length} process(es) outlived team delete and were killed: ${leftovers.join(', ')}`))
    await Promise.all([lead.close(), codexServer.close(), geminiServer.close()])
    if (!opts.keep) await fs.rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 })
    else say(`kept ${root}`)
  }
  const result = { ...summary, ms: Date.now() - started, leftovers }
  printMixedSummary(result, out, c)
  return result
}

function printMixedSummary(s: MixedDemoSummary, out: NodeJS.WritableStream, c: Colors): void {
  const w = (line: string) => out.write(`${line}\n`)
  w('')
  w(c.bold('summary'))
  for (const t of s.teammates) w(`  teammate     ${t.name.padEnd(9)} ${t.cli} (${t.binary})`)
  for (const k of s.skipped) w(`  skipped      ${k.cli}: ${k.install}`)
  for (const t of s.tasks) w(`  task #${t.id}      ${t.status.padEnd(11)} ${t.subject}${t.owner ? ` (${t.owner})` : ''}`)
  for (const [name, text] of Object.entries(s.reports)) w(`  report       ${name}: ${text}`)
  for (const p of s.permissions) w(`  permission   ${p.agent}: ${p.tool} → ${p.decision}`)
  w(
    `  files        ${Object.entries(s.files)
      .map(([f, t]) => `${f} ("${t}")`)
      .join(', ')}`,
  )
  w(
    `  requests     ${Object.entries(s.requests)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}`,
  )
  w(`  left over    ${s.leftovers.length ? c.red(s.leftovers.join(', ')) : 'no process'}`)
  w(`  time         ${(s.ms / 1000).toFixed(1)} s`)
}
