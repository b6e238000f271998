import readline from 'node:readline'
import pc from 'picocolors'
import { errorMessage } from '../errors.js'
import { describeMessage } from '../mailbox/describe.js'
import { markRead } from '../mailbox/inbox.js'
import { parseStructured, type StructuredMessage } from '../mailbox/messages.js'
import type { InboxMessage } from '../mailbox/types.js'
import { watchInbox, type InboxWatcher } from '../mailbox/watch.js'
import { answerRequest, howAnswered, listRequests } from '../permissions/requests/broker.js'
import { notifyHuman } from '../asks/notify.js'
import { sendTeamMessage } from '../teams/messaging.js'
import { inboxPath, LEAD_NAME, pendingPermissionsDir } from '../home/paths.js'
import { listTasks } from '../tasks/task-store.js'
import { ensureDir } from '../util/fs.js'
import { WATCH_INTERVALS } from '../watch/intervals.js'
import { type PathWatch, watchPath } from '../watch/path-watch.js'
import { paintAgent } from '../terminal/colors.js'
import { CONSOLE_HELP } from './console-help.js'
import { PromptQueue, toConsoleRequest, type ConsoleRequest } from './prompt-queue.js'
import { shortRequestId } from '../home/request-id.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { wrapLines } from '../terminal/wrap.js'
import { clipped } from '../terminal/clip.js'
import { previewInput } from '../asks/input-view.js'
import { LeadGate } from '../trust/gate.js'
import { IdleCoalescer } from './idle-coalescer.js'
import { consoleLedgerPath } from '../trust/ledger.js'

/** What the console can do to the team beyond messages (implemented by the team runner). */
export interface TeamControl {
  spawn(
    name: string,
    opts: { agentType?: string; prompt?: string; model?: string; mode?: string; cwd?: string; worktree?: boolean | string },
  ): Promise<string>
  kill(name: string, opts: { now?: boolean }): Promise<string>
  /** A teammate approved its shutdown: close its pane. */
  closed(name: string): Promise<void>
  /** The rendered `swarm status` table; `overview`: one short line per teammate (`/team`). */
  status(view?: 'table' | 'overview'): Promise<string>
  /** Shows the person the teammate's pane (`/focus`); undefined where there are no panes. */
  focus?(name: string): Promise<string>
}

/** The lead agent, when a model is configured. */
export interface LeadAgent {
  deliver(messages: InboxMessage[]): void
  say(text: string): void
  /** Compacts the lead's conversation before its next request (`/compact [focus]`). */
  compact(focus?: string): void
}

export interface LeaderConsoleOptions {
  team: string
  env: NodeJS.ProcessEnv
  input: NodeJS.ReadableStream
  output: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }
  control: TeamControl
  lead?: LeadAgent
  /** Why there is no lead agent (shown when the user types text for it). */
  noLeadReason?: string
  /** The teammates run inside this process (in-process backend): leaving the console stops them. */
  teammatesInside?: boolean
  color?: boolean
  signal?: AbortSignal
  /** Safety sweep of pending requests (new ones, answered elsewhere, dead requesters); default WATCH_INTERVALS.pendingRequests. */
  pendingPollMs?: number
  /** False when nobody types at this console (the demo answers for it): requests are shown, not prompted. */
  answersHere?: boolean
  /** How long after a prompt replaced an unanswered one a key is refused (default PROMPT_SETTLE_MS). */
  promptSettleMs?: number
  /**
   * At the end of input (a script's stdin, `< /dev/null`, a background job) the console stops
   * reading but runs on — messages shown, requests answerable with `swarm perms` — until the signal.
   */
  runPastInputEnd?: boolean
}

/**
 * A key pressed this soon after the prompt on screen was replaced by another one (the shown
 * request was answered elsewhere) is not taken for the new one: the human may have read the old.
 */
export const PROMPT_SETTLE_MS = 1_000

/** How much of an input one line of `/requests` or an answer's confirmation shows (the rest: `/show`). */
const LISTED_INPUT_MAX = 120

/** Text a teammate or model wrote, on one line. */
const one = (s: string) => terminalSafe(s, { singleLine: true })
/** Text a teammate or model wrote, as a block: continuation lines are indented, so none can pose as swarm's own. */
const block = (s: string) => terminalSafe(s).replace(/\n/g, '\n    │ ')

/**
 * The leader pane: every message to team-lead as it arrives, coloured by sender; each
 * permission and plan request as a prompt, one at a time, queued, none lost, answerable from any
 * shell too; slash commands; other text to the lead agent. Restarting it re-adopts the team:
 * pending requests come from `permissions/pending/`, unread messages from the inbox.
 */
export class LeaderConsole {
  private readonly queue = new PromptQueue()
  /** The one gate, on the console's own ledger (spawn requests it honoured), apart from the lead agent's. */
  private gate: Promise<LeadGate> | undefined
  /** Idle notifications held for the lead agent (one delivery for those that come together). */
  private idle: IdleCoalescer | undefined
  private readonly c
  private watcher: InboxWatcher | undefined
  private dirWatch: PathWatch | undefined
  private rl: readline.Interface | undefined
  /** The request whose prompt is on screen, when it was drawn, and whether it replaced an unanswered one. */
  private shown: ConsoleRequest | undefined
  private shownAt = 0
  private shownReplaced = false
  private shownGone = false
  /** Requests whose whole input has been printed here (by their prompt, or by `/show`): only those take y/a. */
  private readonly seenWhole = new Set<string>()
  /** Requests this console answered: their leaving the queue is not news from elsewhere. */
  private readonly answeredHere = new Set<string>()
  /** How the request last on screen was answered elsewhere (its resolved record), once read. */
  private goneHow: { id: string; how: string } | undefined
  /** Reports of that still being read: the next prompt waits for them, so the screen reads in order. */
  private reporting = 0
  private syncing: Promise<void> = Promise.resolve()
  private stopped = false
  private inputClosed = false
  private done!: () => void
  private readonly finished = new Promise<void>((r) => (this.done = r))

  constructor(private readonly options: LeaderConsoleOptions) {
    this.c = pc.createColors(options.color ?? (Boolean(options.output.isTTY) && !options.env.NO_COLOR))
    options.signal?.addEventListener('abort', () => this.stop(), { once: true })
  }

  /** Runs until /quit, the end of input, or the signal. */
  async run(): Promise<void> {
    this.line(this.c.bold(`swarm leader — team ${this.options.team}`) + this.c.dim('  (/help for commands)'))
    const pendingDir = pendingPermissionsDir(this.options.team, this.options.env)
    await ensureDir(pendingDir)
    // The safety poll covers a watch that fails (not reported: nothing is lost).
    this.dirWatch = watchPath(pendingDir, () => void this.syncPending(), {
      pollMs: this.options.pendingPollMs ?? WATCH_INTERVALS.pendingRequests,
      idlePollMs: this.options.pendingPollMs ?? WATCH_INTERVALS.pendingRequestsIdle,
    })
    this.queue.onChange(() => {
      const s = this.shown
      if (s && !this.shownGone && this.queue.get(s.id)?.id !== s.id) {
        this.shownGone = true
        if (this.answeredHere.has(s.id)) this.shown = undefined
        else return this.reportGone(s)
      }
      this.showCurrent()
    })
    await this.syncPending()
    this.watcher = watchInbox(this.options.team, LEAD_NAME, (msgs) => this.onMessages(msgs), { env: this.options.env, markDelivered: true })
    await this.watcher.ready
    this.rl = readline.createInterface({ input: this.options.input, terminal: false })
    this.rl.on('line', (line) => void this.onLine(line.trim()).catch((err) => this.line(this.c.red(`error: ${one(errorMessage(err))}`))))
    this.rl.on('close', () => (this.options.runPastInputEnd && !this.stopped ? this.inputEnded() : this.stop()))
    // Stopped while starting (a signal before or during the setup above): close what was opened since.
    if (this.stopped || this.options.signal?.aborted) this.stop()
    await this.finished
  }

  stop(): void {
    this.stopped = true
    this.idle?.flush()
    this.dirWatch?.close()
    this.rl?.close()
    void this.watcher?.close()
    this.done()
  }

  private inputEnded(): void {
    this.inputClosed = true
    this.line(
      this.c.dim(
        `input closed: this console reads no more; team ${this.options.team} keeps running until \`swarm team delete ${this.options.team}\` or SIGTERM (answer requests with \`swarm perms ${this.options.team}\`)`,
      ),
    )
  }

  private line(s: string): void {
    // Wrapped on words to the pane's width now: a TTY's columns follow each resize (SIGWINCH).
    this.options.output.write(wrapLines(s, this.options.output.isTTY ? this.options.output.columns : undefined) + '\n')
  }

  private who(name: string, color?: string): string {
    return paintAgent(this.c, color, name)
  }

  private async onMessages(msgs: InboxMessage[]): Promise<void> {
    const consumed: string[] = []
    for (const m of msgs) {
      const time = new Date(m.timestamp).toLocaleTimeString()
      this.line(`${this.c.dim(time)} ${this.who(one(m.from), m.color)} ${block(describeMessage(m))}`)
      const s = parseStructured(m.text)
      if (s?.type === 'permission_request' || s?.type === 'plan_approval_request') {
        consumed.push(m.msg_id ?? '')
        await this.syncPending()
        continue
      }
      if (s?.type === 'spawn_request') {
        consumed.push(m.msg_id ?? '')
        await this.spawnRequested(m, s)
        continue
      }
      if (s?.type === 'shutdown_approved') {
        consumed.push(m.msg_id ?? '')
        await this.options.control.closed(m.from).catch((err) => this.line(this.c.red(one(`could not close ${m.from}'s pane: ${errorMessage(err)}`))))
        continue
      }
      // The lead agent gets what teammates say; never its own words back. Idle notifications that
      // come together reach it together (idle-coalescer.ts).
      if (this.options.lead && m.from !== LEAD_NAME) {
        this.idle ??= new IdleCoalescer((batch) => this.options.lead?.deliver(batch))
        if (s?.type === 'idle_notification') this.idle.hold(m)
        else {
          this.idle.flush()
          this.options.lead.deliver([m])
        }
      } else consumed.push(m.msg_id ?? '')
    }
    const ids = consumed.filter(Boolean)
    if (ids.length) await markRead(inboxPath(this.options.team, LEAD_NAME, this.options.env), { msgIds: ids })
  }

  /** `swarm spawn --backend in-process` from another shell: honoured only with the lead's signature. */
  private async spawnRequested(m: InboxMessage, s: Extract<StructuredMessage, { type: 'spawn_request' }>): Promise<void> {
    this.gate ??= LeadGate.open({
      team: this.options.team,
      name: LEAD_NAME,
      env: this.options.env,
      ledgerFile: consoleLedgerPath(this.options.team, this.options.env),
    })
    const verdict = await (await this.gate).acceptLeadOrder(m)
    if (verdict === 'replayed') {
      this.line(this.c.yellow(`ignored a REPLAYED spawn request for ${one(s.name)} (already honoured)`))
      return
    }
    if (verdict !== 'verified') {
      this.line(this.c.yellow(`ignored an UNVERIFIED spawn request for ${one(s.name)} (no valid lead signature)`))
      return
    }
    try {
      const { requestId: _id, type: _t, from: _f, timestamp: _ts, name, ...opts } = s
      this.line(await this.options.control.spawn(name, opts))
    } catch (err) {
      this.line(this.c.red(`could not start ${one(s.name)}: ${one(errorMessage(err))}`))
    }
  }

  /**
   * The request on screen left the queue, answered elsewhere: says who answered and from where,
   * from its resolved record (`approved by alice from the web`, as `swarm perms` names it).
   * Printed in order with the prompts, before the next request's: the next sync waits for it.
   */
  private reportGone(s: ConsoleRequest): void {
    this.reporting++
    this.syncing = this.syncing.then(async () => {
      const how = (await howAnswered(this.options.team, s.id, this.options.env)) ?? 'answered elsewhere'
      this.goneHow = { id: s.id, how }
      this.line(this.c.yellow(one(`request ${shortRequestId(s.id)} of ${s.agent} was ${how}`)))
      this.reporting--
      this.showCurrent()
    })
  }

  /** Re-reads the durable pending requests: new ones are queued, answered or cancelled ones dropped. */
  private syncPending(): Promise<void> {
    this.syncing = this.syncing.then(async () => {
      try {
        const listing = await listRequests(this.options.team, { env: this.options.env })
        for (const c of listing.cancelled)
          this.line(this.c.yellow(one(`request ${shortRequestId(c.id)} from ${c.agent} (${c.toolName}) cancelled: ${c.reason}`)))
        const added = this.queue.sync(listing.requests.map(toConsoleRequest))
        for (const r of added)
          notifyHuman({ id: r.id, agent: r.agent, toolName: r.tool, kind: r.kind, summary: r.detail }, this.options.output, { env: this.options.env })
      } catch (err) {
        this.line(this.c.red(`cannot read pending requests: ${errorMessage(err)}`))
      }
    })
    return this.syncing
  }

  /**
   * Draws the request at the head of the queue — swarm's own text, naming the requester and the
   * short request id the keys answer, then the whole input, neutralised and wrapped, never cut: a
   * one-line input on the prompt's line, more as `│` lines; a long one as its start and a line
   * saying how much is left for `/show`.
   */
  private showCurrent(): void {
    const r = this.queue.current
    if (!r || r.id === this.shown?.id || this.reporting > 0) return
    this.shownReplaced = this.shown !== undefined
    this.shown = r
    this.shownGone = false
    this.shownAt = Date.now()
    const short = shortRequestId(r.id)
    const more = this.queue.size > 1 ? this.c.dim(` (+${this.queue.size - 1} more)`) : ''
    const head = `? [${short}] ${this.c.bold(one(r.agent))}`
    if (r.kind === 'plan') this.line(this.c.magenta(`${head} wants its plan approved: ${one(r.detail)}`) + more)
    else {
      const preview = previewInput(r.inputLines)
      const inline = preview.hiddenLines === 0 && r.inputLines.length === 1
      this.line(this.c.magenta(`${head} wants to use ${this.c.bold(one(r.tool))}:`) + (inline ? ` ${r.inputLines[0]}` : '') + more)
      if (!inline) for (const l of preview.shown) this.line(`    │ ${l}`)
      if (preview.hiddenLines === 0) this.seenWhole.add(r.id)
      else
        this.line(
          this.c.yellow(
            `  input continues: ${preview.hiddenLines} more line${preview.hiddenLines === 1 ? '' : 's'} (${preview.hiddenChars} more characters) — /show ${short} to read all before you answer`,
          ),
        )
    }
    if (this.options.answersHere === false || this.inputClosed) return
    if (r.suggestions?.length) this.line(this.c.dim(`  always would allow: ${one(r.suggestions.join(', '))}`))
    this.line(
      this.c.dim(
        `  [y] approve once  [a] approve always  [n <feedback>] deny  /show ${short} — request ${short} of ${one(r.agent)} (or: swarm perms approve ${this.options.team} ${short})`,
      ),
    )
  }

  /** `/show [id]`: the request's whole input, every line, neutralised and wrapped; it may then be approved. */
  private showWhole(query: string | undefined): void {
    const r = query ? this.queue.get(query) : this.shown && this.queue.get(this.shown.id)
    if (!r) {
      this.line(this.c.yellow(query ? `no pending request ${one(query)}` : 'no request is on screen; /show <id> names one'))
      return
    }
    const short = shortRequestId(r.id)
    const what = r.kind === 'plan' ? `plan${r.detail ? ` (${one(r.detail)})` : ''}` : one(r.tool)
    this.line(
      this.c.magenta(
        `[${short}] ${this.c.bold(one(r.agent))} ${what}, whole input (${r.inputLines.length} line${r.inputLines.length === 1 ? '' : 's'}):`,
      ),
    )
    for (const l of r.inputLines) this.line(`    │ ${l}`)
    this.line(this.c.dim(`  end of request ${short}`))
    this.seenWhole.add(r.id)
  }

  /**
   * True when `r` may be approved here: it is not long, or `/show` (or its prompt) printed all of
   * it. A long input is refused until then — not "press y twice", which a reflex defeats.
   */
  private seenAll(r: ConsoleRequest): boolean {
    if (r.kind === 'plan' || this.seenWhole.has(r.id) || previewInput(r.inputLines).hiddenLines === 0) return true
    const short = shortRequestId(r.id)
    this.line(this.c.yellow(`not approved: you have not seen all of request ${short}'s input — /show ${short} prints it, then answer`))
    return false
  }

  /** The request a key answers: the one on screen, if it is still pending and has been there long enough to be read. */
  private onScreen(): ConsoleRequest | undefined {
    const id = this.shown?.id
    const r = id === undefined ? undefined : this.queue.get(id)
    if (!r || r.id !== id) {
      // Named only while its "answered elsewhere" notice is the last word on screen about it.
      const how = this.goneHow && this.goneHow.id === id ? this.goneHow.how : 'answered elsewhere'
      const gone = id !== undefined && !this.answeredHere.has(id) ? one(` (request ${shortRequestId(id)} was ${how})`) : ''
      this.line(this.c.yellow(`no request is on screen${gone}; nothing answered`))
      this.shown = undefined
      return undefined
    }
    if (this.shownReplaced && Date.now() - this.shownAt < (this.options.promptSettleMs ?? PROMPT_SETTLE_MS)) {
      this.line(
        this.c.yellow(
          `the request on screen just changed to ${shortRequestId(r.id)} of ${one(r.agent)}; nothing answered — read it and answer again`,
        ),
      )
      this.shownReplaced = false
      return undefined
    }
    return r
  }

  private async onLine(line: string): Promise<void> {
    if (!line) return
    if (line.startsWith('/')) return this.command(line)
    const m = this.shown !== undefined ? /^(y|yes|a|always|n|no)(?:\s+(.*))?$/i.exec(line) : null
    if (m) {
      const current = this.onScreen()
      if (!current) return
      const key = m[1].toLowerCase()
      if (key.startsWith('n')) return this.answer(current.id, 'deny', { feedback: m[2] })
      if (!this.seenAll(current)) return
      return this.answer(current.id, 'approve', { always: key.startsWith('a') })
    }
    if (this.options.lead) this.options.lead.say(line)
    else this.line(this.c.yellow(this.options.noLeadReason ?? 'no lead agent is running'))
  }

  private async answer(id: string, decision: 'approve' | 'deny', opts: { always?: boolean; feedback?: string }): Promise<void> {
    const r = this.queue.get(id)
    if (!r) {
      this.line(this.c.yellow(`no pending request ${id}`))
      return
    }
    this.answeredHere.add(r.id)
    try {
      await answerRequest(
        this.options.team,
        r.id,
        {
          kind: decision,
          ...(opts.always && decision === 'approve' ? { always: true } : {}),
          ...(opts.feedback ? { feedback: opts.feedback } : {}),
          by: 'team-lead console',
        },
        { env: this.options.env },
      )
      const added = opts.always && decision === 'approve' && r.suggestions?.length ? `; added the rules ${r.suggestions.join(', ')}` : ''
      this.line(
        this.c.green(
          `${decision === 'approve' ? 'approved' : 'denied'}${opts.always ? ' (always)' : ''} ${shortRequestId(r.id)}: ${one(`${r.agent} ${r.tool} ${clipped(r.detail, LISTED_INPUT_MAX, `/show ${shortRequestId(r.id)}`)}${added}`)}`,
        ),
      )
    } catch (err) {
      // Not answered here after all (answered or cancelled elsewhere first): the error says by whom.
      this.answeredHere.delete(r.id)
      this.line(this.c.yellow(one(errorMessage(err))))
    }
    if (this.shown?.id === r.id) this.shown = undefined
    this.queue.remove(r.id)
    this.seenWhole.delete(r.id)
    await this.syncPending()
    this.answeredHere.delete(r.id)
  }

  private async command(line: string): Promise<void> {
    const [cmd, ...rest] = line.slice(1).split(/\s+/)
    const arg = line.slice(1 + cmd.length).trim()
    switch (cmd) {
      case 'help':
        return this.line(CONSOLE_HELP)
      case 'msg': {
        const [to, ...words] = rest
        if (!to || words.length === 0) return this.line('usage: /msg <name|*> <text>')
        await sendTeamMessage({ team: this.options.team, to, text: arg.slice(to.length).trim(), env: this.options.env })
        return this.line(this.c.dim(`→ ${to}`))
      }
      case 'spawn': {
        const [head, prompt] = arg.split(/\s+--\s+/, 2)
        const [name, type] = head.split(/\s+/)
        if (!name) return this.line('usage: /spawn <name> [type] [-- prompt]')
        return this.line(await this.options.control.spawn(name, { ...(type ? { agentType: type } : {}), ...(prompt ? { prompt } : {}) }))
      }
      case 'kill': {
        if (!rest[0]) return this.line('usage: /kill <name> [now]')
        return this.line(await this.options.control.kill(rest[0], { now: rest[1] === 'now' }))
      }
      case 'status':
        return this.line(await this.options.control.status())
      case 'team':
        return this.line(await this.options.control.status('overview'))
      case 'focus': {
        if (!rest[0]) return this.line('usage: /focus <name>')
        if (!this.options.control.focus) return this.line('no panes here: teammates run inside this console')
        return this.line(await this.options.control.focus(rest[0]))
      }
      case 'tasks': {
        const tasks = await listTasks(this.options.team, this.options.env)
        if (tasks.length === 0) return this.line('no tasks')
        for (const t of tasks) this.line(one(`#${t.id} [${t.status}] ${t.subject}${t.owner ? ` (${t.owner})` : ''}`))
        return
      }
      case 'requests': {
        const list = this.queue.list()
        if (list.length === 0) return this.line('no pending requests')
        for (const r of list)
          this.line(
            one(`${shortRequestId(r.id)}  ${r.id}  ${r.agent}  ${r.tool}  ${clipped(r.detail, LISTED_INPUT_MAX, `/show ${shortRequestId(r.id)}`)}`),
          )
        return
      }
      case 'show':
        return this.showWhole(rest[0])
      case 'approve': {
        const always = rest.includes('always')
        const id = rest.find((w) => w !== 'always') ?? this.onScreen()?.id
        if (!id) return this.line('no pending request')
        const named = this.queue.get(id)
        if (named && !this.seenAll(named)) return
        return this.answer(id, 'approve', { always })
      }
      case 'deny': {
        const first = rest[0]
        const named = first && this.queue.get(first) ? first : undefined
        const id = named ?? this.onScreen()?.id
        if (!id) return this.line('no pending request')
        const feedback = named ? arg.slice(first.length).trim() : arg
        return this.answer(id, 'deny', { ...(feedback ? { feedback } : {}) })
      }
      case 'compact':
        if (!this.options.lead) return this.line(this.c.yellow(this.options.noLeadReason ?? 'there is no lead agent to compact'))
        this.options.lead.compact(arg || undefined)
        return this.line(this.c.dim(`compacting the lead's conversation${arg ? ` (focus: ${arg})` : ''}`))
      case 'quit':
      case 'exit':
        this.line(
          this.options.teammatesInside
            ? `leaving the console stops the teammates running inside it (their conversations are kept); \`swarm team resume ${this.options.team}\` continues them.`
            : `leaving the console; the team keeps running. \`swarm team resume ${this.options.team}\` brings it back.`,
        )
        return this.stop()
      default:
        return this.line(`unknown command /${cmd} — /help lists them`)
    }
  }
}
