/**
 * The Gemini API as Gemini CLI uses it: POST /v1beta/models/<model>:streamGenerateContent?alt=sse
 * (SSE `data:` lines, each a GenerateContentResponse), :generateContent (one JSON), :countTokens.
 * A function call is a `functionCall` part; its result comes back as a `functionResponse` part.
 */
import type { AgentReply, AgentTurnView } from './agent-script.js'

type Json = Record<string, unknown>

export function geminiView(body: Json): AgentTurnView {
  const contents = Array.isArray(body.contents) ? (body.contents as Json[]) : []
  const tools = Array.isArray(body.tools)
    ? (body.tools as Json[]).flatMap((t) =>
        Array.isArray(t.functionDeclarations) ? (t.functionDeclarations as Json[]).map((f) => String(f.name)) : [],
      )
    : []
  const last = contents[contents.length - 1]
  const parts = Array.isArray(last?.parts) ? (last.parts as Json[]) : []
  const response = parts.find((p) => p.functionResponse)?.functionResponse as Json | undefined
  if (response) return { toolResult: JSON.stringify(response.response ?? {}), tools }
  const lastUser = [...contents]
    .reverse()
    .find((c) => c.role === 'user' && Array.isArray(c.parts) && (c.parts as Json[]).some((p) => typeof p.text === 'string'))
  const text = lastUser ? (lastUser.parts as Json[]).map((p) => (typeof p.text === 'string' ? p.text : '')).join('') : undefined
  return { ...(text !== undefined && { lastUser: text }), tools }
}

export function geminiResponse(reply: AgentReply, opts: { model: string; inputChars: number }): Json {
  const parts: Json[] = []
  if (reply.text) parts.push({ text: reply.text })
  if ('tool' in reply) parts.push({ functionCall: { name: reply.tool, args: reply.args } })
  const prompt = Math.ceil(opts.inputChars / 4)
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: prompt, candidatesTokenCount: 8, totalTokenCount: prompt + 8 },
    modelVersion: opts.model,
  }
}
