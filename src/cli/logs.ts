import fs from 'node:fs'
import type { Command } from 'commander'
import pc from 'picocolors'
import type Anthropic from '@anthropic-ai/sdk'
import { type CompactionEvent, readTranscript, transcriptPath, type TranscriptEvent } from '../agent/transcript.js'
import { cachedShare, percent } from '../agent/pricing.js'
import { errorMessage, NotFoundError } from '../errors.js'
import { nextStopSignal } from '../process/handlers.js'
import { agentDir, validateAgentName, validateName } from '../home/paths.js'
import { getMember } from '../teams/team-store.js'
import { useColor } from '../terminal/output.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { WATCH_INTERVALS } from '../watch/intervals.js'
import { watchPath } from '../watch/path-watch.js'

/** `swarm logs <team> <name> [--follow]` */
export function registerLogsCommand(program: Command): void {
  program
    .command('logs <team> <name>')
    .description("show an agent's transcript readably: messages, tool calls, state changes, errors")
    .option('-f, --follow', 'keep printing new events until Ctrl-C')
    .option('--json', 'print the raw events (JSON lines)')
    .action((team: string, name: string, opts: { follow?: boolean; json?: boolean }) => logsCommand(team, name, opts))
}

export async function logsCommand(team: string, name: string, opts: { follow?: boolean; json?: boolean }): Promise<void> {
  validateName(team)
  validateAgentName(name)
  await getMember(team, name)
  const file = transcriptPath(team, name)
  const c = pc.createColors(useColor() && !opts.json)
  const print = (e: TranscriptEvent) => process.stdout.write((opts.json ? JSON.stringify(e) : formatEvent(e, c)) + '\n')
  let seen = 0
  const flush = async () => {
    const events = await readTranscript(file)
    for (const e of events.slice(seen)) print(e)
    seen = events.length
  }
  await flush()
  if (!opts.follow) {
    if (seen === 0 && !fs.existsSync(file))
      throw new NotFoundError(`${name} has no transcript yet (${file})`, { hint: 'it is written once the agent starts' })
    return
  }
  fs.mkdirSync(agentDir(team, name), { recursive: true, mode: 0o700 })
  let chain = Promise.resolve()
  const kick = () => {
    chain = chain.then(flush)
  }
  const dir = agentDir(team, name)
  const unwatched = (err: unknown) =>
    process.stderr.write(`swarm: warning: not watching ${dir} (${errorMessage(err)}); looking every ${WATCH_INTERVALS.logsFollow / 1000} s\n`)
  const watch = watchPath(dir, kick, { pollMs: WATCH_INTERVALS.logsFollow, onError: unwatched })
  if (!watch.armed) unwatched(watch.error)
  await nextStopSignal()
  watch.close()
}

type Colors = ReturnType<typeof pc.createColors>

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
