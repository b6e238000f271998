import type { Command } from 'commander'
import { UsageError } from '../errors.js'
import { refuseFromTeammate } from './lead-only.js'
import { encodeStructured, type StructuredMessage } from '../mailbox/messages.js'
import { sendTeamMessage } from '../teams/messaging.js'
import { LEAD_NAME } from '../home/paths.js'
import { findMember, readTeam, updateTeam } from '../teams/team-store.js'
import { println } from '../terminal/output.js'

/**
 * `swarm compact <team> <name> [--focus TEXT]` and `swarm budget <team> [name] --add USD`: signed
 * control messages from team-lead to a running teammate (its runtime verifies the signature).
 */
export function registerLongRunCommands(program: Command): void {
  program
    .command('compact <team> <name>')
    .description("compact a teammate's conversation now (a signed compact_request; it summarises and continues)")
    .option('--focus <text>', 'what the summary should keep in particular')
    .action((team: string, name: string, opts: { focus?: string }) => compact(team, name, opts))
  program
    .command('budget <team> [name]')
    .description("raise a teammate's budget (or the team's, without a name); a teammate waiting on it carries on")
    .option('--add <usd>', 'USD to add to the limit')
    .option('--add-tokens <n>', 'tokens to add to the limit')
    .action((team: string, name: string | undefined, opts: { add?: string; addTokens?: string }) => budget(team, name, opts))
}

async function compact(team: string, name: string, opts: { focus?: string }): Promise<void> {
  refuseFromTeammate()
  const member = findMember(await readTeam(team), name)
  if (member.name === LEAD_NAME) throw new UsageError('the lead compacts from its console', { hint: 'type /compact [focus] in the leader pane' })
  const request: StructuredMessage = {
    type: 'compact_request',
    from: LEAD_NAME,
    timestamp: new Date().toISOString(),
    ...(opts.focus ? { focus: opts.focus } : {}),
  }
  await sendTeamMessage({ team, from: LEAD_NAME, to: member.name, text: encodeStructured(request), summary: 'compact your conversation' })
  println(`asked ${member.name} to compact${opts.focus ? ` (focus: ${opts.focus})` : ''}`)
}

async function budget(team: string, name: string | undefined, opts: { add?: string; addTokens?: string }): Promise<void> {
  refuseFromTeammate()
  const usd = parseAmount(opts.add, '--add', false)
  const tokens = parseAmount(opts.addTokens, '--add-tokens', true)
  if (usd === undefined && tokens === undefined) throw new UsageError('nothing to add', { hint: 'give --add USD and/or --add-tokens N' })
  const config = await readTeam(team)
  const member = name ? findMember(config, name) : undefined
  // The config keeps the raised limit for restarts; the message tells the running agent.
  await updateTeam(team, (t) => {
    if (!member) t.budget ??= {}
    const target = member ? t.members.find((m) => m.name === member.name)! : t.budget!
    if (usd !== undefined && target.maxCostUsd !== undefined) target.maxCostUsd += usd
    if (tokens !== undefined && target.maxTokens !== undefined) target.maxTokens += tokens
  })
  const update: StructuredMessage = {
    type: 'budget_update',
    from: LEAD_NAME,
    scope: member ? 'member' : 'team',
    timestamp: new Date().toISOString(),
    ...(usd !== undefined ? { addUsd: usd } : {}),
    ...(tokens !== undefined ? { addTokens: tokens } : {}),
  }
  const to = member ? [member.name] : config.members.map((m) => m.name).filter((n) => n !== LEAD_NAME)
  for (const recipient of to)
    await sendTeamMessage({ team, from: LEAD_NAME, to: recipient, text: encodeStructured(update), summary: 'budget raised' })
  println(
    `raised the budget of ${member ? member.name : `team ${team}`}${usd !== undefined ? ` by $${usd}` : ''}${tokens !== undefined ? ` by ${tokens} tokens` : ''}`,
  )
}

function parseAmount(raw: string | undefined, flag: string, integer: boolean): number | undefined {
  if (raw === undefined) return undefined
  const n = Number(raw)
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    throw new UsageError(`${flag} ${JSON.stringify(raw)} is not a positive ${integer ? 'integer' : 'number'}`, {
      hint: `e.g. ${flag} ${integer ? '100000' : '2.50'}`,
    })
  return n
}
