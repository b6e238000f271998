import { z } from 'zod'
import { defineTool, truncateLine } from '../tool.js'
import { memberMarker } from '../../home/member-marker.js'
import { markerEnv } from '../../process/marker.js'
import { runCommand } from './command-runner.js'

export const DEFAULT_BASH_TIMEOUT_MS = 120_000
export const MAX_BASH_TIMEOUT_MS = 600_000
/** Output beyond this is cut from the middle (the start and the end are what matter). */
export const MAX_BASH_OUTPUT_CHARS = 30_000

const inputSchema = z.object({
  command: z.string().min(1).describe('The command to execute'),
  timeout: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(`Optional timeout in milliseconds (max ${MAX_BASH_TIMEOUT_MS}; default ${DEFAULT_BASH_TIMEOUT_MS})`),
  description: z.string().optional().describe('A short description of what the command does, in 5-10 words'),
})

export const bashTool = defineTool({
  name: 'Bash',
  description: [
    'Executes a bash command in the working directory and returns its output (stdout and stderr interleaved) and exit code.',
    `Default timeout ${DEFAULT_BASH_TIMEOUT_MS / 1000} s, at most ${MAX_BASH_TIMEOUT_MS / 1000} s; on timeout the command and everything it started are killed.`,
    `Output longer than ${MAX_BASH_OUTPUT_CHARS} characters is truncated in the middle.`,
    'Standard input is closed: do not run interactive commands.',
    'Processes left running in the background (cmd &) are stopped when the command returns.',
    'Prefer Read, Glob and Grep over cat, find and grep.',
  ].join('\n'),
  inputSchema,
  kind: 'execute',
  summarize: (input) => truncateLine(input.description ? `${input.command}  # ${input.description}` : input.command),
  async execute(input, ctx) {
    const timeoutMs = Math.min(input.timeout ?? DEFAULT_BASH_TIMEOUT_MS, MAX_BASH_TIMEOUT_MS)
    const r = await runCommand(ctx.sandbox, input.command, {
      cwd: ctx.cwd,
      env: { ...(ctx.env ?? process.env), ...markerEnv(memberMarker(ctx.teamName, ctx.agentName, ctx.env)) },
      signal: ctx.signal,
      timeoutMs,
      maxOutputChars: MAX_BASH_OUTPUT_CHARS,
      onOutput: ctx.onProgress,
    })
    const parts = [r.output.trimEnd() || '(no output)']
    if (r.droppedChars > 0) parts.push(`(output truncated: ${r.droppedChars} characters were cut from the middle)`)
    if (r.timedOut) parts.push(`Command timed out after ${formatMs(timeoutMs)}; it and its child processes were killed.`)
    else if (r.aborted) parts.push('Command was aborted; it and its child processes were killed.')
    else if (r.signal) parts.push(`Command was killed by ${r.signal}.`)
    else if (r.exitCode !== 0) parts.push(`Exit code: ${r.exitCode}`)
    const blocked = r.blocked
    if (blocked.length)
      parts.push(`The sandbox moved aside protected paths this command created (write them with Edit or Write, which ask): ${blocked.join(', ')}`)
    const failed = r.timedOut || r.aborted || r.signal !== null || r.exitCode !== 0 || blocked.length > 0
    return { content: parts.join('\n'), isError: failed }
  },
})

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`
}
