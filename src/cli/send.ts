import type { Command } from 'commander'
import { BackendUnavailableError, UsageError } from '../errors.js'
import { teammateOf } from '../home/member-marker.js'
import { resolveRecipients } from '../mailbox/send.js'
import { sendTeamMessage } from '../teams/messaging.js'
import { LEAD_NAME } from '../home/paths.js'
import { livingInLeader } from '../teams/hosting.js'
import { findMember, readTeam } from '../teams/team-store.js'
import { runningLeader } from '../supervisor/leader-lock.js'
import { type CallContext, THIS_PROCESS } from './call-context.js'

interface SendOpts {
  from?: string
  summary?: string
  json?: boolean
}

/** `swarm send <team> <to|*> <text>`; exit 7 (the message kept) when its recipient lives inside a leader that is not running. */
export function registerSendCommands(program: Command): void {
  program
    .command('send <team> <to> <text>')
    .description('send a message to a member, or to everyone but the sender with "*"')
    .option('--from <name>', "the sending member (default team-lead; a teammate's shell always sends as itself)")
    .option('--summary <text>', 'a short preview shown with the message')
    .option('--json', 'print the message ids as JSON')
    .action((team: string, to: string, text: string, opts: SendOpts) => send(team, to, text, opts))
}

export async function send(team: string, to: string, text: string, opts: SendOpts, call: CallContext = THIS_PROCESS): Promise<void> {
  const { env, out } = call
  // A teammate's shell speaks as itself only: never as the lead, never as another teammate.
  const self = teammateOf(env)
  if (self !== undefined && opts.from !== undefined && opts.from !== self)
    throw new UsageError(`swarm send from ${self}'s shell sends as ${self}, not as ${opts.from}`, { hint: 'leave out --from' })
  const config = await readTeam(team, env)
  const sender = findMember(config, self ?? opts.from ?? LEAD_NAME)
  const members = config.members.map((m) => m.name)
  const recipients = resolveRecipients(members, to, sender.name)
  const sent = await sendTeamMessage({ team, from: sender.name, to, text, ...(opts.summary !== undefined && { summary: opts.summary }), env, config })
  // deliver writes one entry per recipient, in resolveRecipients' order.
  const receipts = sent.map((m, i) => ({ to: recipients[i], msg_id: m.msg_id, timestamp: m.timestamp }))
  if (opts.json) out(JSON.stringify({ team, from: sender.name, messages: receipts }, null, 2) + '\n')
  const waiting = runningLeader(team, env) === undefined ? livingInLeader(config, recipients) : []
  if (waiting.length) throw leaderNotRunning(team, waiting)
  if (opts.json) return
  if (receipts.length === 0) out('no recipients (the team has no other members)\n')
  else out(`sent to ${receipts.map((r) => r.to).join(', ')}\n`)
}

/** Exit 7: the message is written, but nobody reads it until the leader runs again. */
function leaderNotRunning(team: string, waiting: string[]): BackendUnavailableError {
  const who = waiting.join(', ')
  const lives = waiting.length === 1 ? 'lives' : 'live'
  return new BackendUnavailableError(
    `team ${team} has no running leader, and ${who} ${lives} inside it: the message is kept in ${waiting.length === 1 ? `${who}'s inbox` : 'their inboxes'}, unread until the leader runs`,
    { hint: `start it with: swarm team resume ${team}` },
  )
}
