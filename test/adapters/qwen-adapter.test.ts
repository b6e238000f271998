import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { qwenAdapter } from '../../src/adapters/qwen.js'
import type { AdapterContext } from '../../src/adapters/types.js'

/** The Qwen Code adapter's config (what its settings.json and argv say per mode) and its hook forms. */

let dir: string | undefined
afterEach(async () => {
  if (dir) await fs.rm(dir, { recursive: true, force: true })
  dir = undefined
})

async function prepare(over: Partial<AdapterContext> = {}) {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-qwen-adapter-'))
  const ctx: AdapterContext = {
    team: 't',
    name: 'q',
    agentId: 'q@t',
    cwd: dir,
    configDir: path.join(dir, 'home'),
    firstPrompt: 'hello there',
    model: 'm1',
    resume: false,
    hookArgv: (e) => ['swarm', 'hook', e],
    hookCommand: (e) => `swarm hook ${e}`,
    mcpArgv: ['swarm', 'mcp', '--team', 't'],
    env: { SWARM_HOME: path.join(dir, 'root') },
    ...over,
  }
  const plan = await qwenAdapter.prepare(ctx)
  const settings = JSON.parse(await fs.readFile(path.join(ctx.configDir, 'settings.json'), 'utf8'))
  return { plan, settings, ctx }
}

const commands = (entries: Array<{ matcher?: string; hooks: Array<{ command: string }> }>) =>
  entries.map((e) => ({ matcher: e.matcher, commands: e.hooks.map((h) => h.command) }))

describe('Qwen Code adapter', () => {
  it('default mode: its own `default` approval mode, every prompt through PermissionRequest, its home in QWEN_HOME, read-only settings', async () => {
    const { plan, settings, ctx } = await prepare({ mode: 'acceptEdits' })
    expect(plan.argv).toEqual(['qwen', '--approval-mode', 'default', '--model', 'm1', '--prompt-interactive', 'hello there'])
    expect(plan.env).toEqual({ QWEN_HOME: ctx.configDir, QWEN_CODE_NO_RELAUNCH: 'true', QWEN_SANDBOX: 'false' })
    expect(plan.readOnly).toEqual([path.join(ctx.configDir, 'settings.json')])
    expect(settings.security).toEqual({ auth: { selectedType: 'openai' }, folderTrust: { enabled: false } })
    expect(settings.ui.enableFollowupSuggestions).toBe(false)
    expect(settings.agents.crossSessionMessaging).toBe(false)
    expect(commands(settings.hooks.PermissionRequest)).toEqual([{ matcher: undefined, commands: ['swarm hook permission-request'] }])
    expect(commands(settings.hooks.PreToolUse)).toEqual([{ matcher: undefined, commands: ['swarm hook pre-tool'] }])
    expect(commands(settings.hooks.UserPromptSubmit)).toEqual([{ matcher: undefined, commands: ['swarm hook prompt-submit'] }])
    expect(commands(settings.hooks.Stop)).toEqual([{ matcher: undefined, commands: ['swarm hook stop'] }])
    // Qwen Code's hook timeouts are milliseconds: a lead's answer may take long.
    expect(settings.hooks.PermissionRequest[0].hooks[0].timeout).toBe(86_400_000)
    expect(settings.mcpServers.swarm).toEqual({
      command: 'swarm',
      args: ['mcp', '--team', 't'],
      env: { SWARM_HOME: ctx.env.SWARM_HOME },
      trust: true,
    })
  })

  it('bypassPermissions: yolo, with a PreToolUse gate on its file tools only; resume continues its last session', async () => {
    const { plan, settings } = await prepare({ mode: 'bypassPermissions', resume: true })
    expect(plan.argv).toEqual(['qwen', '--approval-mode', 'yolo', '--model', 'm1', '--continue'])
    expect(commands(settings.hooks.PreToolUse)).toEqual([
      { matcher: undefined, commands: ['swarm hook pre-tool'] },
      { matcher: '^(write_file|edit|notebook_edit)$', commands: ['swarm hook permission-request'] },
    ])
  })

  it('a UserPromptSubmit with an empty prompt (the turn going on after a tool result) is no submission', () => {
    expect(qwenAdapter.readHook('prompt-submit', { prompt: '', session_id: 's' })).toEqual({ sessionId: 's' })
    expect(qwenAdapter.readHook('prompt-submit', { prompt: 'hi', submitted_prompt: 'hi' })).toEqual({ prompt: 'hi' })
    expect(qwenAdapter.readHook('stop', { last_assistant_message: 'done' })).toEqual({ lastAssistantText: 'done' })
  })

  it('answers a permission in the form both PermissionRequest and PreToolUse read; a failed state hook denies as PreToolUse', () => {
    const allow = JSON.parse(qwenAdapter.answerPermission('permission-request', { behavior: 'allow' }, {}).stdout!)
    expect(allow.hookSpecificOutput).toMatchObject({ decision: { behavior: 'allow' }, permissionDecision: 'allow' })
    const deny = JSON.parse(qwenAdapter.answerPermission('permission-request', { behavior: 'deny', message: 'not this' }, {}).stdout!)
    expect(deny.hookSpecificOutput).toEqual({
      decision: { behavior: 'deny', message: 'not this' },
      permissionDecision: 'deny',
      permissionDecisionReason: 'not this',
    })
    expect(qwenAdapter.answerPermission('pre-tool', { behavior: 'allow' }, {})).toEqual({ exitCode: 0 })
    const preDeny = JSON.parse(qwenAdapter.answerPermission('pre-tool', { behavior: 'deny', message: 'denied by the team lead' }, {}).stdout!)
    expect(preDeny.hookSpecificOutput).toEqual({
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: 'denied by the team lead',
    })
  })
})
