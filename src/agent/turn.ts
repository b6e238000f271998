import type Anthropic from '@anthropic-ai/sdk'
import { APIError, APIUserAbortError } from '@anthropic-ai/sdk'
import { runTool, type AnyTool as Tool, type ToolContext, type ToolResult, type TurnRequest } from './tool.js'
import { usageFromApi, type Usage } from './pricing.js'
import { type CacheSetting, DEFAULT_CACHE, layoutPrompt, type SystemPrompt } from './cache-layout.js'
import type { NewTranscriptEvent } from './transcript.js'

type MessageParam = Anthropic.MessageParam
type ToolResultBlockParam = Anthropic.ToolResultBlockParam

export const DEFAULT_MAX_TOKENS = 8192

/** What the turn loop tells the outside world as it goes. */
export interface TurnEvents {
  onText?(delta: string): void
  onToolStart?(name: string, input: unknown): void
  onToolEnd?(name: string, input: unknown, result: ToolResult, ms: number): void
  onUsage?(usage: Usage): void
  record?(...events: NewTranscriptEvent[]): Promise<void>
  /** Before each model request (compaction): may change `messages` in place, or end the turn. Budgets: `toolContext.meter`. */
  beforeRequest?(messages: MessageParam[], tools: Anthropic.Tool[]): Promise<{ stop: string } | undefined>
  /** After a 400 "prompt is too long": true once the conversation was made to fit, for one retry. */
  onPromptTooLong?(messages: MessageParam[], tools: Anthropic.Tool[], error: APIError): Promise<boolean>
}

export interface TurnOptions extends TurnEvents {
  client: Anthropic
  model: string
  /** A plain string is cached whole; split it to keep the changing part out of the cached prefix. */
  system: string | SystemPrompt
  /** Prompt caching (default on, 5 m). */
  cache?: CacheSetting
  tools: Tool[]
  /** The conversation; the turn appends to it in place. */
  messages: MessageParam[]
  /** Model calls allowed in this turn before it is cut short as `partial`. */
  maxIterations: number
  signal: AbortSignal
  toolContext: ToolContext
  maxTokens?: number
  /** Messages that keep a breakpoint besides the usual ones (a fork repeats its parent's, byte for byte). */
  keepBreakpoints?: readonly number[]
  /** The `x-swarm-agent` header (who is asking, for the model server's logs); default the tool context's agent. */
  agentHeader?: string
  /** Called when a request's response begins (its request has reached the model). */
  onRequestSent?(): void
}

export interface TurnResult {
  /** `stopped`: beforeRequest ended the turn (`stopReason` says why). */
  status: 'done' | 'partial' | 'aborted' | 'stopped'
  stopReason?: string
  /** The text of the final assistant message. */
  text: string
  iterations: number
  toolCalls: Array<{ name: string; input: unknown; isError: boolean }>
}

/**
 * Runs the model with streaming and tools until it stops asking for tools, the iteration limit is
 * reached (partial) or the signal aborts (the stream and the running tool stop at once).
 * API errors (after the SDK's own retries) are thrown to the caller.
 */
export async function runTurn(opts: TurnOptions): Promise<TurnResult> {
  const apiTools = opts.tools.map((t) => t.toApiTool())
  const byName = new Map(opts.tools.map((t) => [t.name, t]))
  const toolCalls: TurnResult['toolCalls'] = []
  // What a fork repeats byte for byte: the live conversation, not a copy.
  const snapshot: TurnRequest = {
    model: opts.model,
    maxTokens: opts.maxTokens ?? DEFAULT_MAX_TOKENS,
    system: opts.system,
    ...(opts.cache ? { cache: opts.cache } : {}),
    tools: opts.tools,
    messages: opts.messages,
  }
  let text = ''
  for (let iteration = 1; iteration <= opts.maxIterations; iteration++) {
    if (opts.signal.aborted) return { status: 'aborted', text, iterations: iteration - 1, toolCalls }
    const gate = await opts.beforeRequest?.(opts.messages, apiTools)
    if (gate) return { status: 'stopped', stopReason: gate.stop, text, iterations: iteration - 1, toolCalls }
    // Every request is the member's spend: a spent budget stops the turn before it is sent.
    const over = await opts.toolContext.meter.check()
    if (over) return { status: 'stopped', stopReason: over, text, iterations: iteration - 1, toolCalls }
    let final: Anthropic.Message | undefined
    for (let attempt = 1; !final; attempt++) {
      try {
        final = await request(opts, apiTools)
      } catch (err) {
        if (err instanceof APIUserAbortError || opts.signal.aborted) return { status: 'aborted', text, iterations: iteration, toolCalls }
        if (attempt === 1 && isPromptTooLong(err) && (await opts.onPromptTooLong?.(opts.messages, apiTools, err))) continue
        throw err
      }
    }
    const usage = usageFromApi(final.usage)
    opts.toolContext.meter.record(opts.model, usage)
    opts.onUsage?.(usage)
    const assistant: MessageParam = { role: 'assistant', content: final.content as Anthropic.ContentBlockParam[] }
    opts.messages.push(assistant)
    await opts.record?.({ kind: 'message', message: assistant }, { kind: 'usage', model: opts.model, ...usage })
    text = final.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('')

    const uses = final.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')
    if (uses.length === 0) return { status: 'done', text, iterations: iteration, toolCalls }

    // Cut off (max_tokens) inside a call: its input may be truncated, so it is not run; but every
    // tool_use still gets a result, or the API refuses the conversation from then on.
    const cutOff = final.stop_reason !== 'tool_use'
    const notRun = `Not run: your response was cut off (stop_reason ${final.stop_reason}) before this call was complete. Retry with a smaller input (e.g. write a large file in parts).`
    const results: ToolResultBlockParam[] = cutOff
      ? uses.map((use) => ({ type: 'tool_result', tool_use_id: use.id, content: notRun, is_error: true }))
      : []
    for (const use of cutOff ? [] : uses) {
      const tool = byName.get(use.name)
      opts.onToolStart?.(use.name, use.input)
      const started = Date.now()
      const result: ToolResult = opts.signal.aborted
        ? { content: 'Interrupted: the agent was stopped.', isError: true }
        : tool
          ? await runTool(tool, use.input, { ...opts.toolContext, toolUseId: use.id, request: snapshot })
          : { content: `No such tool: ${use.name}. Available: ${[...byName.keys()].join(', ')}`, isError: true }
      const ms = Date.now() - started
      // Approved with edited input: the log shows what ran, and what the model had asked for.
      const ran = result.ranInput ?? use.input
      opts.onToolEnd?.(use.name, ran, result, ms)
      toolCalls.push({ name: use.name, input: ran, isError: result.isError === true })
      await opts.record?.({
        kind: 'tool',
        tool: use.name,
        input: ran,
        ...(result.ranInput ? { requestedInput: use.input } : {}),
        isError: result.isError === true,
        output: result.content.slice(0, 4000),
        ms,
      })
      results.push({ type: 'tool_result', tool_use_id: use.id, content: result.content, ...(result.isError ? { is_error: true } : {}) })
    }
    const user: MessageParam = { role: 'user', content: results }
    opts.messages.push(user)
    await opts.record?.({ kind: 'message', message: user })
    if (opts.signal.aborted) return { status: 'aborted', text, iterations: iteration, toolCalls }
  }
  return { status: 'partial', text, iterations: opts.maxIterations, toolCalls }
}

/** One streamed model request with the cache layout. */
async function request(opts: TurnOptions, apiTools: Anthropic.Tool[]): Promise<Anthropic.Message> {
  const prompt = layoutPrompt(opts.system, opts.messages, opts.cache ?? DEFAULT_CACHE, opts.keepBreakpoints)
  const stream = opts.client.messages.stream(
    {
      model: opts.model,
      max_tokens: opts.maxTokens ?? DEFAULT_MAX_TOKENS,
      system: prompt.system,
      messages: prompt.messages,
      ...(apiTools.length ? { tools: apiTools } : {}),
    },
    { signal: opts.signal, headers: { 'x-swarm-agent': opts.agentHeader ?? opts.toolContext.agentName } },
  )
  stream.on('text', (delta) => opts.onText?.(delta))
  if (opts.onRequestSent) stream.on('connect', opts.onRequestSent)
  return stream.finalMessage()
}

/** The API's 400 for a prompt above the context window. */
export function isPromptTooLong(err: unknown): err is APIError {
  return err instanceof APIError && err.status === 400 && /prompt is too long/i.test(err.message)
}
