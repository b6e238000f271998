/**
 * The canonical names of every tool an agent of swarm can be given (Claude Code's names, so
 * models already know them). Agent definitions and tool filtering work on these names alone,
 * without importing the tools (Batch lives in a layer above them). It cannot drift: a unit test
 * (test/agent/tool-filter.test.ts) builds every tool from its factory and compares the names.
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
