import { readMemberState } from '../store/member-state.js'
import { readArchive } from '../mailbox/archive.js'
import { readInbox } from '../mailbox/inbox.js'
import { parseStructured } from '../mailbox/messages.js'
import type { InboxMessage } from '../mailbox/types.js'
import { inboxPath, LEAD_NAME } from '../home/paths.js'
import { listTasks } from '../tasks/task-store.js'

/**
 * What `swarm demo` watches while its team works: how it ended (the reviewer's verdict, or the
 * implementer's report that nothing could be reviewed), and a progress line for every change —
 * a task that moved, a teammate's message to team-lead — or, when nothing changed for
 * HEARTBEAT_MS, who is doing what, so the demo never waits silently.
 */

/** The longest the demo stays quiet: a measured demo step takes well under a second. */
export const HEARTBEAT_MS = 5_000

export type DemoOutcome = { kind: 'reviewed'; verdict: string } | { kind: 'not-reviewed'; verdict: string }

/** The messages teammates wrote to team-lead (plain text, no protocol messages), oldest first. */
async function leadMessages(team: string, env: NodeJS.ProcessEnv): Promise<InboxMessage[]> {
  const file = inboxPath(team, LEAD_NAME, env)
  const all = [...(await readArchive(file).catch(() => [])), ...(await readInbox(file).catch(() => []))]
  return all.filter((m) => !parseStructured(m.text))
}

/** The reviewer's verdict, or the implementer's report that its tests did not run or pass. */
export async function demoOutcome(team: string, env: NodeJS.ProcessEnv): Promise<DemoOutcome | undefined> {
  const messages = await leadMessages(team, env)
  const review = messages.find((m) => m.from === 'reviewer' && /PASS|FAIL/.test(m.text))
  if (review) return { kind: 'reviewed', verdict: review.text }
  const stopped = messages.find((m) => m.from === 'implementer')
  if (stopped) return { kind: 'not-reviewed', verdict: `not reviewed — implementer: ${stopped.text}` }
  return undefined
}

export class DemoProgress {
  private readonly seenMessages = new Set<string>()
  private readonly taskLines = new Map<string, string>()
  private lastChange = Date.now()

  constructor(
    private readonly team: string,
    private readonly members: string[],
    private readonly env: NodeJS.ProcessEnv,
    private readonly say: (line: string) => void,
    private readonly started = Date.now(),
  ) {}

  /** Prints what changed since the last call; after HEARTBEAT_MS without a change, who is doing what. */
  async tick(): Promise<void> {
    let changed = false
    for (const t of await listTasks(this.team, this.env).catch(() => [])) {
      const line = `task #${t.id} ${t.status}${t.owner ? ` (${t.owner})` : ''}: ${t.subject}`
      if (this.taskLines.get(t.id) === line) continue
      this.taskLines.set(t.id, line)
      this.say(line)
      changed = true
    }
    for (const m of await leadMessages(this.team, this.env)) {
      const key = `${m.from}\0${m.timestamp}\0${m.text}`
      if (this.seenMessages.has(key)) continue
      this.seenMessages.add(key)
      this.say(`${m.from} → team-lead: ${m.summary ?? m.text}`)
      changed = true
    }
    if (changed) this.lastChange = Date.now()
    else if (Date.now() - this.lastChange >= HEARTBEAT_MS) {
      this.lastChange = Date.now()
      const states = await Promise.all(
        this.members.map(async (n) => `${n} ${(await readMemberState(this.team, n, this.env).catch(() => undefined))?.status ?? 'starting'}`),
      )
      this.say(`still waiting (${Math.round((Date.now() - this.started) / 1000)} s): ${states.join(', ')}`)
    }
  }
}
