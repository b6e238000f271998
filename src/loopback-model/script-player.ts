import { type ResponseSpec, type RuleSpec, type Scenario, type StepSpec, type When, toRegExp } from './scenario.js'

/** What the player needs to know about a request. */
export interface RequestView {
  headers: Record<string, string>
  body: MessagesRequestBody
}

/** The parts of a Messages API request body the player reads. */
export interface MessagesRequestBody {
  model?: string
  stream?: boolean
  system?: string | { type: string; text?: string }[]
  messages?: { role: string; content: string | ContentBlockLike[] }[]
  [key: string]: unknown
}
interface ContentBlockLike {
  type: string
  text?: string
  content?: string | ContentBlockLike[]
  is_error?: boolean
}

/** Which part of the scenario answered a request. */
export interface PlayedStep {
  /** The agent's name, or `*` for the default script. */
  script: string
  kind: 'step' | 'rule' | 'fallback' | 'none'
  /** Index in the script's steps or rules. */
  index?: number
  label?: string
}

export type Selection = { response: ResponseSpec | RuleSpec; played: PlayedStep } | { response: undefined; played: PlayedStep; reason: string }

const DEFAULT_SCRIPT = '*'

/**
 * Plays a scenario: for each request, the agent's rules, then the shared rules, then the next
 * step of the agent's script (or of the default script). A step plays once; a step whose
 * `when` does not hold waits (the request gets the fallback); a `oneOf` step plays its first
 * matching alternative.
 */
export class ScriptPlayer {
  private readonly cursors = new Map<string, number>()
  private readonly ruleUses = new Map<string, number>()

  constructor(private readonly scenario: Scenario) {}

  /** The agent a request comes from: the agent header, else `agentFromSystem` on the system prompt. */
  agentOf(req: RequestView): string | undefined {
    const fromHeader = req.headers[this.scenario.agentHeader.toLowerCase()]
    if (fromHeader) return fromHeader
    if (!this.scenario.agentFromSystem) return undefined
    return toRegExp(this.scenario.agentFromSystem).exec(systemText(req.body))?.[1]
  }

  select(req: RequestView): Selection {
    const agent = this.agentOf(req)
    const own = agent !== undefined ? this.scenario.agents[agent] : undefined
    const scriptName = own ? agent! : DEFAULT_SCRIPT
    const rules: [string, RuleSpec[]][] = [
      [scriptName, own?.rules ?? []],
      ['shared', this.scenario.rules],
    ]
    for (const [owner, list] of rules) {
      for (const [index, rule] of list.entries()) {
        const key = `${owner}#${index}`
        const used = this.ruleUses.get(key) ?? 0
        if (rule.times !== undefined && used >= rule.times) continue
        if (!matches(rule.when, req, agent)) continue
        this.ruleUses.set(key, used + 1)
        return { response: withCaptures(rule, req), played: { script: scriptName, kind: 'rule', index, label: rule.label } }
      }
    }
    const steps = own ? own.steps : this.scenario.steps
    const cursor = this.cursors.get(scriptName) ?? 0
    const step: StepSpec | undefined = steps[cursor]
    let reason: string
    if (!step) {
      reason = `${describe(scriptName)} has no step left (it had ${steps.length})`
    } else {
      const chosen = 'oneOf' in step ? step.oneOf.find((alt) => matches(alt.when, req, agent)) : matches(step.when, req, agent) ? step : undefined
      if (chosen) {
        this.cursors.set(scriptName, cursor + 1)
        return { response: withCaptures(chosen, req), played: { script: scriptName, kind: 'step', index: cursor, label: chosen.label ?? step.label } }
      }
      reason = `step ${cursor}${step.label ? ` (${step.label})` : ''} of ${describe(scriptName)} waits for a condition this request does not meet`
    }
    if (this.scenario.fallback) {
      return { response: this.scenario.fallback, played: { script: scriptName, kind: 'fallback', label: this.scenario.fallback.label } }
    }
    return { response: undefined, played: { script: scriptName, kind: 'none' }, reason }
  }
}

function describe(script: string): string {
  return script === DEFAULT_SCRIPT ? 'the default script' : `the script of agent ${JSON.stringify(script)}`
}

export function matches(when: When | undefined, req: RequestView, agent: string | undefined): boolean {
  if (!when) return true
  if (when.agent !== undefined && when.agent !== agent) return false
  if (when.stream !== undefined && when.stream !== (req.body.stream === true)) return false
  if (when.systemIncludes !== undefined && !systemText(req.body).includes(when.systemIncludes)) return false
  if (when.header) {
    for (const [name, value] of Object.entries(when.header)) {
      if (req.headers[name.toLowerCase()] !== value) return false
    }
  }
  const last = lastUserMessage(req.body)
  if (when.lastUserIncludes !== undefined && !last.text.includes(when.lastUserIncludes)) return false
  if (when.lastUserMatches !== undefined && !toRegExp(when.lastUserMatches).test(last.text)) return false
  if (when.toolResultIncludes !== undefined && !last.toolResults.some((r) => r.text.includes(when.toolResultIncludes!))) return false
  if (when.toolResultMatches !== undefined && !last.toolResults.some((r) => toRegExp(when.toolResultMatches!).test(r.text))) return false
  if (when.toolResultIsError !== undefined && last.toolResults.some((r) => r.isError) !== when.toolResultIsError) return false
  return true
}

/**
 * A response whose `when.lastUserMatches` (else `when.toolResultMatches`) captured groups gets
 * `{{match.N}}` in its strings (text, tool inputs) replaced by group N: a scripted agent can
 * answer with an id it was just sent, or that its last tool returned.
 */
export function withCaptures<T extends ResponseSpec | RuleSpec>(response: T, req: RequestView): T {
  const groups = captures(response.when, lastUserMessage(req.body))
  if (!groups) return response
  const fill = (v: unknown): unknown => {
    if (typeof v === 'string') return v.replace(/\{\{match\.(\d+)\}\}/g, (_, n: string) => groups[Number(n)] ?? '')
    if (Array.isArray(v)) return v.map(fill)
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x)]))
    return v
  }
  return {
    ...response,
    ...(response.text !== undefined && { text: fill(response.text) }),
    ...(response.content && { content: fill(response.content) }),
  } as T
}

function captures(when: When | undefined, last: ReturnType<typeof lastUserMessage>): RegExpExecArray | undefined {
  if (when?.lastUserMatches !== undefined) return toRegExp(when.lastUserMatches).exec(last.text) ?? undefined
  if (when?.toolResultMatches === undefined) return undefined
  const pattern = toRegExp(when.toolResultMatches)
  for (const r of last.toolResults) {
    const groups = pattern.exec(r.text)
    if (groups) return groups
  }
  return undefined
}

export function systemText(body: MessagesRequestBody): string {
  if (typeof body.system === 'string') return body.system
  if (Array.isArray(body.system)) return body.system.map((b) => b.text ?? '').join('\n')
  return ''
}

/** The text blocks and the tool results of the last user message. */
export function lastUserMessage(body: MessagesRequestBody): { text: string; toolResults: { text: string; isError: boolean }[] } {
  const messages = Array.isArray(body.messages) ? body.messages : []
  const last = [...messages].reverse().find((m) => m.role === 'user')
  if (!last) return { text: '', toolResults: [] }
  if (typeof last.content === 'string') return { text: last.content, toolResults: [] }
  const blocks = Array.isArray(last.content) ? last.content : []
  return {
    text: blocks
      .filter((b) => b.type === 'text')
      .map((b) => b.text ?? '')
      .join('\n'),
    toolResults: blocks.filter((b) => b.type === 'tool_result').map((b) => ({ text: blockText(b.content), isError: b.is_error === true })),
  }
}

function blockText(content: ContentBlockLike['content']): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content.map((c) => c.text ?? '').join('\n')
}
