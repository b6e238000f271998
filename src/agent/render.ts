import pc from 'picocolors'
import { paintAgent } from '../terminal/colors.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { clipped } from '../terminal/clip.js'
import type { ToolResult } from './tool.js'

/**
 * Where an agent's pane output goes: its own terminal, or the leader's with a name prefix. Every
 * piece of text the model or a teammate wrote passes terminalSafe before it is written.
 */
export interface AgentOutput {
  text(delta: string): void
  tool(name: string, input: unknown, result: ToolResult, ms: number): void
  state(status: string, detail?: string): void
  info(line: string): void
  warn(line: string): void
  /** Ends a partial line of streamed text. */
  flush(): void
}

export interface RenderOptions {
  stream?: NodeJS.WritableStream & { isTTY?: boolean }
  color?: boolean
  /** Prefix every line (in-process teammates share the leader's terminal). */
  prefix?: string
  agentColor?: string
}

/** A short, single-line rendering of a tool input for the pane's record of a call made (a cut says so). */
export function shortInput(_name: string, input: unknown): string {
  const o = (input ?? {}) as Record<string, unknown>
  const pick = o.command ?? o.file_path ?? o.pattern ?? o.to ?? o.subject ?? o.taskId ?? o.description ?? o.prompt ?? JSON.stringify(o)
  const s = terminalSafe(String(pick).replace(/\s+/g, ' ').trim(), { singleLine: true })
  return clipped(s, 80)
}

function firstLine(s: string): string {
  const line = terminalSafe(s.split('\n').find((l) => l.trim()) ?? '', { singleLine: true })
  return line.length > 60 ? line.slice(0, 57) + '...' : line
}

export function createOutput(opts: RenderOptions = {}): AgentOutput {
  const stream = opts.stream ?? process.stdout
  const color = opts.color ?? (Boolean((stream as { isTTY?: boolean }).isTTY) && !process.env.NO_COLOR)
  const c = pc.createColors(color)
  const paint = (s: string) => paintAgent(c, opts.agentColor, s)
  const prefix = opts.prefix ? paint(`[${opts.prefix}]`) + ' ' : ''
  let midLine = false
  let pending = ''
  const write = (s: string) => stream.write(s)
  const endText = () => {
    if (pending) write(prefix + pending + '\n')
    pending = ''
    if (midLine) write('\n')
    midLine = false
  }
  const line = (s: string) => {
    endText()
    write(prefix + s + '\n')
  }
  return {
    text(raw) {
      if (!raw) return
      const delta = terminalSafe(raw)
      if (prefix) {
        // Several in-process agents share one terminal: whole lines only, each with its prefix.
        pending += delta
        const lines = pending.split('\n')
        pending = lines.pop() ?? ''
        for (const l of lines) write(prefix + l + '\n')
        return
      }
      const parts = delta.split('\n')
      parts.forEach((part, i) => {
        if (i > 0) {
          write('\n')
          midLine = false
        }
        if (part) {
          write(part)
          midLine = true
        }
      })
    },
    tool(name, input, result, ms) {
      const mark = result.isError ? c.red('✗') : c.green('✓')
      const outcome = result.isError ? c.red(firstLine(result.content)) : c.dim(firstLine(result.content))
      line(`${mark} ${c.bold(c.cyan(terminalSafe(name, { singleLine: true })))} ${shortInput(name, input)} ${c.dim(`(${ms} ms)`)} ${outcome}`)
    },
    state(status, detail) {
      const colour = status === 'working' ? c.yellow : status === 'idle' ? c.green : status === 'waiting' ? c.magenta : c.dim
      line(colour(terminalSafe(`● ${status}${detail ? ` — ${detail}` : ''}`, { singleLine: true })))
    },
    info(s) {
      line(terminalSafe(s))
    },
    warn(s) {
      line(c.yellow(`! ${terminalSafe(s)}`))
    },
    flush() {
      endText()
    },
  }
}
