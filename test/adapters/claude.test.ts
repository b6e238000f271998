import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { checkClaudeAddressable, claudeTeammateFlags, findClaudeBinary } from '../../src/adapters/claude.js'
import { findClaudeSession } from '../../src/adapters/claude-session.js'
import { agentIdentity } from '../../src/cli/agent.js'
import { ExitCode } from '../../src/errors.js'
import { hostedInProcess } from '../../src/teams/hosting.js'
import { busyMembers, deleteTeamFully } from '../../src/leader/lifecycle.js'
import { claudeLeadAlive, claudeLeadOf } from '../../src/teams/claude-lead.js'
import { createTeam, readTeam, updateTeam } from '../../src/teams/team-store.js'
import type { TeamFile } from '../../src/teams/types.js'
import { isolatedEnv } from '../support/home.js'

let dir: string
let env: NodeJS.ProcessEnv
beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-claude-')))
  env = isolatedEnv(dir, { CLAUDE_CONFIG_DIR: '' })
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

/** This process's start time as Claude Code records it (`procStart`, field 22 of /proc/<pid>/stat). */
function ownProcStart(): string {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!
}

describe('the Claude Code teammate launch', () => {
  it('builds the argv a Claude Code lead builds, always with a permission mode', () => {
    const flags = claudeTeammateFlags({ team: 't', name: 'w', color: 'blue', parentSessionId: 'p', verifyKey: '1.k', model: 'm', mode: 'bubble' })
    expect(flags).toEqual([
      '--agent-id',
      'w@t',
      '--agent-name',
      'w',
      '--team-name',
      't',
      '--agent-color',
      'blue',
      '--parent-session-id',
      'p',
      '--lead-verify-key',
      '1.k',
      '--permission-mode',
      'default',
      '--model',
      'm',
    ])
    expect(claudeTeammateFlags({ team: 't', name: 'w', color: 'c', parentSessionId: 'p', verifyKey: 'k', resumeSessionId: 's' }).slice(-2)).toEqual([
      '--resume',
      's',
    ])
  })

  it('refuses names Claude Code would map to other file names, saying which', () => {
    expect(() => checkClaudeAddressable('agent', 'w.1')).toThrow(/"w-1"/)
    expect(() => checkClaudeAddressable('team', 'my.team')).toThrow(/Claude Code cannot address/)
    expect(() => checkClaudeAddressable('agent', 'Worker_2-b')).not.toThrow()
  })

  it('no binary: exit 7 with the install command', () => {
    const err = (() => {
      try {
        findClaudeBinary({ PATH: dir })
      } catch (e) {
        return e as { exitCode: number; hint?: string; message: string }
      }
    })()
    expect(err?.exitCode).toBe(ExitCode.backendUnavailable)
    expect(`${err?.message} ${err?.hint}`).toMatch(/npm install -g @anthropic-ai\/claude-code/)
    const fake = path.join(dir, 'claude')
    fs.writeFileSync(fake, '#!/bin/sh\n', { mode: 0o755 })
    expect(findClaudeBinary({ PATH: `/nonexistent:${dir}` })).toBe(fake)
    expect(() => findClaudeBinary({ SWARM_CLAUDE_BIN: path.join(dir, 'nope') })).toThrow(/not an executable/)
  })

  it("finds a teammate's own session among Claude Code's transcripts (the newest with its team and name)", async () => {
    const cwd = '/tmp/some.project/x'
    const proj = path.join(dir, 'cfg', 'projects', '-tmp-some-project-x')
    fs.mkdirSync(proj, { recursive: true })
    const a = 'aaaaaaaa-0000-4000-8000-000000000001'
    const b = 'bbbbbbbb-0000-4000-8000-000000000002'
    fs.writeFileSync(path.join(proj, `${a}.jsonl`), `${JSON.stringify({ teamName: 't', agentName: 'w', sessionId: a })}\n`)
    fs.writeFileSync(path.join(proj, `${b}.jsonl`), `${JSON.stringify({ teamName: 't', agentName: 'other', sessionId: b })}\n`)
    expect((await findClaudeSession(path.join(dir, 'cfg'), cwd, 't', 'w'))?.sessionId).toBe(a)
    expect(await findClaudeSession(path.join(dir, 'cfg'), cwd, 't', 'nobody')).toBeUndefined()
  })
})

describe("swarm agent takes Claude Code's teammate argv", () => {
  it('identity and mode from --agent-id / --agent-name / --team-name / --permission-mode', () => {
    const base = { allow: [], deny: [], ask: [] }
    expect(agentIdentity({ ...base, agentId: 'w1@session-ab12', agentName: 'w1', teamName: 'session-ab12', permissionMode: 'auto' })).toEqual({
      team: 'session-ab12',
      name: 'w1',
      mode: 'default',
    })
    expect(agentIdentity({ ...base, agentId: 'w1@t' })).toMatchObject({ team: 't', name: 'w1' })
    expect(agentIdentity({ ...base, team: 't', name: 'n', planModeRequired: true })).toMatchObject({ mode: 'plan' })
    expect(() => agentIdentity({ ...base })).toThrow(/needs --team and --name/)
    expect(() => agentIdentity({ ...base, agentId: '../x@t' })).toThrow()
  })
})

describe('teams led by Claude Code', () => {
  async function claudeLedTeam(pid: number, procStart: string): Promise<TeamFile> {
    await createTeam({ name: 'session-1234abcd', cwd: dir, members: [{ name: 'w1' }] }, env)
    return updateTeam(
      'session-1234abcd',
      (t) => {
        t.leadProcess = { pid, pidSpace: 'vm#pid:[1]', claimedAt: Date.now(), procStart }
        t.members[0]!.tmuxPaneId = 'leader'
        t.members[1]!.isActive = true
        t.members[1]!.backendType = 'tmux'
        t.members[1]!.tmuxPaneId = '%0'
      },
      env,
    )
  }

  it('are recognised; the lead lives only while the same process runs', async () => {
    const config = await claudeLedTeam(process.pid, ownProcStart())
    const lead = claudeLeadOf(config)
    expect(lead).toMatchObject({ pid: process.pid })
    expect(claudeLeadAlive(lead!)).toBe(true)
    expect(claudeLeadAlive({ ...lead!, procStart: '1' })).toBe(false) // a reused pid
    expect(claudeLeadOf(await createTeam({ name: 'ours', cwd: dir }, env))).toBeUndefined()
  })

  it('team delete refuses while the Claude Code lead lives, even with --force, and removes nothing', async () => {
    await claudeLedTeam(process.pid, ownProcStart())
    await expect(deleteTeamFully('session-1234abcd', { env, force: true })).rejects.toMatchObject({ exitCode: ExitCode.conflict })
    expect((await readTeam('session-1234abcd', env)).members).toHaveLength(2)
  })

  it('a working Claude Code teammate (isActive, no state file) is named as mid-turn', async () => {
    const config = await claudeLedTeam(process.pid, ownProcStart())
    expect(await busyMembers(config, env)).toEqual([{ name: 'w1', status: 'working' }])
  })
})

describe('the twin agent (issue 13, finding 5)', () => {
  it('the leader hosts only members that are in-process; not a pane member, not another CLI, not an unstarted roster', async () => {
    const config = await createTeam({ name: 'twin', cwd: dir, members: [{ name: 'a' }, { name: 'b' }] }, env)
    const [, a, b] = config.members
    expect(hostedInProcess(config, { ...a!, backendType: 'tmux', tmuxPaneId: '%3' })).toBe(false)
    expect(hostedInProcess(config, { ...a!, agent: 'claude' })).toBe(false)
    expect(hostedInProcess(config, b!)).toBe(false) // written with --no-start: nobody started it in-process
    expect(hostedInProcess({ ...config, swarmBackend: 'in-process' }, b!)).toBe(true)
    expect(hostedInProcess(config, { ...b!, backendType: 'in-process', tmuxPaneId: 'in-process' })).toBe(true)
  })
})

describe('config.json as Claude Code 2.1.332 rewrites it (in place, not truncated)', () => {
  it('a leftover closing brace after a complete config is read past and cleaned by the next update; other garbage stays corrupt', async () => {
    await createTeam({ name: 'torn', cwd: dir, members: [{ name: 'cc' }] }, env)
    const file = path.join(env.SWARM_HOME!, 'teams', 'torn', 'config.json')
    const clean = fs.readFileSync(file, 'utf8').trimEnd()
    fs.writeFileSync(file, `${clean}}\n`) // measured: `"isActive": true` written over `false` leaves `}}`
    expect((await readTeam('torn', env)).members.map((m) => m.name)).toEqual(['team-lead', 'cc'])
    await updateTeam(
      'torn',
      (t) => {
        t.description = 'x'
      },
      env,
    )
    expect(() => JSON.parse(fs.readFileSync(file, 'utf8'))).not.toThrow()
    fs.writeFileSync(file, `${clean}{"x":1}`)
    await expect(readTeam('torn', env)).rejects.toMatchObject({ exitCode: ExitCode.corrupt })
  })
})
