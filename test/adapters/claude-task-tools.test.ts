import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { claudeAdapter } from '../../src/adapters/claude.js'
import { claudeTaskToolsEnabled, claudeTeammateHasTaskTools, resolveClaudeModel } from '../../src/adapters/claude-task-tools.js'
import { planAgentLaunch } from '../../src/adapters/launch-plan.js'
import { CorruptFileError } from '../../src/errors.js'
import { createTeam } from '../../src/teams/team-store.js'
import { isolatedEnv } from '../support/home.js'

let dir: string
let env: NodeJS.ProcessEnv
let root: string
beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-cctasks-')))
  env = isolatedEnv(dir, { CLAUDE_CONFIG_DIR: '', SWARM_CLAUDE_BIN: '/bin/true' })
  delete env.CLAUDE_CODE_ENABLE_TASKS
  delete env.CLAUDE_CODE_ENABLE_TODO_TOOLS
  delete env.ANTHROPIC_MODEL
  root = env.SWARM_HOME!
  fs.mkdirSync(root, { recursive: true })
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("Claude Code 2.1.332's task-tool gate", () => {
  it('off with CLAUDE_CODE_ENABLE_TASKS false; on for the older models; on the newer only with CLAUDE_CODE_ENABLE_TODO_TOOLS', () => {
    expect(claudeTaskToolsEnabled({})).toBe(false)
    expect(claudeTaskToolsEnabled({ CLAUDE_CODE_ENABLE_TODO_TOOLS: '1' })).toBe(true)
    expect(claudeTaskToolsEnabled({ CLAUDE_CODE_ENABLE_TODO_TOOLS: 'Yes ' })).toBe(true)
    expect(claudeTaskToolsEnabled({ CLAUDE_CODE_ENABLE_TODO_TOOLS: 'maybe' })).toBe(false)
    expect(claudeTaskToolsEnabled({ CLAUDE_CODE_ENABLE_TODO_TOOLS: '1', CLAUDE_CODE_ENABLE_TASKS: '0' })).toBe(false)
    expect(claudeTaskToolsEnabled({ CLAUDE_CODE_ENABLE_TODO_TOOLS: '1', CLAUDE_CODE_ENABLE_TASKS: 'weird' })).toBe(true)
    expect(claudeTaskToolsEnabled({}, 'claude-opus-4-6')).toBe(true)
    expect(claudeTaskToolsEnabled({}, 'claude-sonnet-4-5-20250929')).toBe(true)
    expect(claudeTaskToolsEnabled({ ANTHROPIC_MODEL: 'claude-haiku-4-5' })).toBe(true)
    expect(claudeTaskToolsEnabled({}, 'claude-opus-5-5')).toBe(false)
    expect(claudeTaskToolsEnabled({}, 'claude-opus-4-60')).toBe(false)
    expect(claudeTaskToolsEnabled({ CLAUDE_CODE_ENABLE_TASKS: 'off' }, 'claude-opus-4-6')).toBe(false)
  })

  it('a model alias counts as the model it stands for: on its provider, or what ANTHROPIC_DEFAULT_*_MODEL names', () => {
    // The Anthropic API's targets (the binary's catalog): newer than the task tools.
    for (const alias of ['opus', 'sonnet', 'haiku', 'fable', 'best', 'opusplan', 'default', 'opus[1m]', 'Sonnet[1M]', undefined])
      expect(claudeTaskToolsEnabled({}, alias), String(alias)).toBe(false)
    expect(resolveClaudeModel('opus[1m]', {})).toBe('claude-opus-5-5')
    expect(resolveClaudeModel('default', {})).toBe('claude-opus-5-5')
    // Bedrock's sonnet and haiku are older ones; Vertex's haiku too, its sonnet not.
    const bedrock = { CLAUDE_CODE_USE_BEDROCK: '1' }
    expect(claudeTaskToolsEnabled(bedrock, 'sonnet')).toBe(true)
    expect(claudeTaskToolsEnabled(bedrock, 'haiku')).toBe(true)
    expect(claudeTaskToolsEnabled(bedrock, 'opus')).toBe(false)
    expect(claudeTaskToolsEnabled({ CLAUDE_CODE_USE_VERTEX: 'true' }, 'haiku')).toBe(true)
    expect(claudeTaskToolsEnabled({ CLAUDE_CODE_USE_VERTEX: 'true' }, 'sonnet')).toBe(false)
    // The variables that re-point an alias, and the default.
    expect(claudeTaskToolsEnabled({ ANTHROPIC_DEFAULT_OPUS_MODEL: 'claude-opus-4-6' }, 'opus')).toBe(true)
    expect(claudeTaskToolsEnabled({ ANTHROPIC_DEFAULT_OPUS_MODEL: 'claude-opus-4-6' }, 'best')).toBe(true)
    expect(claudeTaskToolsEnabled({ ANTHROPIC_DEFAULT_MODEL: 'claude-sonnet-4-6' })).toBe(true)
    expect(claudeTaskToolsEnabled({ ANTHROPIC_DEFAULT_MODEL: 'haiku', CLAUDE_CODE_USE_BEDROCK: '1' }, 'default')).toBe(true)
    expect(claudeTaskToolsEnabled({ ANTHROPIC_MODEL: 'sonnet', CLAUDE_CODE_USE_BEDROCK: 'yes' })).toBe(true)
    // A full id is itself, dated or in a Bedrock inference profile; the default elsewhere is not known: the variable decides.
    expect(claudeTaskToolsEnabled({}, 'claude-opus-4-7@20260101')).toBe(true)
    expect(claudeTaskToolsEnabled({}, 'arn:aws:bedrock:us-east-1:1:application-inference-profile/x')).toBe(true)
    expect(claudeTaskToolsEnabled({ CLAUDE_CODE_USE_BEDROCK: '1' })).toBe(false)
    expect(claudeTaskToolsEnabled({ CLAUDE_CODE_USE_BEDROCK: '1', CLAUDE_CODE_ENABLE_TODO_TOOLS: '1' })).toBe(true)
  })

  it("--model beats ANTHROPIC_MODEL, which beats the settings' model", async () => {
    fs.writeFileSync(path.join(root, 'settings.json'), JSON.stringify({ model: 'claude-opus-4-6' }))
    expect(await claudeTeammateHasTaskTools({ launchEnv: {}, configDir: root })).toBe(true)
    expect(await claudeTeammateHasTaskTools({ launchEnv: { ANTHROPIC_MODEL: 'opus' }, configDir: root })).toBe(false)
    expect(await claudeTeammateHasTaskTools({ launchEnv: { ANTHROPIC_MODEL: 'opus' }, configDir: root, model: 'claude-haiku-4-5' })).toBe(true)
  })

  it('its user settings env and model are put over the launch environment; a broken settings file is named', async () => {
    const settings = path.join(root, 'settings.json')
    const on = { CLAUDE_CODE_ENABLE_TODO_TOOLS: '1' }
    expect(await claudeTeammateHasTaskTools({ launchEnv: on, configDir: root })).toBe(true)
    fs.writeFileSync(settings, JSON.stringify({ env: { CLAUDE_CODE_ENABLE_TODO_TOOLS: 0 } }))
    expect(await claudeTeammateHasTaskTools({ launchEnv: on, configDir: root })).toBe(false)
    fs.writeFileSync(settings, JSON.stringify({ env: { CLAUDE_CODE_ENABLE_TODO_TOOLS: 0 }, model: 'claude-opus-4-6' }))
    expect(await claudeTeammateHasTaskTools({ launchEnv: on, configDir: root })).toBe(true)
    expect(await claudeTeammateHasTaskTools({ launchEnv: on, configDir: root, model: 'claude-opus-5-5' })).toBe(false)
    fs.writeFileSync(settings, '{ not json')
    await expect(claudeTeammateHasTaskTools({ launchEnv: on, configDir: root })).rejects.toBeInstanceOf(CorruptFileError)
    expect(fs.readFileSync(settings, 'utf8')).toBe('{ not json')
  })
})

describe("a Claude Code teammate's first inbox message", () => {
  const launch = async (extra: NodeJS.ProcessEnv = {}, o: { prompt?: string; resume?: boolean } = {}) => {
    await createTeam({ name: 'tt', cwd: dir, members: [{ name: 'cc', agent: 'claude' }] }, env).catch(() => undefined)
    return planAgentLaunch(claudeAdapter, { team: 'tt', name: 'cc', cwd: dir, env: { ...env, ...extra }, ...o })
  }

  it('with its task tools (swarm sets CLAUDE_CODE_ENABLE_TODO_TOOLS=1): the spawn prompt as it is', async () => {
    const l = await launch({}, { prompt: 'do task 1' })
    expect(l.env.CLAUDE_CODE_ENABLE_TODO_TOOLS).toBe('1')
    expect(l.inboxPrompt).toBe('do task 1')
  })

  it('without them (CLAUDE_CODE_ENABLE_TASKS=0 passed on): the swarm tasks commands first, then the prompt; none on resume', async () => {
    const l = await launch({ CLAUDE_CODE_ENABLE_TASKS: '0' }, { prompt: 'do task 1' })
    expect(l.env.CLAUDE_CODE_ENABLE_TASKS).toBe('0')
    expect(l.inboxPrompt).toMatch(/^Your TaskList, TaskGet, TaskUpdate and TaskCreate tools are off/)
    expect(l.inboxPrompt).toContain('swarm tasks tt complete <id> --from cc')
    expect(l.inboxPrompt!.endsWith('\n\ndo task 1')).toBe(true)
    expect((await launch({ CLAUDE_CODE_ENABLE_TASKS: '0' })).inboxPrompt).toContain('swarm tasks tt list')
    expect((await launch({ CLAUDE_CODE_ENABLE_TASKS: '0' }, { resume: true })).inboxPrompt).toBeUndefined()
  })
})
