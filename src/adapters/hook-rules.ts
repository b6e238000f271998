/**
 * A CLI teammate's file write, decided by swarm's own rule engine before anyone is asked: the
 * control plane is denied, protected paths (`.git/`, `.claude/…`, shell rc files) are asked in
 * every mode, and only the mode (acceptEdits: unprotected paths inside the cwd) allows unasked.
 */
import path from 'node:path'
import { controlPlaneOptions } from '../permissions/rules/control-plane.js'
import { evaluatePermission } from '../permissions/rules/evaluate.js'
import { PermissionModeName } from '../permissions/rules/modes.js'
import type { RuleDecision } from '../permissions/rules/types.js'
import type { AgentAdapter, HookFacts } from './types.js'

/** Where CLIs put the path a file tool writes. */
const PATH_KEYS = ['file_path', 'path', 'filePath', 'filepath']

export interface WriterContext {
  /** The teammate's working directory (relative paths resolve against it). */
  cwd: string
  /** Its swarm mode, as recorded in the team file. */
  mode: string | undefined
  env: NodeJS.ProcessEnv
}

/** The rule engine's decision for a file tool of `adapter`; undefined for any other tool (the lead is asked). */
export function fileToolDecision(adapter: AgentAdapter, facts: HookFacts, ctx: WriterContext): RuleDecision | undefined {
  const toolName = facts.toolName === undefined ? undefined : adapter.fileTools?.[facts.toolName]
  if (!toolName) return undefined
  const input = facts.toolInput ?? {}
  const file = PATH_KEYS.map((k) => input[k]).find((v): v is string => typeof v === 'string' && v !== '')
  const mode = PermissionModeName.safeParse(ctx.mode ?? 'default')
  return evaluatePermission({
    toolName,
    // No path named: no target, which no mode allows unasked.
    input: file ? { file_path: path.resolve(ctx.cwd, file) } : {},
    kind: 'edit',
    mode: mode.success ? mode.data : 'default',
    rules: [],
    cwd: ctx.cwd,
    ...controlPlaneOptions(ctx.cwd, ctx.env),
    ...(ctx.env.HOME && { home: ctx.env.HOME }),
  })
}
