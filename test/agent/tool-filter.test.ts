import { describe, expect, it } from 'vitest'
import { EXPLORE_AGENT, GENERAL_PURPOSE_AGENT, PLAN_AGENT, VERIFICATION_AGENT } from '../../src/agent/definitions/built-in.js'
import { resolveToolsForAgent, type ToolFilterOptions } from '../../src/agent/definitions/tool-filter.js'
import type { AgentDefinition } from '../../src/agent/definitions/types.js'
import Anthropic from '@anthropic-ai/sdk'
import type { Delegation } from '../../src/agent/subagents/delegation.js'
import type { AnyTool } from '../../src/agent/tool.js'
import { allTools, getTool, implementedToolNames, TOOL_NAMES, toolsNamed } from '../../src/agent/tool-registry.js'
import { createLeadTools, type LeadHost } from '../../src/agent/tools/lead.js'
import { createSendMessageTool, type TeamToolHost } from '../../src/agent/tools/send-message.js'
import { createTaskTools } from '../../src/agent/tools/tasks.js'
import { createBatchTool } from '../../src/batch/batch-tool.js'
import { unsandboxed } from '../../src/sandbox/unsandboxed.js'
import { unmetered } from '../../src/agent/spend-meter.js'

/**
 * Every tool any agent can be given, made by the same factories the agent loop, the leader and
 * the MCP server use (defining a tool runs none of its host's code, so the hosts stay empty).
 */
function everyTool(): AnyTool[] {
  const host = { team: 't', name: 'n', env: {}, turnLog: { completedTaskIds: [], shutdownResponses: new Map() } } as unknown as TeamToolHost
  const batch = createBatchTool({ client: new Anthropic({ apiKey: 'unused' }), env: {}, parent: 'team-lead' })
  return [...allTools(), createSendMessageTool(host), ...createTaskTools(host), ...createLeadTools({} as LeadHost, {} as Delegation, batch)]
}

// Every tool by name in TOOL_NAMES order, lead-only as the tool itself declares it.
const TOOLS = everyTool()
const ALL = TOOL_NAMES.flatMap((n) => TOOLS.filter((t) => t.name === n)).map(({ name, leadOnly }) => ({ name, leadOnly }))
const custom = (fields: Partial<AgentDefinition>): AgentDefinition => ({
  name: 'custom',
  description: 'd',
  disallowedTools: [],
  systemPrompt: 'p',
  source: 'project',
  ...fields,
})

const COORDINATION = ['SendMessage', 'TaskCreate', 'TaskGet', 'TaskList', 'TaskUpdate']
const FILES = ['Read', 'Write', 'Edit', 'Bash', 'Glob', 'Grep']

describe('resolveToolsForAgent', () => {
  it.each<[string, AgentDefinition, ToolFilterOptions, string[]]>([
    ['general-purpose lead', GENERAL_PURPOSE_AGENT, { isTeammate: false }, [...FILES, ...COORDINATION, 'Agent', 'TaskStop', 'Batch']],
    ['general-purpose teammate', GENERAL_PURPOSE_AGENT, { isTeammate: true }, [...FILES, ...COORDINATION]],
    [
      'general-purpose teammate in plan mode',
      GENERAL_PURPOSE_AGENT,
      { isTeammate: true, permissionMode: 'plan' },
      [...FILES, ...COORDINATION, 'ExitPlanMode'],
    ],
    ['Explore teammate', EXPLORE_AGENT, { isTeammate: true }, ['Read', 'Bash', 'Glob', 'Grep', ...COORDINATION]],
    [
      'Plan lead-side subagent',
      PLAN_AGENT,
      { isTeammate: false, permissionMode: 'plan' },
      ['Read', 'Bash', 'Glob', 'Grep', ...COORDINATION, 'TaskStop'],
    ],
    ['Verification teammate', VERIFICATION_AGENT, { isTeammate: true }, [...FILES, ...COORDINATION]],
    ['user type with an allow-list', custom({ tools: ['Read', 'Grep', 'Agent'] }), { isTeammate: false }, ['Read', 'Grep']],
    [
      'user type with * and a deny-list',
      custom({ tools: ['*'], disallowedTools: ['Bash'] }),
      { isTeammate: true },
      ['Read', 'Write', 'Edit', 'Glob', 'Grep', ...COORDINATION],
    ],
    [
      'user type in plan mode keeps ExitPlanMode',
      custom({ tools: ['Read', 'ExitPlanMode'], permissionMode: 'plan' }),
      { isTeammate: true },
      ['Read', 'ExitPlanMode'],
    ],
    ['user type without plan mode loses ExitPlanMode', custom({ tools: ['Read', 'ExitPlanMode'] }), { isTeammate: true }, ['Read']],
    ['built-in treated as user-defined on request', GENERAL_PURPOSE_AGENT, { isTeammate: false, isUserDefined: true }, [...FILES, ...COORDINATION]],
  ])('%s', (_case, def, options, expected) => {
    expect(resolveToolsForAgent(def, ALL, options).tools).toEqual(expected)
  })

  it('names the layer that removed each tool; an empty disallowedTools cannot undo earlier layers', () => {
    const { removed } = resolveToolsForAgent(custom({ tools: ['*'], disallowedTools: [] }), ALL, { isTeammate: true })
    expect(removed).toEqual([
      { tool: 'ExitPlanMode', layer: 'all-agents', reason: 'ExitPlanMode is only available in plan mode' },
      { tool: 'Agent', layer: 'teammate', reason: 'Agent is for the team lead only' },
      { tool: 'TaskStop', layer: 'teammate', reason: 'TaskStop is for the team lead only' },
      { tool: 'Batch', layer: 'teammate', reason: 'Batch is for the team lead only' },
    ])
    const lead = resolveToolsForAgent(custom({ tools: ['*'] }), ALL, { isTeammate: false })
    expect(lead.removed.map((r) => [r.tool, r.layer])).toEqual([
      ['ExitPlanMode', 'all-agents'],
      ['Agent', 'user-defined'],
      ['TaskStop', 'user-defined'],
      ['Batch', 'user-defined'],
    ])
  })

  it('filters only the names it is given, in their order', () => {
    expect(resolveToolsForAgent(EXPLORE_AGENT, [{ name: 'Grep' }, { name: 'Write' }, { name: 'Read' }], { isTeammate: true }).tools).toEqual([
      'Grep',
      'Read',
    ])
  })
})

describe('tool registry', () => {
  it('names in TOOL_NAMES exactly the tools the factories make, each once', () => {
    const names = TOOLS.map((t) => t.name)
    expect(new Set(names).size).toBe(names.length)
    expect([...names].sort()).toEqual([...TOOL_NAMES].sort())
  })

  it('registers the file and shell tools under their canonical names', () => {
    // The agent loop registers the mailbox tools too; these six are this module's own.
    expect(implementedToolNames()).toEqual(expect.arrayContaining(['Read', 'Write', 'Edit', 'Bash', 'Glob', 'Grep']))
    for (const tool of allTools()) expect(TOOL_NAMES).toContain(tool.name)
    expect(getTool('Read')?.readOnly).toBe(true)
    expect(getTool('Bash')?.readOnly).toBe(false)
    expect(getTool('Nope')).toBeUndefined()
    expect(toolsNamed(['Grep', 'Read', 'NotebookEdit']).map((t) => t.name)).toEqual(['Read', 'Grep'])
  })

  it("gives every tool a Messages API definition with Claude Code's fields", () => {
    const schemas = Object.fromEntries(allTools().map((t) => [t.name, t.toApiTool().input_schema]))
    const fields = (name: string) => Object.keys(schemas[name]!.properties as object)
    for (const schema of Object.values(schemas)) {
      expect(schema.type).toBe('object')
      expect(schema).not.toHaveProperty('$schema')
    }
    expect(fields('Read')).toEqual(['file_path', 'offset', 'limit'])
    expect(schemas.Read!.required).toEqual(['file_path'])
    expect(fields('Write')).toEqual(['file_path', 'content'])
    expect(fields('Edit')).toEqual(['file_path', 'old_string', 'new_string', 'replace_all'])
    expect(schemas.Edit!.required).toEqual(['file_path', 'old_string', 'new_string'])
    expect(fields('Bash')).toEqual(['command', 'timeout', 'description'])
    expect(fields('Glob')).toEqual(['pattern', 'path'])
    expect(fields('Grep')).toEqual(expect.arrayContaining(['pattern', 'path', 'glob', 'output_mode', '-i']))
  })

  it('summarizes calls in one short line', () => {
    expect(getTool('Bash')!.summarize({ command: 'npm test', description: 'run tests' })).toBe('npm test  # run tests')
    expect(getTool('Read')!.summarize({ file_path: '/a/b.ts' })).toBe('/a/b.ts')
    expect(getTool('Grep')!.summarize({ pattern: 'x+', '-i': true, path: 'src' })).toBe('/x+/i in src')
  })

  it('names the paths a call touches, resolved against the cwd', () => {
    const ctx = {
      cwd: '/proj',
      signal: new AbortController().signal,
      agentName: 'a',
      teamName: 't',
      checkPermission: () => ({ behavior: 'allow' as const }),
      sandbox: unsandboxed('a test context'),
      meter: unmetered('a test context'),
    }
    expect(getTool('Write')!.paths({ file_path: 'src/x.ts', content: '' }, ctx)).toEqual(['/proj/src/x.ts'])
    expect(getTool('Glob')!.paths({ pattern: '*.ts' }, ctx)).toEqual(['/proj'])
    expect(getTool('Bash')!.paths({ command: 'ls' }, ctx)).toEqual([])
  })
})

describe('tool metadata lives on the tools', () => {
  it('every tool declares its kind; the lead tools declare themselves lead-only and a teammate never gets them', async () => {
    const { createLeadTools } = await import('../../src/agent/tools/lead.js')
    const { createBatchTool } = await import('../../src/batch/batch-tool.js')
    const batch = createBatchTool({ client: {} as never, env: {}, parent: 'team-lead' })
    const lead = createLeadTools({} as Parameters<typeof createLeadTools>[0], { forkEnabled: false } as Parameters<typeof createLeadTools>[1], batch)
    expect(lead.map((t) => [t.name, t.kind, t.leadOnly])).toEqual([
      ['Agent', 'coordination', true],
      ['TaskStop', 'coordination', true],
      ['Batch', 'coordination', true],
    ])
    for (const t of allTools()) expect(['read', 'edit', 'execute', 'coordination']).toContain(t.kind)
    const everything = [...allTools(), ...lead]
    const teammate = resolveToolsForAgent(GENERAL_PURPOSE_AGENT, everything, { isTeammate: true })
    expect(teammate.tools).not.toContain('Agent')
    expect(teammate.removed).toContainEqual({ tool: 'TaskStop', layer: 'teammate', reason: 'TaskStop is for the team lead only' })
    expect(resolveToolsForAgent(GENERAL_PURPOSE_AGENT, everything, { isTeammate: false }).tools).toContain('Agent')
  })
})
