/**
 * What the loopback servers for other agent CLIs (OpenAI Responses, Chat Completions, Gemini)
 * answer: an ordered rule list over one protocol-neutral view of the request (the last user
 * text, or the tool result just returned). The first matching rule with turns left plays.
 */
import { z } from 'zod'

export const AgentReply = z.union([
  z.strictObject({ text: z.string() }),
  /** A tool call: its name as the CLI declared it, and its arguments. `text` is said before it. */
  z.strictObject({
    tool: z.string(),
    args: z.record(z.string(), z.unknown()),
    text: z.string().optional(),
    /** Responses API: the tool namespace (Codex puts each MCP server's tools in `mcp__<server>`). */
    namespace: z.string().optional(),
  }),
])
export type AgentReply = z.infer<typeof AgentReply>

export const AgentRule = z.strictObject({
  /** Regular expression on the last user text (never on a tool result). */
  userMatches: z.string().optional(),
  /** Substring of the tool result the request carries (then the request is a tool result). */
  toolResultIncludes: z.string().optional(),
  /** Only requests that carry a tool result (true) or only those that do not (false). */
  afterTool: z.boolean().optional(),
  /** How many times the rule may play (default: every time). */
  times: z.number().int().positive().optional(),
  reply: AgentReply,
})
export type AgentRule = z.infer<typeof AgentRule>

export const AgentScript = z.strictObject({
  rules: z.array(AgentRule).default([]),
  /** What any other request gets (default: a short acknowledgement naming the text's length). */
  fallback: AgentReply.optional(),
})
export type AgentScriptInput = z.input<typeof AgentScript>

/** One request, whatever the protocol. */
export interface AgentTurnView {
  /** Text of the last user message (what was submitted), undefined when the last input is a tool result. */
  lastUser?: string
  /** The tool result text, when the last input is one. */
  toolResult?: string
  /** The tool names the request declares. */
  tools: string[]
}

export class AgentScriptPlayer {
  private readonly played = new Map<number, number>()
  private readonly script: z.infer<typeof AgentScript>
  constructor(script: AgentScriptInput = {}) {
    this.script = AgentScript.parse(script)
  }

  reply(view: AgentTurnView): AgentReply {
    const rules = this.script.rules
    for (let k = 0; k < rules.length; k++) {
      const r = rules[k]
      if (r.times !== undefined && (this.played.get(k) ?? 0) >= r.times) continue
      const afterTool = view.toolResult !== undefined
      if (r.afterTool !== undefined && r.afterTool !== afterTool) continue
      if (r.userMatches !== undefined && (afterTool || !new RegExp(r.userMatches).test(view.lastUser ?? ''))) continue
      if (r.toolResultIncludes !== undefined && !(view.toolResult ?? '').includes(r.toolResultIncludes)) continue
      this.played.set(k, (this.played.get(k) ?? 0) + 1)
      return r.reply
    }
    if (this.script.fallback) return this.script.fallback
    return view.toolResult !== undefined ? { text: 'The tool ran.' } : { text: `Received ${view.lastUser?.length ?? 0} characters.` }
  }
}

/** Text of a content value that is a string, or a list of parts with `text`. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : ''))
    .filter(Boolean)
    .join('\n')
}
