import os from 'node:os'
import path from 'node:path'
import { z } from 'zod'
import type { ToolKind } from '../permissions/rules/tools.js'
import type { MessageParam, Tool as ApiTool, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages'
import { errorMessage } from '../errors.js'
import type { BashSandbox } from '../sandbox/types.js'
import type { Verdict } from '../asks/types.js'
import type { SpendMeter } from './spend-meter.js'
import type { CacheSetting, SystemPrompt } from './cache-layout.js'

/**
 * What a tool hands back to the model: text, and whether it is a failure. A failure is a
 * result with `is_error: true` — never a throw out of `runTool`, never a crash of the loop.
 */
export interface ToolResult {
  content: string
  isError?: boolean
  /** The input the tool ran with, when the permission answer replaced the model's (approved with edited input). */
  ranInput?: Record<string, unknown>
}

/**
 * Asked before EVERY tool call, after the input validated, answered with the ask flow's Verdict
 * (`updatedInput` replaces the input, which is validated again). The permissions layer supplies
 * the real one; `allowAll` is the default.
 */
export type PermissionCheck = (tool: AnyTool, input: Record<string, unknown>, ctx: ToolContext) => Verdict | Promise<Verdict>

/**
 * Everything a tool may use from its caller. In-process agents share `process.cwd()` and
 * `process.env`, so tools resolve paths against `cwd` and spawn with `env`, never the process's.
 */
export interface ToolContext {
  /** Absolute working directory of the agent. */
  cwd: string
  /** Aborts the call: a running command's process group is killed, a walk stops. */
  signal: AbortSignal
  agentName: string
  teamName: string
  checkPermission: PermissionCheck
  /** The id of the `tool_use` block being answered; set per call by the loop. */
  toolUseId?: string
  /** Streaming output of a long call (Bash), for the pane. */
  onProgress?: (text: string) => void
  /** Environment for spawned commands; default `process.env`. */
  env?: NodeJS.ProcessEnv
  /**
   * When set, Write and Edit refuse paths outside these directories (absolute). Used for
   * agent types that may only write to a scratch directory (Verification).
   */
  writableRoots?: readonly string[]
  /**
   * Where Bash commands run: the member's sandbox (subagents and forks inherit their parent's), or
   * the explicit `unsandboxed(why)`, whose calls are always asked. Required: a context cannot be
   * built without saying which.
   */
  sandbox: BashSandbox
  /**
   * The account every model request of this context is checked against and recorded in: the
   * member's own (subagents, forks and batch workers carry their parent's). Required, as the sandbox.
   */
  meter: SpendMeter
  /** The request this call answers (set by the turn loop): what a fork copies byte for byte. */
  request?: TurnRequest
  /** How deep in delegation the caller is: 0 for the lead or a teammate, n for a subagent n levels down. */
  depth?: number
  /** Set inside a fork child: a fork may not fork again. */
  forkChild?: boolean
  /** Set for a call the runtime makes itself (compaction restore): what would be asked is denied, nobody is asked. */
  unattended?: boolean
}

/** The parts of a model request a fork must repeat byte for byte (the live conversation, not a copy). */
export interface TurnRequest {
  model: string
  maxTokens: number
  system: string | SystemPrompt
  cache?: CacheSetting
  tools: readonly AnyTool[]
  messages: readonly MessageParam[]
}

/** Input of `defineTool`. `execute` may return a string (success) or a ToolResult, or throw. */
export interface ToolSpec<S extends z.ZodObject> {
  /** The name the model calls the tool by (Claude Code's names: Read, Write, Bash, …). */
  name: string
  description: string
  inputSchema: S
  /** What the tool does; permission modes, read-only agent types and the coordinator read it. */
  kind: ToolKind
  /** Only the lead has it (Agent, TaskStop): teammates never get it, whatever their definition says. */
  leadOnly?: boolean
  execute(input: z.output<S>, ctx: ToolContext): Promise<ToolResult | string>
  /** One short line describing a call (for the pane and permission prompts). */
  summarize?(input: z.output<S>): string
  /** Absolute paths the call reads or writes (for path-based permission rules). */
  paths?(input: z.output<S>, ctx: ToolContext): string[]
}

/** A declared tool. Create with `defineTool`; call with `runTool`. */
export interface Tool<S extends z.ZodObject = z.ZodObject> extends ToolSpec<S> {
  /** `kind === 'read'`: the tool never changes anything. */
  readonly readOnly: boolean
  /** The Messages API tool definition, derived from `inputSchema`. */
  toApiTool(): ApiTool
  summarize(input: z.output<S>): string
  paths(input: z.output<S>, ctx: ToolContext): string[]
}

// Tools of different input types live in one list; method parameters are bivariant.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = Tool<any>

/** The default permission hook: allows everything. */
export const allowAll: PermissionCheck = () => ({ behavior: 'allow' })

export function defineTool<S extends z.ZodObject>(spec: ToolSpec<S>): Tool<S> {
  let apiTool: ApiTool | undefined
  return {
    ...spec,
    readOnly: spec.kind === 'read',
    toApiTool() {
      apiTool ??= { name: spec.name, description: spec.description, input_schema: toInputSchema(spec.inputSchema) }
      return apiTool
    },
    summarize: (input) => (spec.summarize ? spec.summarize(input) : defaultSummary(input)),
    paths: (input, ctx) => (spec.paths ? spec.paths(input, ctx) : []),
  }
}

/**
 * Validates the model's input, asks `ctx.checkPermission`, executes, and turns every
 * failure (invalid input, denial, abort, thrown error) into an `isError` result.
 */
export async function runTool(tool: AnyTool, rawInput: unknown, ctx: ToolContext): Promise<ToolResult> {
  if (ctx.signal.aborted) return { content: `${tool.name} was not run: the call was aborted`, isError: true }
  const parsed = tool.inputSchema.safeParse(rawInput)
  if (!parsed.success) return invalidInput(tool, parsed.error)
  let input = parsed.data as Record<string, unknown>
  try {
    const decision = await ctx.checkPermission(tool, input, ctx)
    if (decision.behavior === 'deny') {
      return { content: `Permission to use ${tool.name} was denied: ${decision.message}`, isError: true }
    }
    if (decision.updatedInput) {
      const again = tool.inputSchema.safeParse(decision.updatedInput)
      if (!again.success) return invalidInput(tool, again.error)
      input = again.data as Record<string, unknown>
    }
  } catch (err) {
    return { content: `${tool.name} was not run: the permission check failed: ${errorMessage(err)}`, isError: true }
  }
  const edited = input !== parsed.data ? { ranInput: input } : {}
  try {
    const result = await tool.execute(input, ctx)
    return { ...(typeof result === 'string' ? { content: result } : result), ...edited }
  } catch (err) {
    if (ctx.signal.aborted) return { content: `${tool.name} was aborted`, isError: true, ...edited }
    return { content: errorMessage(err), isError: true, ...edited }
  }
}

/** The `tool_result` block answering `toolUseId` with `result`. */
export function toToolResultBlock(toolUseId: string, result: ToolResult): ToolResultBlockParam {
  return {
    type: 'tool_result',
    tool_use_id: toolUseId,
    content: result.content,
    ...(result.isError ? { is_error: true } : {}),
  }
}

/**
 * The kind, summary and paths of a tool whose input names one file (`file_path`): Read, Write,
 * Edit. Spread into the tool's spec, so a permission rule on a path sees what the tool touches.
 */
export function oneFileTool<K extends ToolKind>(kind: K) {
  return {
    kind,
    summarize: (input: { file_path: string }) => input.file_path,
    paths: (input: { file_path: string }, ctx: Pick<ToolContext, 'cwd' | 'env'>) => [resolveToolPath(ctx, input.file_path)],
  }
}

/** Resolves a path argument against the agent's cwd (never process.cwd()); expands `~/`. */
export function resolveToolPath(ctx: Pick<ToolContext, 'cwd' | 'env'>, p: string): string {
  if (p === '~' || p.startsWith('~/')) {
    const home = ctx.env?.HOME || os.homedir()
    return path.join(home, p.slice(1))
  }
  return path.resolve(ctx.cwd, p)
}

/** JSON Schema for the Messages API: `{type:'object', properties, required?}`, no `$schema`. */
export function toInputSchema(schema: z.ZodObject): ApiTool.InputSchema {
  let known = inputSchemas.get(schema)
  if (!known) {
    const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>
    delete json.$schema
    known = stripNoise(json) as ApiTool.InputSchema
    inputSchemas.set(schema, known)
  }
  return known
}

/**
 * Converted once per schema, not per tool: each teammate has its own SendMessage and task tools
 * (bound to it) over the same module-level schemas, and 64 in one process converted them 64 times.
 */
const inputSchemas = new WeakMap<z.ZodObject, ApiTool.InputSchema>()

// zod writes the safe-integer bounds into every `.int()`; they only cost the model tokens.
function stripNoise(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(stripNoise)
  if (node === null || typeof node !== 'object') return node
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === 'maximum' && value === Number.MAX_SAFE_INTEGER) continue
    if (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) continue
    out[key] = stripNoise(value)
  }
  return out
}

function invalidInput(tool: AnyTool, error: z.ZodError): ToolResult {
  const issues = error.issues.map((issue) => {
    const where = issue.path.length ? issue.path.join('.') : 'input'
    return `${where}: ${issue.message}`
  })
  return { content: `Invalid input for ${tool.name}: ${issues.join('; ')}`, isError: true }
}

const SUMMARY_MAX = 80

function defaultSummary(input: Record<string, unknown>): string {
  const first = Object.values(input).find((v) => typeof v === 'string') as string | undefined
  return truncateLine(first ?? JSON.stringify(input), SUMMARY_MAX)
}

/** First line of `text`, cut to `max` characters with an ellipsis. */
export function truncateLine(text: string, max = SUMMARY_MAX): string {
  const line = text.split('\n', 1)[0] ?? ''
  const cut = line.length > max ? `${line.slice(0, max - 1)}…` : line
  return cut + (text.includes('\n') && cut === line ? ' …' : '')
}
