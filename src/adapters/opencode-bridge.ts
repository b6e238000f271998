/**
 * What hooks are to other CLIs, opencode's SSE event stream is here: the pane wrapper reads it and
 * runs the same `swarm hook` code in-process (runHook) — a user text part → prompt-submit (the
 * courier's confirmation), a running tool → pre-tool, `permission.asked` → permission-request
 * (bubbled to the lead, answered over `/permission/{id}/reply`), `session.status` idle → stop.
 * Sub-agent sessions (with a parent) are not the teammate's turns; their permissions still are.
 */
import { appendFile } from 'node:fs/promises'
import path from 'node:path'
import { errorMessage } from '../errors.js'
import { agentDir } from '../home/paths.js'
import { cancelRequest } from '../asks/store.js'
import { delay } from '../process/delay.js'
import type { OpencodeEvent, PermissionReply } from './opencode-api.js'
import type { ChannelContext, ControlChannel, SwarmHookEvent } from './types.js'
import { OpencodeApi } from './opencode-api.js'

type Json = Record<string, unknown>

export interface BridgeOptions extends ChannelContext {
  api: OpencodeApi
}

const RECONNECT_MS = 100

export class OpencodeBridge {
  private readonly abort = new AbortController()
  private running: Promise<void> | undefined
  private chain: Promise<void> = Promise.resolve()
  private started = false
  private readonly roles = new Map<string, string>()
  private readonly early = new Map<string, Json[]>()
  private readonly children = new Set<string>()
  private readonly seenParts = new Set<string>()
  private readonly asked = new Set<string>()
  /** opencode's permission id → swarm's request id, once on file; and those swarm answered. */
  private readonly filed = new Map<string, string>()
  private readonly answered = new Set<string>()
  private readonly replied = new Set<string>()
  private busy = false
  /** A turn was seen end (or found ended). */
  private seenTurn = false
  private lastText: string | undefined
  private readonly logFile: string

  constructor(private readonly options: BridgeOptions) {
    this.logFile = path.join(agentDir(options.team, options.name, options.env), 'courier.log')
  }

  start(): void {
    this.running = this.loop()
  }

  async close(): Promise<void> {
    this.abort.abort()
    await this.running
    await this.chain
  }

  /** Connects (again) until closed: the server comes up a moment after the TUI starts. */
  private async loop(): Promise<void> {
    while (!this.abort.signal.aborted) {
      try {
        await this.options.api.events((e) => this.enqueue(e), this.abort.signal)
      } catch (err) {
        if (this.abort.signal.aborted) break
        // Refused connections are expected until its server is up; anything else is worth a line.
        const refused = /ECONNREFUSED|fetch failed|no event within/.test(`${errorMessage(err)} ${String((err as { cause?: unknown }).cause)}`)
        if (this.started || !refused) await this.log(`event stream: ${errorMessage(err)} ${String((err as { cause?: unknown }).cause ?? '')}`)
      }
      await delay(RECONNECT_MS)
    }
  }

  /** Events are handled one after the other, in order; a permission wait runs beside them. */
  private enqueue(e: OpencodeEvent): Promise<void> {
    this.chain = this.chain.then(() => this.handle(e)).catch((err: unknown) => this.log(`${e.type}: ${errorMessage(err)}`))
    return Promise.resolve()
  }

  private async handle(e: OpencodeEvent): Promise<void> {
    const p = e.properties as Json
    switch (e.type) {
      case 'server.connected':
        if (!this.started) {
          this.started = true
          await this.hook('session-start', {})
        }
        return this.reconcile()
      case 'session.created':
      case 'session.updated': {
        const info = (p.info ?? {}) as Json
        if (typeof info.id === 'string' && typeof info.parentID === 'string') this.children.add(info.id)
        return
      }
      case 'message.updated': {
        const info = (p.info ?? {}) as Json
        if (typeof info.id !== 'string' || typeof info.role !== 'string') return
        this.roles.set(info.id, info.role)
        const early = this.early.get(info.id) ?? []
        this.early.delete(info.id)
        for (const part of early) await this.part(part)
        return
      }
      case 'message.part.updated':
        return this.part((p.part ?? {}) as Json)
      case 'permission.asked':
        if (typeof p.id === 'string' && !this.asked.has(p.id)) {
          const id = p.id
          this.asked.add(id)
          // The next events wait until the request is on file and the state says `waiting` (a
          // tool event handled meanwhile would say `working` over it); the answer is awaited beside them.
          await new Promise<void>((filed) => {
            this.permission(id, p, filed)
              .catch((err: unknown) => this.log(`permission ${id}: ${errorMessage(err)}`))
              .finally(filed)
          })
        }
        return
      case 'permission.replied':
        if (typeof p.requestID === 'string') this.replied.add(p.requestID)
        // Answered in its pane, not through swarm: the request on file is withdrawn.
        if (typeof p.requestID === 'string' && this.filed.has(p.requestID) && !this.answered.has(p.requestID))
          await cancelRequest(
            this.options.team,
            this.filed.get(p.requestID) as string,
            'answered in the opencode pane',
            this.options.name,
            this.options.env,
          ).catch(
            () => undefined, // resolved by the lead meanwhile: nothing to withdraw
          )
        return
      case 'session.status': {
        if (this.isChild(p.sessionID)) return
        const type = ((p.status ?? {}) as Json).type
        if (type === 'busy') this.busy = true
        else if (type === 'idle' && this.busy) {
          this.busy = false
          this.seenTurn = true
          await this.hook('stop', { ...(this.lastText !== undefined && { last_assistant_message: this.lastText }) })
        }
        return
      }
    }
  }

  /**
   * On each (re)connect: what happened while no stream was read. A turn running → working; no
   * turn running though one was (or a session exists, the first prompt's, and none was seen) → idle.
   */
  private async reconcile(): Promise<void> {
    const busy = (await this.options.api.busySessions()).filter((id) => !this.children.has(id))
    if (busy.length && !this.busy) {
      this.busy = true
      await this.hook('prompt-submit', {})
    } else if (!busy.length && (this.busy || (!this.seenTurn && (await this.options.api.sessionCount()) > 0))) {
      this.busy = false
      this.seenTurn = true
      await this.hook('stop', { ...(this.lastText !== undefined && { last_assistant_message: this.lastText }) })
    }
  }

  private async part(part: Json): Promise<void> {
    if (this.isChild(part.sessionID) || typeof part.id !== 'string') return
    const messageID = typeof part.messageID === 'string' ? part.messageID : undefined
    const role = messageID ? this.roles.get(messageID) : undefined
    if (part.type === 'text' && messageID && role === undefined) {
      // A part seen before its message: read once the message says whose it is.
      this.early.set(messageID, [...(this.early.get(messageID) ?? []), part])
      return
    }
    if (part.type === 'text' && typeof part.text === 'string') {
      if (role === 'assistant') this.lastText = part.text
      else if (role === 'user' && part.synthetic !== true && !this.seenParts.has(part.id)) {
        this.seenParts.add(part.id)
        this.lastText = undefined
        await this.hook('prompt-submit', { prompt: part.text })
      }
      return
    }
    if (part.type !== 'tool' || typeof part.tool !== 'string') return
    const state = (part.state ?? {}) as Json
    const key = `${part.id}:${String(state.status)}`
    if (this.seenParts.has(key)) return
    if (state.status === 'running') {
      this.seenParts.add(key)
      await this.hook('pre-tool', { tool_name: part.tool, tool_input: state.input })
    } else if (state.status === 'completed' || state.status === 'error') {
      this.seenParts.add(key)
      await this.hook('post-tool', { tool_name: part.tool, tool_input: state.input })
    }
  }

  /** Asks the lead through the same broker as every hook, then answers opencode. */
  private async permission(id: string, p: Json, filed: () => void): Promise<void> {
    const metadata = (p.metadata ?? {}) as Json
    const patterns = Array.isArray(p.patterns) ? p.patterns.filter((x): x is string => typeof x === 'string') : []
    const input = Object.keys(metadata).length ? metadata : { patterns }
    const reply = await this.options.runHook({
      event: 'permission-request',
      payload: { tool_name: typeof p.permission === 'string' ? p.permission : 'tool', tool_input: input },
      signal: this.abort.signal,
      onAsked: (requestId) => {
        this.filed.set(id, requestId)
        filed()
      },
    })
    const answer = JSON.parse(reply.stdout ?? '{}') as { reply?: PermissionReply; message?: string }
    this.answered.add(id)
    if (answer.reply && !this.replied.has(id)) await this.options.api.replyPermission(id, answer.reply, answer.message)
  }

  private isChild(sessionID: unknown): boolean {
    return typeof sessionID === 'string' && this.children.has(sessionID)
  }

  private async hook(event: SwarmHookEvent, payload: Json): Promise<void> {
    await this.options.runHook({ event, payload })
  }

  private async log(line: string): Promise<void> {
    await appendFile(this.logFile, `${new Date().toISOString()} ${line}\n`, { mode: 0o600 }).catch(() => undefined) // diagnostics only
  }
}

/**
 * opencode's control channel: its HTTP API (OPENCODE_URL, set by prepare()) takes the prompts, and
 * its SSE event stream, read by a bridge, runs the hooks.
 */
export const opencodeChannel: ControlChannel = {
  name: 'opencode-sse',
  open(ctx) {
    const api = OpencodeApi.fromEnv(ctx.env)
    if (!api) return undefined
    const bridge = new OpencodeBridge({ ...ctx, api })
    bridge.start()
    return { promptBox: api, close: () => bridge.close() }
  },
}
