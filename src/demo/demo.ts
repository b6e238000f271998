import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import pc from 'picocolors'
import { readMemberState } from '../store/member-state.js'
import { cachedShare, percent } from '../agent/pricing.js'
import { selectBackend } from '../backends/detect.js'
import { systemDetectInputs } from '../backends/detect.js'
import { closeServer, createExecutor } from '../backends/registry.js'
import { SwarmError, ExitCode, errorMessage } from '../errors.js'
import { readArchive } from '../mailbox/archive.js'
import { readInbox } from '../mailbox/inbox.js'
import { startLoopbackServer, type LoopbackServer } from '../loopback-model/loopback-server.js'
import { answerRequest, listRequests, type BrokerRequest } from '../permissions/requests/broker.js'
import { sendTeamMessage } from '../teams/messaging.js'
import { inboxPath, LEAD_NAME, teamDir } from '../home/paths.js'
import { listTasks } from '../tasks/task-store.js'
import { createTeam, readTeam } from '../teams/team-store.js'
import { runCommand } from '../process/launch.js'
import { delay } from '../process/delay.js'
import { deleteTeamFully, startTeam } from '../leader/lifecycle.js'
import { runLeader } from '../leader/leader.js'
import { DEMO_FILES, DEMO_SCENARIO } from './demo-scenario.js'
import { type DemoOutcome, DemoProgress, demoOutcome } from './progress.js'

/** The demo gives up after this long. */
export const DEMO_TIMEOUT_MS = 50_000
const TEAM = 'demo'

export interface DemoOptions {
  backend?: 'auto' | 'tmux' | 'in-process'
  /** Attach to the tmux session so a person can watch (tmux only). */
  watch?: boolean
  /** Keep the temp directory (project, transcripts) for inspection. */
  keep?: boolean
  /** Answer the permission prompt at this terminal (default: when stdin and stdout are TTYs). */
  interactive?: boolean
  out?: NodeJS.WritableStream
}

export interface DemoSummary {
  backend: string
  ms: number
  messages: number
  tasks: Array<{ id: string; subject: string; owner?: string; status: string }>
  permissions: Array<{ agent: string; tool: string; summary: string; decision: string; by: string }>
  /** The reviewer's verdict, or `not reviewed — implementer: …` when the test run was denied or failed. */
  verdict?: string
  /** False when the implementer's tests were denied or failed, so nothing went to review. */
  reviewed: boolean
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number }
  files: string[]
}

/**
 * `swarm demo`: a team of three (researcher, implementer, reviewer) in a temp project, on the
 * built-in scripted model served on loopback through the real SDK: messages exchanged, tasks
 * created, claimed and completed, one permission request bubbled and answered, a summary, and
 * the team deleted. In tmux panes when tmux is available, else in-process. Its state lives in a
 * temp SWARM_HOME (and its own tmux server), so it never touches the user's teams.
 */
export async function runDemo(opts: DemoOptions = {}): Promise<DemoSummary> {
  const out = opts.out ?? process.stdout
  const c = pc.createColors(Boolean((out as { isTTY?: boolean }).isTTY) && !process.env.NO_COLOR)
  const say = (s: string) => out.write(`${c.bold(c.cyan('demo'))} ${s}\n`)
  const started = Date.now()
  const root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-demo-')))
  const project = path.join(root, 'project')
  await fs.mkdir(path.join(project, 'src'), { recursive: true })
  for (const [file, text] of Object.entries(DEMO_FILES)) await fs.writeFile(path.join(project, file), text)
  const server = await startLoopbackServer({ scenario: DEMO_SCENARIO })
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SWARM_HOME: path.join(root, 'home'),
    SWARM_TMUX_SOCKET: `swarm-demo-${process.pid}`,
    ANTHROPIC_API_KEY: 'swarm-demo',
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_AUTH_TOKEN: '',
    SWARM_SUBAGENT_MODEL_FORCE: 'claude-loopback-demo',
  }
  delete env.TMUX // the demo's panes live on its own server, never in the user's tmux
  const interactive = opts.interactive ?? Boolean(process.stdin.isTTY && process.stdout.isTTY)
  const choice = opts.backend ?? 'auto'
  let backend: string = 'in-process'
  let leader: Promise<void> | undefined
  let attached: Promise<unknown> | undefined
  let summary: DemoSummary | undefined
  const leaderAbort = new AbortController()
  // --keep: the team's files (transcripts, inboxes, tasks) are copied here before the team is deleted.
  const kept = path.join(root, 'team')
  try {
    if (choice !== 'in-process') {
      const tmuxOk = (await runCommand('tmux', ['-V'], { env, timeoutMs: 3_000 }).catch(() => undefined))?.code === 0
      if (choice === 'tmux' && !tmuxOk) await selectBackend('tmux', systemDetectInputs(env)) // throws with install guidance
      if (tmuxOk) backend = 'tmux'
    }
    say(`project ${project}; model: scripted, served on ${server.url}; backend: ${backend}`)
    await createTeam(
      {
        name: TEAM,
        description: 'swarm demo: slugify',
        cwd: project,
        members: [
          { name: 'researcher', agentType: 'general-purpose', mode: 'default' },
          { name: 'implementer', agentType: 'general-purpose', mode: 'acceptEdits' },
          { name: 'reviewer', agentType: 'general-purpose', mode: 'default' },
        ],
      },
      env,
    )
    await startTeam(TEAM, { backend: backend as 'tmux' | 'in-process', env })
    if (backend === 'in-process') {
      // The leader runs here; its console reads nothing (this driver answers), and prints above.
      const { PassThrough } = await import('node:stream')
      leader = runLeader({
        team: TEAM,
        env,
        input: new PassThrough(),
        output: out as NodeJS.WritableStream & { isTTY?: boolean },
        signal: leaderAbort.signal,
        answersHere: false,
      })
    } else {
      say(`teammates are running in tmux panes: ${c.dim(`tmux -L ${env.SWARM_TMUX_SOCKET} attach -t swarm-${TEAM}`)}`)
      if (opts.watch) attached = attachInBackground(env)
    }
    await sendTeamMessage({
      team: TEAM,
      to: 'researcher',
      text: 'Please look at this project: it needs a slugify function. Plan the work as tasks and hand them out.',
      summary: 'plan slugify',
      env,
    })
    say('team-lead → researcher: plan the slugify work')

    const permissions: DemoSummary['permissions'] = []
    const deadline = Date.now() + DEMO_TIMEOUT_MS
    const progress = new DemoProgress(TEAM, ['researcher', 'implementer', 'reviewer'], env, say, started)
    let outcome: DemoOutcome | undefined
    const answered = new Set<string>()
    while (Date.now() < deadline) {
      for (const r of (await listRequests(TEAM, { env })).requests) {
        if (answered.has(r.id)) continue
        answered.add(r.id)
        const asked = interactive && !opts.watch
        const decision = await decide(r, asked, say, c)
        await answerRequest(
          TEAM,
          r.id,
          decision === 'deny' ? { kind: 'deny', by: 'swarm demo', feedback: 'denied at the demo prompt' } : { kind: 'approve', by: 'swarm demo' },
          { env },
        )
        if (asked) say(`${c.magenta('permission')} ${r.agent}'s ${r.toolName} ${decision === 'deny' ? c.red('denied') : 'approved'}`)
        permissions.push({ agent: r.agent, tool: r.toolName, summary: r.summary, decision, by: interactive ? 'you' : 'demo (non-interactive)' })
      }
      await progress.tick()
      outcome = await demoOutcome(TEAM, env)
      // Not reviewed (the tests were denied or failed): nothing more will happen. Reviewed: the tasks close too.
      if (outcome?.kind === 'not-reviewed') break
      const tasks = await listTasks(TEAM, env)
      if (outcome && tasks.length >= 2 && tasks.every((t) => t.status === 'completed')) break
      await delay(100)
    }
    if (!outcome) {
      throw new SwarmError('SWARM_DEMO_TIMEOUT', `the demo team did not finish within ${DEMO_TIMEOUT_MS / 1000} s`, {
        exitCode: ExitCode.timeout,
        hint: "rerun with --keep: the team's transcripts are then kept in <the kept directory>/team/agents",
      })
    }
    // The reviewer reports before its turn ends: let every teammate go idle before the team is deleted.
    await waitAllIdle(env, Math.max(0, deadline - Date.now()))
    summary = await summarize(env, project, backend, started, permissions, outcome, server)
    // Watching, the tmux client owns the screen until the session ends: the summary comes after.
    if (!attached) printSummary(summary, out, c)
    return summary
  } finally {
    say('deleting the team…')
    // An in-process team lives in this process's leader: stop it first (it shuts its teammates down).
    leaderAbort.abort()
    await leader?.catch(() => undefined)
    // --keep: the copy is taken inside the delete, once the team's processes have all stopped.
    await deleteTeamFully(TEAM, { env, timeoutMs: 10_000, ...(opts.keep ? { copyTo: kept } : {}) }).catch(async (err) => {
      say(`delete: ${errorMessage(err)}`)
      if (opts.keep) await fs.cp(teamDir(TEAM, env), kept, { recursive: true, force: false }).catch((e) => say(`keep: ${errorMessage(e)}`))
    })
    // The demo's own server, and its socket file.
    if (backend === 'tmux') await closeServer('tmux', env)
    await server.close()
    await attached
    if (attached && summary) printSummary(summary, out, c)
    if (!opts.keep) await fs.rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 })
    else say(`kept ${root} (the project; the team's transcripts in ${path.join(kept, 'agents')})`)
  }
}

/** Asks at this terminal (or approves, saying so) for one permission request. */
export async function decide(
  r: BrokerRequest,
  interactive: boolean,
  say: (s: string) => void,
  c: ReturnType<typeof pc.createColors>,
): Promise<'approve' | 'deny'> {
  const what = `${r.agent} asks to use ${c.bold(r.toolName)}: ${r.summary}`
  if (!interactive) {
    say(`${c.magenta('permission')} ${what} — approved (non-interactive demo)`)
    return 'approve'
  }
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout })
  try {
    const answer = await new Promise<string>((resolve) => rl.question(`${c.magenta('?')} ${what} — approve? [Y/n] `, resolve))
    return /^n/i.test(answer.trim()) ? 'deny' : 'approve'
  } finally {
    rl.close()
  }
}

/** Waits until no teammate is starting or working (a graceful delete refuses mid-turn teammates). */
async function waitAllIdle(env: NodeJS.ProcessEnv, ms: number): Promise<void> {
  const deadline = Date.now() + ms
  const names = (await readTeam(TEAM, env)).members.map((m) => m.name).filter((n) => n !== LEAD_NAME)
  while (Date.now() < deadline) {
    const states = await Promise.all(names.map((n) => readMemberState(TEAM, n, env).catch(() => undefined)))
    if (states.every((s) => s && (s.status === 'idle' || s.status === 'exited'))) return
    await delay(50)
  }
}

async function summarize(
  env: NodeJS.ProcessEnv,
  project: string,
  backend: string,
  started: number,
  permissions: DemoSummary['permissions'],
  outcome: DemoOutcome,
  server: LoopbackServer,
): Promise<DemoSummary> {
  const config = await readTeam(TEAM, env)
  let messages = 0
  const tokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }
  for (const m of config.members) {
    const file = inboxPath(TEAM, m.name, env)
    messages += (await readInbox(file)).length + (await readArchive(file).catch(() => [])).length
    const state = await readMemberState(TEAM, m.name, env).catch(() => undefined)
    tokens.input += state?.usage?.inputTokens ?? 0
    tokens.output += state?.usage?.outputTokens ?? 0
    tokens.cacheRead += state?.usage?.cacheReadTokens ?? 0
    tokens.cacheWrite += state?.usage?.cacheWriteTokens ?? 0
  }
  const files = (await fs.readdir(path.join(project, 'src'))).map((f) => `src/${f}`)
  return {
    backend,
    ms: Date.now() - started,
    messages,
    tasks: (await listTasks(TEAM, env)).map((t) => ({ id: t.id, subject: t.subject, ...(t.owner ? { owner: t.owner } : {}), status: t.status })),
    permissions,
    verdict: outcome.verdict,
    reviewed: outcome.kind === 'reviewed',
    tokens,
    files,
    ...(server.requests.length ? {} : {}),
  }
}

function printSummary(s: DemoSummary, out: NodeJS.WritableStream, c: ReturnType<typeof pc.createColors>): void {
  const w = (line: string) => out.write(line + '\n')
  w('')
  w(c.bold('summary'))
  w(`  backend      ${s.backend}`)
  w(`  messages     ${s.messages} delivered through the inboxes`)
  for (const t of s.tasks) w(`  task #${t.id}      ${t.status.padEnd(11)} ${t.subject}${t.owner ? ` (${t.owner})` : ''}`)
  for (const p of s.permissions) w(`  permission   ${p.agent}: ${p.tool} ${p.summary} → ${p.decision} by ${p.by}`)
  w(`  files        ${s.files.join(', ')}`)
  const t = s.tokens
  const share = percent(cachedShare({ inputTokens: t.input, outputTokens: t.output, cacheReadTokens: t.cacheRead, cacheWriteTokens: t.cacheWrite }))
  w(`  tokens       ${t.input} in, ${t.cacheWrite} cache write, ${t.cacheRead} cache read (${share} cached), ${t.output} out (loopback estimate)`)
  w(`  verdict      ${s.verdict}`)
  w(`  time         ${(s.ms / 1000).toFixed(1)} s`)
}

/** `--watch`: attach this terminal to the demo's session while the driver carries on. */
function attachInBackground(env: NodeJS.ProcessEnv): Promise<unknown> | undefined {
  if (!process.stdin.isTTY || !process.stdout.isTTY) return undefined
  // No tmux client (127): the demo still runs and prints its summary. The client ends with the session.
  return createExecutor('tmux', { env })
    .attach(TEAM, { terminal: true, notice: () => undefined })
    .catch(() => undefined)
}
