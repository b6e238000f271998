import type { Command } from 'commander'
import { NotFoundError } from '../errors.js'
import { readArchive } from '../mailbox/archive.js'
import { describeMessage } from '../mailbox/describe.js'
import { messageKey, messageState } from '../mailbox/entry.js'
import { markRead, readInbox } from '../mailbox/inbox.js'
import { readSent } from '../mailbox/sent-log.js'
import type { InboxMessage } from '../mailbox/types.js'
import { watchInbox } from '../mailbox/watch.js'
import { onStopSignal } from '../process/handlers.js'
import { readTeam } from '../teams/team-store.js'
import { inboxPath, sentLogPath, validateAgentName, validateName } from '../home/paths.js'
import type { TeamFile } from '../teams/types.js'
import { paintAgent } from '../terminal/colors.js'
import { colors, printJson, println } from '../terminal/output.js'
import { terminalSafe } from '../terminal/neutralize.js'

export interface InboxCommandOptions {
  unread?: boolean
  markRead?: boolean
  follow?: boolean
  json?: boolean
}

/** `swarm inbox <team> <name>` */
export function registerInboxCommands(program: Command): void {
  program
    .command('inbox')
    .description("show a member's inbox: its history (archive included), unread messages, or new ones as they arrive")
    .argument('<team>', 'team name')
    .argument('<name>', 'member name')
    .option('--unread', 'only messages not yet read')
    .option('--mark-read', 'mark the unread messages shown as read')
    .option('--follow', 'keep printing messages as they arrive, until Ctrl-C')
    .option('--json', "print JSON with each message's state (sent/delivered/read); with --follow, one object per line")
    .action((team: string, name: string, opts: InboxCommandOptions) => runInbox(team, name, opts))
}

/** A message as `--json` prints it. */
/** `consumed`: sent by swarm, then removed by a reader that deletes what it reads (Claude Code). */
type Row = InboxMessage & { state: ReturnType<typeof messageState> | 'consumed'; archived: boolean }

export async function runInbox(team: string, name: string, opts: InboxCommandOptions): Promise<void> {
  validateName(team, 'team')
  validateAgentName(name)
  const roster = await readTeam(team)
  const file = inboxPath(team, name)
  const listing = await loadListing(roster, name, file, Boolean(opts.unread))
  if (opts.follow) return follow(roster, name, file, listing, opts)
  if (opts.json) printJson(listing)
  else if (listing.length === 0) println(`no ${opts.unread ? 'unread ' : ''}messages for ${name}`)
  else for (const row of listing) println(formatRow(row, roster))
  if (opts.markRead) await markShownRead(file, listing)
}

/** The inbox (after the archive unless `unread`), or NotFoundError for a stranger with no inbox. */
async function loadListing(roster: TeamFile, name: string, file: string, unread: boolean): Promise<Row[]> {
  // Read the inbox before the archive: an archiving write in between then shows a message twice
  // (dropped below), never zero times.
  const inbox = await readInbox(file)
  if (!roster.members.some((m) => m.name === name) && inbox.length === 0) {
    throw new NotFoundError(`no member named "${name}" in team "${roster.name}"`, {
      hint: `members: ${roster.members.map((m) => m.name).join(', ') || '(none)'}`,
    })
  }
  const current = inbox.map((m) => toRow(m, false))
  if (unread) return current.filter((row) => row.state !== 'read')
  const inFile = new Set(inbox.map(messageKey))
  const archive = await readArchive(file)
  const archived = archive.filter((m) => !inFile.has(messageKey(m))).map((m) => toRow(m, true))
  const seen = new Set([...inbox, ...archive].map((m) => m.msg_id).filter(Boolean))
  const consumed = (await readSent(sentLogPath(roster.name, name)))
    .filter((r) => !seen.has(r.msg_id))
    .map((r): Row => ({ ...r, read: true, state: 'consumed', archived: false }))
  if (consumed.length === 0) return [...archived, ...current]
  // The consumed ones were in the inbox once: put everything back in time order.
  return [...archived, ...consumed, ...current].sort((a, b) => a.timestamp.localeCompare(b.timestamp))
}

async function follow(roster: TeamFile, name: string, file: string, listing: Row[], opts: InboxCommandOptions): Promise<void> {
  const print = (rows: Row[]) => {
    for (const row of rows) println(opts.json ? JSON.stringify(row) : formatRow(row, roster))
  }
  print(listing)
  if (opts.markRead) await markShownRead(file, listing)
  const stop = new AbortController()
  const release = onStopSignal(() => stop.abort())
  try {
    const watcher = watchInbox(
      roster.name,
      name,
      async (batch) => {
        const rows = batch.map((m) => toRow(m, false))
        print(rows)
        if (opts.markRead) await markShownRead(file, rows)
      },
      {
        includeRead: !opts.unread,
        skip: listing.map(messageKey),
        signal: stop.signal,
        onError: (err) => process.stderr.write(`swarm: warning: ${err instanceof Error ? err.message : String(err)}\n`),
      },
    )
    await watcher.ready
    if (!stop.signal.aborted) await new Promise((resolve) => stop.signal.addEventListener('abort', resolve, { once: true }))
    await watcher.close()
  } finally {
    release()
  }
}

async function markShownRead(file: string, rows: Row[]): Promise<void> {
  const keys = rows.filter((row) => row.state !== 'read' && !row.archived).map(messageKey)
  if (keys.length > 0) await markRead(file, { msgIds: keys })
}

function toRow(m: InboxMessage, archived: boolean): Row {
  return { ...m, state: messageState(m), archived }
}

/** `2025-06-01 12:00:03  alice  text  [sent]` — the sender in its colour, the state when unread. */
function formatRow(row: Row, roster: TeamFile): string {
  const color = row.color ?? roster.members.find((m) => m.name === row.from)?.color
  const from = paintAgent(colors, color, terminalSafe(row.from, { singleLine: true }))
  const state = row.state === 'read' ? '' : colors.dim(`  [${row.state}]`)
  const body = terminalSafe(describeMessage(row)).replace(/\n/g, '\n    │ ')
  return `${colors.dim(formatTime(row.timestamp))}  ${from}  ${body}${state}`
}

function formatTime(timestamp: string): string {
  const d = new Date(timestamp)
  if (Number.isNaN(d.getTime())) return timestamp
  const p = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`
}
