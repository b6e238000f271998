import { z } from 'zod'
import { encodeStructured, type StructuredMessage } from '../../mailbox/messages.js'
import { addressMessage, deliverAddressed } from '../../mailbox/send.js'
import { LEAD_NAME } from '../../home/paths.js'
import { seal, type LeadSignFn } from '../../trust/sign.js'
import { readTeam } from '../../teams/team-store.js'
import { defineTool } from '../tool.js'

/** What the team tools need from the agent that owns them. */
export interface TeamToolHost {
  team: string
  name: string
  color?: string
  env: NodeJS.ProcessEnv
  /** Signs the lead's messages (only the lead has one). */
  sign?: LeadSignFn
  /** Filled in by the tools for the runtime. */
  turnLog: {
    completedTaskIds: string[]
    shutdownResponses: Map<string, { approve: boolean; reason?: string }>
  }
}

const ShutdownResponse = z.object({
  type: z.literal('shutdown_response'),
  request_id: z.string(),
  approve: z.boolean(),
  reason: z.string().optional(),
})

const input = z.object({
  to: z.string().describe('A teammate name, "team-lead", or "*" for every member but you'),
  message: z
    .union([z.string(), z.record(z.string(), z.unknown())])
    .describe('Plain text, or a structured message such as {"type":"shutdown_response","request_id":"…","approve":false,"reason":"…"}'),
  summary: z.string().optional().describe('A 5-10 word preview shown to the recipient'),
})

/** The text to deliver for a structured message object from the model, or an error. */
function structuredText(host: TeamToolHost, to: string, message: Record<string, unknown>): string | { error: string } {
  const shutdown = ShutdownResponse.safeParse(message)
  if (shutdown.success) {
    if (to !== LEAD_NAME) return { error: 'a shutdown_response goes to team-lead' }
    const r = shutdown.data
    host.turnLog.shutdownResponses.set(r.request_id, { approve: r.approve, ...(r.reason ? { reason: r.reason } : {}) })
    const timestamp = new Date().toISOString()
    const out: StructuredMessage = r.approve
      ? { type: 'shutdown_approved', requestId: r.request_id, from: host.name, timestamp }
      : { type: 'shutdown_rejected', requestId: r.request_id, from: host.name, reason: r.reason ?? 'no reason given', timestamp }
    return encodeStructured(out)
  }
  if (host.name === LEAD_NAME && message.type === 'shutdown_request') {
    const out: StructuredMessage = {
      type: 'shutdown_request',
      // Claude Code's form: any other id is shown to a Claude Code teammate as invalid.
      requestId: typeof message.request_id === 'string' ? message.request_id : `shutdown-${Date.now()}@${to}`,
      from: LEAD_NAME,
      timestamp: new Date().toISOString(),
      ...(typeof message.reason === 'string' ? { reason: message.reason } : {}),
    }
    return encodeStructured(out)
  }
  return { error: `unsupported structured message type ${JSON.stringify(message.type)}; send plain text instead` }
}

export function createSendMessageTool(host: TeamToolHost) {
  return defineTool({
    name: 'SendMessage',
    description:
      'Send a message to a teammate or the team lead (their inbox). Your plain text output is not seen by anyone; ' +
      'use this to report results, ask questions or answer. `to` is a member name or "*" for everyone else.',
    inputSchema: input,
    kind: 'coordination',
    summarize: (i) => `→ ${i.to}: ${typeof i.message === 'string' ? i.message.slice(0, 60) : JSON.stringify(i.message).slice(0, 60)}`,
    async execute(i) {
      const text = typeof i.message === 'string' ? i.message : structuredText(host, i.to, i.message)
      if (typeof text !== 'string') return { content: text.error, isError: true }
      const team = await readTeam(host.team, host.env)
      const addressed = addressMessage({
        members: team.members.map((m) => m.name),
        from: host.name,
        to: i.to,
        text,
        ...(i.summary ? { summary: i.summary } : {}),
        ...(host.color ? { color: host.color } : {}),
      })
      const sent = await deliverAddressed(host.team, seal(addressed, host.name === LEAD_NAME && host.sign ? host.sign : 'teammate'), host.env)
      return `Message sent to ${i.to === '*' ? `${sent.length} members` : i.to}.`
    },
  })
}
