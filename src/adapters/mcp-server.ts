/**
 * `swarm mcp`: an MCP server on stdio (JSON-RPC 2.0, one message a line) that gives an agent CLI
 * swarm's own team tools — SendMessage, TaskList, TaskGet, TaskUpdate, TaskCreate — with the same
 * inputs and results, acting as the teammate named by --name. Requests are answered in order.
 */
import readline from 'node:readline'
import { unmetered } from '../agent/spend-meter.js'
import { allowAll, runTool, type AnyTool, type ToolContext } from '../agent/tool.js'
import { createSendMessageTool, type TeamToolHost } from '../agent/tools/send-message.js'
import { createTaskTools } from '../agent/tools/tasks.js'
import { unsandboxed } from '../sandbox/unsandboxed.js'

const PROTOCOL_VERSION = '2025-06-18'
const TEAM_TOOLS = ['SendMessage', 'TaskList', 'TaskGet', 'TaskUpdate', 'TaskCreate']

interface RpcRequest {
  jsonrpc: '2.0'
  id?: number | string | null
  method: string
  params?: Record<string, unknown>
}

export interface McpServerOptions {
  team: string
  name: string
  cwd: string
  env: NodeJS.ProcessEnv
  input: NodeJS.ReadableStream
  output: NodeJS.WritableStream
}

export function teamTools(host: TeamToolHost): AnyTool[] {
  const all: AnyTool[] = [createSendMessageTool(host), ...createTaskTools(host)]
  return TEAM_TOOLS.map((n) => all.find((t) => t.name === n)).filter((t): t is AnyTool => t !== undefined)
}

/** Serves until the input ends; resolves then. */
export async function serveMcp(o: McpServerOptions): Promise<void> {
  const host: TeamToolHost = { team: o.team, name: o.name, env: o.env, turnLog: { completedTaskIds: [], shutdownResponses: new Map() } }
  const tools = teamTools(host)
  const controller = new AbortController()
  const ctx: ToolContext = {
    cwd: o.cwd,
    signal: controller.signal,
    agentName: o.name,
    teamName: o.team,
    checkPermission: allowAll,
    env: o.env,
    // It serves team tools only (no Bash), so nothing runs here; the value still says so.
    sandbox: unsandboxed('swarm mcp serves team tools only'),
    meter: unmetered('swarm mcp serves team tools only: no model request is made here'),
  }
  const send = (msg: unknown) => o.output.write(`${JSON.stringify(msg)}\n`)
  const lines = readline.createInterface({ input: o.input, crlfDelay: Number.POSITIVE_INFINITY })
  for await (const line of lines) {
    if (!line.trim()) continue
    let req: RpcRequest
    try {
      req = JSON.parse(line) as RpcRequest
    } catch {
      send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } })
      continue
    }
    if (req.id === undefined || req.id === null) continue // a notification (initialized, cancelled): nothing to answer
    try {
      send({ jsonrpc: '2.0', id: req.id, result: await handle(req, tools, ctx) })
    } catch (err) {
      send({ jsonrpc: '2.0', id: req.id, error: { code: (err as { code?: number }).code ?? -32603, message: (err as Error).message } })
    }
  }
  controller.abort()
}

async function handle(req: RpcRequest, tools: AnyTool[], ctx: ToolContext): Promise<unknown> {
  switch (req.method) {
    case 'initialize':
      return {
        protocolVersion: typeof req.params?.protocolVersion === 'string' ? req.params.protocolVersion : PROTOCOL_VERSION,
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: 'swarm', version: '0.1.0' },
        instructions: `Team tools of swarm for ${ctx.agentName} in team ${ctx.teamName}.`,
      }
    case 'ping':
      return {}
    case 'tools/list':
      return { tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.toApiTool().input_schema })) }
    case 'tools/call': {
      const name = req.params?.name
      const tool = tools.find((t) => t.name === name)
      if (!tool) throw Object.assign(new Error(`unknown tool ${JSON.stringify(name)}`), { code: -32602 })
      const result = await runTool(tool, req.params?.arguments ?? {}, ctx)
      return { content: [{ type: 'text', text: result.content }], isError: result.isError === true }
    }
    default:
      throw Object.assign(new Error(`method ${req.method} is not supported`), { code: -32601 })
  }
}
