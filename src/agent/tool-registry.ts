import type { AnyTool } from './tool.js'
import { bashTool } from './tools/bash.js'
import { editTool } from './tools/edit.js'
import { exitPlanModeTool } from './tools/exit-plan-mode.js'
import { globTool } from './tools/glob.js'
import { grepTool } from './tools/grep.js'
import { isToolName, TOOL_NAMES, type ToolName } from './tools/names.js'
import { readTool } from './tools/read.js'
import { writeTool } from './tools/write.js'

export { TOOL_NAMES, type ToolName } from './tools/names.js'

/**
 * The one list of implemented tools. Adding a tool: its own file in tools/, its name in
 * tools/names.ts, and one line here. SendMessage and Task* are made by the agent loop (it owns the
 * mailbox), Agent and TaskStop by the lead's delegation, Batch by the leader (a layer above).
 */
const TOOLS: readonly AnyTool[] = [readTool, writeTool, editTool, bashTool, globTool, grepTool, exitPlanModeTool]

for (const tool of TOOLS) {
  if (!isToolName(tool.name)) throw new Error(`tool ${tool.name} is registered but missing from TOOL_NAMES`)
}

/** Every implemented tool, in TOOL_NAMES order. */
export function allTools(): readonly AnyTool[] {
  return TOOL_NAMES.flatMap((name) => TOOLS.filter((t) => t.name === name))
}

export function getTool(name: string): AnyTool | undefined {
  return TOOLS.find((t) => t.name === name)
}

/** The implemented tools among `names`, in TOOL_NAMES order; names without a tool are skipped. */
export function toolsNamed(names: Iterable<string>): AnyTool[] {
  const wanted = new Set(names)
  return allTools().filter((t) => wanted.has(t.name))
}

/** Names of the implemented tools (what `resolveToolsForAgent` filters). */
export function implementedToolNames(): ToolName[] {
  return allTools().map((t) => t.name as ToolName)
}
