/**
 * A CLI teammate's permission request: asked of team-lead through the one ask flow every member
 * uses (asks/ask.ts) — the pending file, the bell in the lead's inbox, the one waiter — with an
 * orphan check, as nobody is left to answer for once the CLI that ran the hook is gone.
 */
import { AnswerBoard } from '../asks/answer-board.js'
import { ask } from '../asks/ask.js'
import { alwaysAllowed, memberCwd, shellCommandOf, shellSuggestions } from '../asks/always.js'
import type { Verdict } from '../asks/types.js'
import { verdictOf } from '../asks/verdict.js'
import { launchRecordCheck } from '../teams/lead-records.js'
import { readTeam } from '../teams/team-store.js'

export interface HookPermissionRequest {
  team: string
  name: string
  toolName: string
  /** The CLI's shell tools (its adapter's `shellTools`): a call of one may be covered by an earlier "always". */
  shellTools: readonly string[]
  input: Record<string, unknown>
  description: string
  env: NodeJS.ProcessEnv
  signal?: AbortSignal
  /** Records the member's status (hook.ts setStatus): `waiting` with the call while asked. */
  setStatus(status: 'waiting' | 'working', detail?: string): Promise<void>
  /** Called once the request is durable in pending/ (with its id), before team-lead is told. */
  onPending?: (id: string) => void | Promise<void>
}

/**
 * The lead's answer as a Verdict; a shell command an "always" in the always store covers (the
 * member's or the team's) is allowed without asking (no request, id '').
 */
export async function askLead(req: HookPermissionRequest): Promise<Verdict & { id: string }> {
  const env = req.env
  const command = shellCommandOf(req.shellTools, req.toolName, req.input)
  const cwd = command === undefined ? process.cwd() : await memberCwd(req.team, req.name, env)
  // The lead's records count only sealed, checked by the key this member was launched with.
  const checkRecord = await launchRecordCheck(await readTeam(req.team, env), env)
  const warnRefused = (file: string, kept: string | undefined) =>
    void process.stderr.write(`swarm: refused ${file}: not sealed by team-lead${kept ? `; kept as ${kept}` : ''}\n`)
  const sealing = checkRecord ? { check: checkRecord, onRefused: warnRefused } : {}
  const kept = command === undefined ? undefined : await alwaysAllowed(req.team, req.name, command, cwd, env, sealing)
  if (kept) return { id: '', behavior: 'allow', message: `allowed by ${kept} (approved always earlier)` }
  // A hook's stdout is its CLI's reply: the member's own lines go nowhere, a warning to stderr.
  const warn = (line: string) => void process.stderr.write(`swarm: ${line}\n`)
  const board = new AnswerBoard({
    team: req.team,
    agent: req.name,
    env,
    warn,
    // Orphaned: the CLI that ran this hook is gone (Codex runs hooks in a session of their own, so
    // the pane's reaping misses them), and nobody is left to answer for.
    orphaned: () => process.ppid === 1,
    ...(checkRecord && { checkRecord }),
  })
  let id = ''
  const answer = await ask(
    {
      asker: { team: req.team, name: req.name, env, setStatus: req.setStatus, info: () => undefined, warn, ...(checkRecord && { checkRecord }) },
      board,
      notifyTmux: true,
      waiting: { count: 0 },
    },
    {
      kind: 'permission',
      toolName: req.toolName,
      input: req.input,
      description: req.description,
      suggestions: command === undefined ? [] : shellSuggestions(command, cwd),
      summary: req.description,
    },
    {
      ...(req.signal && { signal: req.signal }),
      onPending: async (pending) => {
        id = pending
        await req.onPending?.(pending)
      },
    },
  )
  return { id, ...verdictOf(answer) }
}
