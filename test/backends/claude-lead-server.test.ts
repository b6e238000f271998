import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { removeGoneClaudeLeadSocket } from '../../src/backends/claude-lead-server.js'
import { deleteTeamFully } from '../../src/leader/lifecycle.js'
import { claudeTmuxSocketPath } from '../../src/teams/claude-lead.js'
import { createTeam, updateTeam } from '../../src/teams/team-store.js'
import type { TeamFile } from '../../src/teams/types.js'
import { isolatedEnv } from '../support/home.js'

let dir: string
let env: NodeJS.ProcessEnv
const servers: string[] = []
beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-ccsock-')))
  env = isolatedEnv(dir, { CLAUDE_CONFIG_DIR: '' })
  fs.mkdirSync(env.TMUX_TMPDIR!, { recursive: true })
})
afterEach(() => {
  for (const s of servers.splice(0)) spawnSync('tmux', ['-S', s, 'kill-server'], { env, stdio: 'ignore' })
  fs.rmSync(dir, { recursive: true, force: true })
})

/** A pid that no process has any more (a child that has exited and been reaped). */
function gonePid(): number {
  return Number(spawnSync('/bin/sh', ['-c', 'echo $$'], { encoding: 'utf8' }).stdout.trim())
}

/** This process's start time as Claude Code records it (`procStart`, field 22 of /proc/<pid>/stat). */
function ownProcStart(): string {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!
}

async function claudeLedTeam(pid: number, procStart = '1', name = 'session-abcd1234'): Promise<TeamFile> {
  await createTeam({ name, cwd: dir }, env)
  return updateTeam(
    name,
    (t) => {
      t.leadProcess = { pid, pidSpace: 'vm#pid:[1]', claimedAt: Date.now(), procStart }
      t.members[0]!.tmuxPaneId = 'leader'
    },
    env,
  )
}

/** A real tmux server on the lead's `claude-swarm-<pid>` socket (the test's TMUX_TMPDIR); `dead` SIGKILLs it, leaving its socket file. */
function claudeServer(pid: number, dead: boolean): string {
  const socket = claudeTmuxSocketPath({ pid }, env)
  fs.mkdirSync(path.dirname(socket), { recursive: true, mode: 0o700 })
  execFileSync('tmux', ['-f', '/dev/null', '-S', socket, 'new-session', '-d', 'sleep 600'], { env })
  servers.push(socket)
  if (dead) {
    const serverPid = Number(execFileSync('tmux', ['-S', socket, 'display-message', '-p', '#{pid}'], { env, encoding: 'utf8' }).trim())
    process.kill(serverPid, 'SIGKILL')
    for (let i = 0; i < 100 && fs.existsSync(`/proc/${serverPid}`); i++) spawnSync('sleep', ['0.02'])
  }
  return socket
}

describe("a gone Claude Code lead's claude-swarm-<pid> tmux socket", () => {
  it('team delete removes it when no server answers on it, and says so', async () => {
    const pid = gonePid()
    await claudeLedTeam(pid)
    const socket = claudeServer(pid, true)
    expect(fs.lstatSync(socket).isSocket()).toBe(true) // tmux leaves it behind when its server is killed
    const report = await deleteTeamFully('session-abcd1234', { env, force: true })
    expect(report.tmuxSocketRemoved).toBe(socket)
    expect(fs.existsSync(socket)).toBe(false)
  })

  it('a server still running there is left alone, socket and all', async () => {
    const pid = gonePid()
    const config = await claudeLedTeam(pid)
    const socket = claudeServer(pid, false)
    expect(await removeGoneClaudeLeadSocket(config, env)).toBeUndefined()
    expect(spawnSync('tmux', ['-S', socket, 'has-session'], { env }).status).toBe(0)
  })

  it('never while its lead runs; nothing for a team swarm leads or a socket that is not there', async () => {
    const config = await claudeLedTeam(process.pid, ownProcStart())
    const socket = claudeServer(process.pid, true)
    expect(await removeGoneClaudeLeadSocket(config, env)).toBeUndefined()
    expect(fs.existsSync(socket)).toBe(true)
    expect(await removeGoneClaudeLeadSocket(await createTeam({ name: 'ours', cwd: dir }, env), env)).toBeUndefined()
    expect(await removeGoneClaudeLeadSocket(await claudeLedTeam(gonePid(), '1', 'session-0000ffff'), env)).toBeUndefined()
  })
})
