import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { readMemberState } from '../../src/store/member-state.js'
import { readArchive } from '../../src/mailbox/archive.js'
import { readInbox } from '../../src/mailbox/inbox.js'
import type { LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { inboxPath, teamDir } from '../../src/home/paths.js'
import { isAlive } from '../../src/process/liveness.js'
import { useModelSandbox, type Sandbox, ALICE_SCENARIO as SCENARIO } from './helpers.js'
import { waitFor } from '../support/wait.js'
import { hasTmux, tmuxSessions } from '../support/tmux.js'

async function leadTexts(sb: Sandbox): Promise<string[]> {
  const file = inboxPath('crew', 'team-lead', sb.env)
  return [...(await readArchive(file).catch(() => [])), ...(await readInbox(file))].map((m) => m.text)
}

describe.skipIf(!hasTmux)('team lifecycle end to end on an isolated tmux server', () => {
  let sb: Sandbox
  let server: LoopbackServer
  useModelSandbox(SCENARIO, (t) => ({ sb, server } = t))

  it('create → status → message → permission → detach → server killed → dead → message while dead → resume → processed → delete leaves nothing', async () => {
    const created = await sb.swarm([
      'team',
      'create',
      'crew',
      '--agents',
      'alice',
      '--backend',
      'tmux',
      '--mode',
      'default',
      '--cwd',
      sb.project,
      '--no-attach',
    ])
    expect(created.code, created.stderr).toBe(0)
    expect(created.stdout).toContain('tmux -L swarm attach -t swarm-crew')
    expect(tmuxSessions(sb.env)).toContain('swarm-crew')

    const status = await waitFor('alice alive in status', async () => {
      const r = await sb.swarm(['status', 'crew', '--json'])
      const s = JSON.parse(r.stdout) as { members: Array<{ name: string; state: string }> }
      return s.members.find((m) => m.name === 'alice')?.state === 'alive' && s
    })
    expect(status.members.map((m) => m.name)).toEqual(['team-lead', 'alice'])
    // Out of sight and back: the pane keeps running, the config remembers it.
    expect((await sb.swarm(['hide', 'crew', 'alice'])).code).toBe(0)
    expect(JSON.parse(fs.readFileSync(path.join(teamDir('crew', sb.env), 'config.json'), 'utf8')).hiddenPaneIds).toHaveLength(1)
    expect((await sb.swarm(['unhide', 'crew', 'alice'])).code).toBe(0)
    expect(JSON.parse(fs.readFileSync(path.join(teamDir('crew', sb.env), 'config.json'), 'utf8')).hiddenPaneIds).toEqual([])

    expect((await sb.swarm(['send', 'crew', 'alice', 'please run the tests'])).code).toBe(0)
    const request = await waitFor('the permission request', async () => {
      const r = await sb.swarm(['perms', 'crew', '--json'])
      const list = JSON.parse(r.stdout) as { requests: Array<{ id: string; agent: string; toolName: string }> }
      return list.requests[0]
    })
    expect(request).toMatchObject({ agent: 'alice', toolName: 'Bash' })
    expect(fs.existsSync(path.join(sb.project, 'count.txt'))).toBe(false)
    expect((await sb.swarm(['perms', 'approve', 'crew', request.id])).code).toBe(0)
    await waitFor('alice reports done 1', async () => (await leadTexts(sb)).some((t) => t.includes('done 1')))
    expect(fs.readFileSync(path.join(sb.project, 'count.txt'), 'utf8')).toBe('ran\n')

    // A client attaches and is hung up on: the team keeps running.
    sb.start('script', ['-qfc', 'tmux -L swarm attach -t swarm-crew', '/dev/null'])
    const clientPid = await waitFor('a client attached', () =>
      Number(execFileSync('tmux', ['-L', 'swarm', 'list-clients', '-F', '#{client_pid}'], { env: sb.env, encoding: 'utf8' }).trim()),
    )
    process.kill(clientPid, 'SIGHUP') // what closing the terminal does to the client
    await waitFor('the client gone', () => execFileSync('tmux', ['-L', 'swarm', 'list-clients'], { env: sb.env, encoding: 'utf8' }).trim() === '')
    const alivePid = (await readMemberState('crew', 'alice', sb.env))!.pid!
    expect(isAlive(alivePid), 'alice survives the client hangup').toBe(true)

    // The tmux server dies with everything in it.
    execFileSync('tmux', ['-L', 'swarm', 'kill-server'], { env: sb.env })
    await waitFor('alice process gone', () => !isAlive(alivePid), 15_000)
    const dead = JSON.parse((await sb.swarm(['status', 'crew', '--json'])).stdout) as { members: Array<{ name: string; state: string }> }
    expect(dead.members.find((m) => m.name === 'alice')?.state).toBe('dead')

    expect((await sb.swarm(['send', 'crew', 'alice', 'here is a second message'])).code).toBe(0)
    const resumed = await sb.swarm(['team', 'resume', 'crew', '--no-attach'])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stdout).toContain('respawned: alice')
    await waitFor('the message sent while dead is processed', async () => (await leadTexts(sb)).some((t) => t.includes('done 2')))
    // It resumed its conversation: the request after resume carries the first exchange.
    const last = server.requests.filter((r) => r.agent === 'alice').at(-1)!
    expect(JSON.stringify(last.body)).toContain('done 1')

    // The new leader writes its state.json when it starts; until then the file names the dead one.
    const pids = await waitFor('alice and a new leader running', async () => {
      const p = [(await readMemberState('crew', 'alice', sb.env))?.pid, (await readMemberState('crew', 'team-lead', sb.env))?.pid]
      return p.every((x) => x !== undefined && isAlive(x)) && (p as number[])
    })
    await waitFor('alice idle', async () => (await readMemberState('crew', 'alice', sb.env))?.status === 'idle')
    const deleted = await sb.swarm(['team', 'delete', 'crew', '--timeout', '10'])
    expect(deleted.code, deleted.stderr).toBe(0)
    await waitFor('every process gone', () => pids.every((p) => !isAlive(p)), 15_000)
    expect(tmuxSessions(sb.env)).not.toContain('swarm-crew')
    expect(fs.existsSync(teamDir('crew', sb.env))).toBe(false)
  }, 90_000)
})
