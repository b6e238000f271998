import fs from 'node:fs/promises'
import YAML from 'yaml'
import { z } from 'zod'
import { ExitCode, SwarmError } from '../errors.js'

/**
 * A scenario is what the loopback model server plays (JSON or YAML; the format with a whole
 * team's example is documented in docs/offline.md, runnable as examples/offline-team.yaml with
 * `swarm model serve`; more in test/loopback-model/fixtures/):
 *
 * ```yaml
 * agents:                      # one script per agent, picked by the x-swarm-agent header
 *   alice:                     # (or by `agentFromSystem`, a regex with one group on the system prompt)
 *     - content:
 *         - { type: text, text: "Reading it." }
 *         - { type: tool_use, name: Read, input: { file_path: notes.txt } }
 *     - oneOf:                 # the first alternative whose `when` holds plays
 *         - { when: { toolResultIncludes: hello }, text: "It says hello." }
 *         - { text: "It says something else." }
 *   bob:
 *     rules:                   # checked before the steps, every request; `times` limits them
 *       - { when: { lastUserIncludes: shutdown_request }, text: "Bye." }
 *     steps:
 *       - { error: { status: 429, retryAfter: 0.01 } }   # the SDK retries it
 *       - { text: "Done.", usage: { input_tokens: 10, cache_read_input_tokens: 8 } }
 * steps: [ { text: "Default reply." } ]                # agents without a script of their own
 * ```
 *
 * Each step plays once, in order; a step whose `when` does not hold waits, and the request
 * gets `fallback` (default: a 400 invalid_request_error saying which step waits or that the
 * script is exhausted — loud, and not retried by the SDK). Step cursors and `times` live in the
 * server's memory: a script that must survive a restarted agent or server is written as rules
 * without `times`, each matched by what the request carries (examples/offline-team.yaml).
 */

/** The header that names the agent of a request (send it per request from a shared client). */
export const DEFAULT_AGENT_HEADER = 'x-swarm-agent'

/** `/source/flags` or a bare source. */
export function toRegExp(pattern: string): RegExp {
  const m = /^\/(.*)\/([dgimsuvy]*)$/s.exec(pattern)
  return m ? new RegExp(m[1]!, m[2]) : new RegExp(pattern)
}

/** A regular expression, checked when the file is read (a bad one would fail every request it meets). */
const Pattern = z.string().refine(
  (p) => {
    try {
      toRegExp(p)
      return true
    } catch {
      return false
    }
  },
  { message: 'not a valid regular expression' },
)

/** Conditions on the request; all given ones must hold. */
export const When = z.strictObject({
  /** The agent making the request (header `x-swarm-agent`, or `agentFromSystem`). */
  agent: z.string().optional(),
  /** Substring of the text of the last user message (its text blocks; tool results excluded). */
  lastUserIncludes: z.string().optional(),
  /** Regular expression on the same text; `/source/flags` or a bare source. Its groups fill `{{match.N}}` in the response. */
  lastUserMatches: Pattern.optional(),
  /** Substring of any tool_result in the last user message. */
  toolResultIncludes: z.string().optional(),
  /** Regular expression on each tool_result of the last user message (one must match); `/source/flags` or a bare source. Its groups fill `{{match.N}}` when `lastUserMatches` is not given. */
  toolResultMatches: Pattern.optional(),
  /** The last user message carries a tool_result with `is_error: true` (or none with it, if false). */
  toolResultIsError: z.boolean().optional(),
  /** Substring of the system prompt. */
  systemIncludes: z.string().optional(),
  /** Request headers that must be equal (names case-insensitive). */
  header: z.record(z.string(), z.string()).optional(),
  /** Only streaming (true) or only non-streaming (false) requests. */
  stream: z.boolean().optional(),
})
export type When = z.infer<typeof When>

export const TextBlockSpec = z.strictObject({ type: z.literal('text'), text: z.string() })
export const ToolUseBlockSpec = z.strictObject({
  type: z.literal('tool_use'),
  /** Default: a generated `toolu_loopback_<n>`. */
  id: z.string().optional(),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()).default({}),
})
export const BlockSpec = z.discriminatedUnion('type', [TextBlockSpec, ToolUseBlockSpec])
export type BlockSpec = z.infer<typeof BlockSpec>

const Count = z.number().int().nonnegative()
export const UsageSpec = z.strictObject({
  input_tokens: Count.optional(),
  output_tokens: Count.optional(),
  cache_creation_input_tokens: Count.optional(),
  cache_read_input_tokens: Count.optional(),
})
export type UsageSpec = z.infer<typeof UsageSpec>

export const ErrorSpec = z.strictObject({
  status: z.number().int().min(400).max(599),
  /** Default from the status: 429 rate_limit_error, 529 overloaded_error, 500 api_error, … */
  type: z.string().optional(),
  message: z.string().optional(),
  /** Seconds, sent as the `retry-after` header (0 lets the SDK retry at once). */
  retryAfter: z.number().nonnegative().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  /** For streaming requests: answer 200, start the message, then send an `error` event. */
  midStream: z.boolean().optional(),
})
export type ErrorSpec = z.infer<typeof ErrorSpec>

const StopReason = z.enum(['end_turn', 'tool_use', 'max_tokens', 'stop_sequence', 'pause_turn', 'refusal'])

/** One response: content (text and/or tool_use blocks) or an error. */
const responseFields = {
  /** Shorthand for `content: [{type: text, text}]`, placed before any `content`. */
  text: z.string().optional(),
  content: z.array(BlockSpec).optional(),
  /** Default: tool_use when there is a tool_use block, else end_turn. */
  stop_reason: StopReason.optional(),
  usage: UsageSpec.optional(),
  /** Default: the scenario's model, else the request's. */
  model: z.string().optional(),
  error: ErrorSpec.optional(),
  /** Wait before answering (lets tests abort a request in flight). */
  delayMs: z.number().int().nonnegative().optional(),
  /** Wait between streamed events. */
  chunkDelayMs: z.number().int().nonnegative().optional(),
  /** A name shown in request records and errors. */
  label: z.string().optional(),
}

function hasOneResponse(r: { text?: string; content?: unknown[]; error?: unknown }): boolean {
  return (r.error !== undefined) !== (r.text !== undefined || r.content !== undefined)
}
const ONE_RESPONSE = { message: 'give either text/content or error (exactly one kind of response)' }

export const ResponseSpec = z.strictObject({ ...responseFields, when: When.optional() }).refine(hasOneResponse, ONE_RESPONSE)
export type ResponseSpec = z.infer<typeof ResponseSpec>

/** A script step: a response (waits until its `when` holds), or a choice among alternatives. */
export const StepSpec = z.union([z.strictObject({ oneOf: z.array(ResponseSpec).min(1), label: z.string().optional() }), ResponseSpec])
export type StepSpec = z.infer<typeof StepSpec>

/** A reactive response, checked before the script; `times` uses (default unlimited). */
export const RuleSpec = z
  .strictObject({ ...responseFields, when: When, times: z.number().int().positive().optional() })
  .refine(hasOneResponse, ONE_RESPONSE)
export type RuleSpec = z.infer<typeof RuleSpec>

const ScriptObject = z.strictObject({ steps: z.array(StepSpec).default([]), rules: z.array(RuleSpec).default([]) })
/** An agent's script: a list of steps, or `{steps, rules}`. */
export const ScriptSpec = z.union([z.array(StepSpec).transform((steps) => ({ steps, rules: [] as RuleSpec[] })), ScriptObject])
export type ScriptSpec = z.output<typeof ScriptSpec>

export const Scenario = z.strictObject({
  name: z.string().optional(),
  /** The model reported in responses (default: the model of the request). */
  model: z.string().optional(),
  /** The context window of every model, in tokens (default: 200k, 1M for `[1m]` names). */
  contextWindow: z.number().int().positive().optional(),
  /** Header naming the agent of a request. */
  agentHeader: z.string().default(DEFAULT_AGENT_HEADER),
  /** Regular expression with one capture group, applied to the system prompt when the header is absent. */
  agentFromSystem: Pattern.optional(),
  /** Scripts by agent name. */
  agents: z.record(z.string(), ScriptSpec).default({}),
  /** The script of requests from agents without their own. */
  steps: z.array(StepSpec).default([]),
  /** Rules checked for every request, after the agent's own rules. */
  rules: z.array(RuleSpec).default([]),
  /** The answer when nothing matches; default: a 400 invalid_request_error naming the agent and step. */
  fallback: ResponseSpec.optional(),
})
export type Scenario = z.output<typeof Scenario>
export type ScenarioInput = z.input<typeof Scenario>

export class ScenarioError extends SwarmError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('SWARM_BAD_SCENARIO', message, {
      exitCode: ExitCode.usage,
      hint: 'fix the scenario file (JSON or YAML; the format is in docs/offline.md, an example in examples/offline-team.yaml)',
      ...options,
    })
  }
}

/** Validates a scenario object; throws ScenarioError naming the first bad field. */
export function parseScenario(value: unknown, source = 'scenario'): Scenario {
  const parsed = Scenario.safeParse(value)
  if (parsed.success) return parsed.data
  const { path, message } = deepestIssue(parsed.error.issues[0]!)
  throw new ScenarioError(`invalid ${source}: ${path.length ? path.join('.') : '(top level)'}: ${message}`)
}

/** A union reports "Invalid input"; the branch that got furthest says what is actually wrong. */
function deepestIssue(issue: z.core.$ZodIssue): { path: PropertyKey[]; message: string } {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return { path: issue.path, message: issue.message }
  let best: { path: PropertyKey[]; message: string } | undefined
  for (const branch of issue.errors) {
    if (!branch[0]) continue
    const inner = deepestIssue(branch[0])
    if (!best || inner.path.length > best.path.length) best = inner
  }
  return best ? { path: [...issue.path, ...best.path], message: best.message } : { path: issue.path, message: issue.message }
}

/** Reads a scenario file: `.json` as JSON, anything else as YAML (a superset of JSON). */
export async function loadScenarioFile(file: string): Promise<Scenario> {
  let text: string
  try {
    text = await fs.readFile(file, 'utf8')
  } catch (err) {
    throw new ScenarioError(`cannot read scenario file ${file}: ${(err as Error).message}`, { cause: err })
  }
  let value: unknown
  try {
    value = file.endsWith('.json') ? JSON.parse(text) : YAML.parse(text)
  } catch (err) {
    throw new ScenarioError(`scenario file ${file} does not parse: ${(err as Error).message.split('\n')[0]}`, { cause: err })
  }
  return parseScenario(value, `scenario file ${file}`)
}
