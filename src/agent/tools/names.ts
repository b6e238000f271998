/**
 * The canonical names of every tool an agent of swarm can be given (Claude Code's names, so
 * models already know them). Agent definitions and tool filtering work on these names alone,
 * without importing the tools; `tool-registry.ts` checks that every registered tool is listed.
 */
export const TOOL_NAMES = [
  'Read',
  'Write',
  'Edit',
  'Bash',
  'Glob',
  'Grep',
  'SendMessage',
  'TaskCreate',
  'TaskGet',
  'TaskList',
  'TaskUpdate',
  'ExitPlanMode',
  'Agent',
  'TaskStop',
  'Batch',
] as const
export type ToolName = (typeof TOOL_NAMES)[number]

export function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name)
}
