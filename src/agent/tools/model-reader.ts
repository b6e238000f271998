import { runTool, type ToolContext, type ToolResult } from '../tool.js'
import { readTool } from './read.js'

/**
 * The one way the runtime reads a file on a model's behalf outside a tool call (compaction
 * restore, and whatever comes later): the Read tool itself, so the same guard — the permission
 * check (control plane, rules, `denyRead`) and the tool's own control-plane test — decides, now.
 * Nobody is asked: what would be asked is not read.
 */
export function readForModel(file: string, ctx: ToolContext): Promise<ToolResult> {
  return runTool(readTool, { file_path: file }, { ...ctx, unattended: true })
}
