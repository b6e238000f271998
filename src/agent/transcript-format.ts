import type Anthropic from '@anthropic-ai/sdk'
import type pc from 'picocolors'
import { cachedShare, percent } from './pricing.js'
import type { CompactionEvent, TranscriptEvent } from './transcript.js'
import { terminalSafe } from '../terminal/neutralize.js'

/**
 * A transcript event as a person reads it — what `swarm logs` prints and the web page's
 * transcript view shows: one line (or a few) per event, everything the agent or model wrote
 * neutralised (terminalSafe), swarm's own marks coloured by `c` (pc.createColors(false): none).
 */

export type Colors = ReturnType<typeof pc.createColors>

/** A call approved with edited input: what the model had asked for. */
function edited(e: Extract<TranscriptEvent, { kind: 'tool' }>, c: Colors): string {
  if (e.requestedInput === undefined) return ''
  return `\n         ${c.yellow('edited at approval; asked for:')} ${one(short(JSON.stringify(e.requestedInput), 100))}`
}

/** One readable line (or a few) per transcript event; everything the agent or model wrote is shown terminal-safe. */
export function formatEvent(e: TranscriptEvent, c: Colors): string {
  const time = c.dim(e.t.slice(11, 19))
  switch (e.kind) {
    case 'start':
      return `${time} ${c.bold('start')} ${one(`model ${e.model}${e.mode ? `, mode ${e.mode}` : ''}${e.resume ? ', resumed' : ''} (pid ${e.pid})`)}`
    case 'state':
      return `${time} ${c.yellow('●')} ${one(`${e.state}${e.detail ? ` — ${e.detail}` : ''}`)}`
    case 'tool':
      return `${time} ${e.isError ? c.red('✗') : c.green('✓')} ${c.cyan(one(e.tool))} ${one(short(JSON.stringify(e.input), 100))} ${c.dim(`${e.ms} ms`)}${edited(e, c)}\n         ${c.dim(one(short(e.output, 160)))}`
    case 'error':
      return `${time} ${c.red('error')} ${one(`${e.errorType}${e.status ? ` ${e.status}` : ''}${e.requestId ? ` ${e.requestId}` : ''}: ${e.message}`)}`
    case 'usage':
      return `${time} ${c.dim(`tokens: ${e.inputTokens} in, ${e.outputTokens} out, ${e.cacheReadTokens} cache read, ${e.cacheWriteTokens} cache write (${percent(cachedShare(e))} cached)`)}`
    case 'compaction':
      // A marker this version cannot read (hand-edited, foreign) is shown as it is, like an unknown kind.
      if (!['tool_results_cleared', 'summarized', 'failed'].includes(e.stage) || typeof e.tokensBefore !== 'number') return rawLine(e, time)
      return `${time} ${c.yellow('⟲')} ${one(compactionLine(e))}`
    case 'message':
      return `${time} ${e.message.role === 'user' ? c.magenta('user') : c.blue('assistant')} ${terminalSafe(renderContent(e.message.content)).replace(/\n/g, '\n         │ ')}`
    default:
      // A kind this version does not know (a newer writer): show it rather than "undefined".
      return rawLine(e, time)
  }
}

const one = (s: string) => terminalSafe(s, { singleLine: true })

function rawLine(e: TranscriptEvent, time: string): string {
  const { t: _, kind, ...rest } = e as { t: string; kind: string }
  return `${time} ${one(`${kind} ${JSON.stringify(rest)}`)}`
}

function renderContent(content: Anthropic.MessageParam['content']): string {
  if (typeof content === 'string') return content
  return content
    .map((b) => {
      if (b.type === 'text') return b.text
      if (b.type === 'tool_use') return `[tool_use ${b.name}]`
      if (b.type === 'tool_result') return `[tool_result${b.is_error ? ' error' : ''}]`
      return `[${b.type}]`
    })
    .join(' ')
}

function short(s: string, max: number): string {
  const flat = s.replace(/\s+/g, ' ')
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat
}

function compactionLine(e: CompactionEvent): string {
  if (e.stage === 'failed') return `compaction failed (${e.trigger}): ${e.reason ?? 'unknown'}`
  const what = e.stage === 'summarized' ? 'compacted to a summary' : `cleared ${e.toolUseIds?.length ?? 0} old tool results`
  return `${what} (${e.trigger}${e.focus ? `, focus: ${e.focus}` : ''}): ${e.tokensBefore} → ${e.tokensAfter ?? '?'} tokens`
}
