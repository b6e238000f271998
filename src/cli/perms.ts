import type { Command } from 'commander'
import { UsageError } from '../errors.js'
import { refuseFromTeammate } from './lead-only.js'
import { answerRequest, formatAge, listRequests } from '../permissions/requests/broker.js'
import type { GivenAnswer } from '../asks/types.js'
import { validateName } from '../home/paths.js'
import { matchRequestId, shortRequestId } from '../home/request-id.js'
import { PermissionModeName } from '../permissions/rules/modes.js'
import { printJson, println, table } from '../terminal/output.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { clipped } from '../terminal/clip.js'

const one = (s: string) => terminalSafe(s, { singleLine: true })

/** How long `swarm perms` keeps naming a request swarm cancelled because its teammate died (whoever cleared it). */
const CANCELLED_SHOWN_MS = 15 * 60_000
/** The table's INPUT cell: a usual command fits; a longer one says it is cut and how to read it. */
const INPUT_CELL_MAX = 80

interface ListOpts {
  json?: boolean
}

interface AnswerOpts {
  always?: boolean
  teamWide?: boolean
  feedback?: string
  input?: string
  mode?: string
  by?: string
  json?: boolean
}

/** `swarm perms <team>`, `swarm perms show|approve|deny <team> <id>` */
export function registerPermsCommands(program: Command): void {
  const perms = program
    .command('perms')
    .description("list and answer the permission and plan requests of a team's teammates")
    .argument('[team]', 'team name')
    .option('--json', 'print the requests as JSON')
    .action((team: string | undefined, opts: ListOpts) => listCommand(team, opts))
  perms
    .command('show <team> <id>')
    .description("print a request's whole input: a command exactly, an edit's file and text, a plan")
    .action((team: string, id: string) => showCommand(team, id))
  for (const decision of ['approve', 'deny'] as const) {
    perms
      .command(`${decision} <team> <id>`)
      .description(
        decision === 'approve' ? 'approve a request (once, or --always)' : "deny a request; --feedback is what the teammate's model is told",
      )
      .option('--always', 'also allow calls like it from now on (the suggested rule)')
      .option('--team-wide', 'with --always: for every teammate (team_permission_update)')
      .option('--feedback <text>', decision === 'approve' ? 'a note sent with a plan approval' : "why; the teammate's model sees it")
      .option('--input <json>', 'approve with this input instead (a JSON object)')
      .option('--mode <mode>', 'plan approvals: the permission mode to switch the teammate to')
      .option('--by <name>', 'who answers, as recorded (default: <user> via swarm perms)')
      .option('--json', 'print the recorded answer as JSON')
      .action((team: string, id: string, opts: AnswerOpts) => answerCommand(decision, team, id, opts))
  }
}

export async function listCommand(team: string | undefined, opts: ListOpts): Promise<void> {
  if (team === undefined) throw new UsageError('which team?', { hint: 'swarm perms <team> [--json], or swarm perms approve|deny <team> <id>' })
  validateName(team)
  const now = Date.now()
  const listing = await listRequests(team, { now, recentCancelledMs: CANCELLED_SHOWN_MS })
  if (opts.json) return printJson({ team, ...listing })
  for (const c of listing.cancelled)
    println(
      one(`cancelled ${c.id} (${c.agent} ${c.kind === 'plan' ? 'plan approval' : c.toolName}), ${formatAge(now - c.cancelledAt)} ago: ${c.reason}`),
    )
  for (const p of listing.problems) println(`warning: ${one(p)}`)
  if (listing.requests.length === 0) return println(`no pending requests in team ${team}`)
  const rows = [['ID', 'KIND', 'WHO', 'TOOL', 'INPUT', 'AGE', 'ALWAYS WOULD ALLOW']]
  for (const r of listing.requests) {
    const input = clipped(r.summary, INPUT_CELL_MAX, `swarm perms show ${team} ${shortRequestId(r.id)}`)
    rows.push([shortRequestId(r.id), r.kind, r.agent, r.toolName, input, formatAge(r.ageMs), r.suggestions.join(', ')])
  }
  println(table(rows))
  println(`\nanswer with: swarm perms approve|deny ${team} <id> [--always] [--feedback TEXT]   (the id, or a unique prefix of it)`)
  println(`read a whole input with: swarm perms show ${team} <id>`)
}

/** `swarm perms show <team> <id>`: every line of the request's input, neutralised (the broker's inputLines). */
export async function showCommand(team: string, query: string): Promise<void> {
  validateName(team)
  const { requests } = await listRequests(team)
  const id = matchRequestId(
    query,
    requests.map((r) => r.id),
    `in team ${team}`,
  )
  const r = requests.find((p) => p.id === id)!
  const what = r.kind === 'plan' ? `plan${r.planFilePath ? ` (${r.planFilePath})` : ''}` : r.toolName
  println(one(`[${shortRequestId(r.id)}] ${r.agent} ${what} — ${r.id}, ${r.inputLines.length} line${r.inputLines.length === 1 ? '' : 's'}:`))
  for (const line of r.inputLines) println(line)
}

export async function answerCommand(decision: 'approve' | 'deny', team: string, id: string, opts: AnswerOpts): Promise<void> {
  refuseFromTeammate()
  validateName(team)
  if (decision === 'deny' && (opts.always || opts.teamWide || opts.input !== undefined || opts.mode !== undefined)) {
    throw new UsageError('--always, --team-wide, --input and --mode go with approve, not deny')
  }
  const common = { ...(opts.feedback !== undefined ? { feedback: opts.feedback } : {}), ...(opts.by !== undefined ? { by: opts.by } : {}) }
  const answer: GivenAnswer =
    decision === 'deny'
      ? { kind: 'deny', ...common }
      : {
          kind: 'approve',
          ...common,
          ...(opts.always || opts.teamWide ? { always: true } : {}),
          ...(opts.teamWide ? { scope: 'team' as const } : {}),
          ...(opts.input !== undefined ? { updatedInput: parseInput(opts.input) } : {}),
          ...(opts.mode !== undefined ? { permissionMode: parseMode(opts.mode) } : {}),
        }
  const result = await answerRequest(team, id, answer)
  if (opts.json) return printJson({ team, ...result })
  const r = result.request
  const what = r.kind === 'plan' ? `${r.agent}'s plan` : `${r.agent}'s ${r.toolName} request`
  println(one(`${decision === 'approve' ? `approved${r.always ? ' always' : ''}` : 'denied'} ${what} (${r.id})`))
  if (result.teamRules.length) println(one(`team rule: allow ${result.teamRules.join(', ')}`))
  if (!result.delivered) println(one(`warning: could not message ${r.agent} (${result.deliveryError}); it will still find the answer`))
}

function parseInput(text: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw new UsageError(`--input is not valid JSON: ${(err as Error).message}`, { hint: `e.g. --input '{"command":"npm test"}'` })
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError('--input must be a JSON object')
  return value as Record<string, unknown>
}

function parseMode(mode: string): string {
  const m = PermissionModeName.safeParse(mode)
  if (!m.success) throw new UsageError(`unknown permission mode "${mode}"`, { hint: `use one of ${PermissionModeName.options.join(', ')}` })
  return m.data
}
