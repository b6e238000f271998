import fs from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLoopbackServer, type LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { createTeam, readTeam } from '../../src/teams/team-store.js'
import { ensureTeamKeys } from '../../src/trust/keys.js'
import { teamDir } from '../../src/home/paths.js'
import { findMarked } from '../../src/process/marker.js'
import { readMemberState } from '../../src/store/member-state.js'
import { sandbox, type Sandbox } from '../e2e/helpers.js'
import { hasSshd, sshCallLog, startTestHost, type TestHost } from '../support/sshd.js'
import { requireBuilt } from '../support/repo.js'
import { waitFor } from '../support/wait.js'

/**
 * `swarm spawn --host --worktree`: the member's branch in a worktree on the test host (its repository
 * pushed there through swarm's connection), the member started in it, its commits fetched back into
 * the lead's repository (`swarm worktrees fetch`, and by teardown before anything there goes), a
 * worktree with uncommitted changes there kept until --discard, and nothing left running.
 */

const TEAM = 'wt-remote'
const IDENTITY = {
  GIT_AUTHOR_NAME: 'Swarm Test',
  GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'Swarm Test',
  GIT_COMMITTER_EMAIL: 'test@example.invalid',
}

let host: TestHost
let sb: Sandbox
let model: LoopbackServer
let env: NodeJS.ProcessEnv
let sshLog: ReturnType<typeof sshCallLog>

/** The ssh command lines git ran (through the shim) for `pack` (git-receive-pack: a push; git-upload-pack: a fetch). */
const gitSshCalls = (pack: string) => sshLog.lines(pack)
const remoteEnv = () => ({ ...env, SWARM_HOME: host.remoteSwarmHome })
const swarm = (args: string[]) => sb.swarm(args, { env, timeout: 120_000 })
const gitIn = async (cwd: string, args: string[]) => (await execa('git', args, { cwd, env, stdin: 'ignore' })).stdout.trim()
/** A commit made in the worktree on the host, as the member would make it there. */
const commitThere = async (dir: string, file: string, subject: string) => {
  fs.writeFileSync(path.join(dir, file), `${subject}\n`)
  await gitIn(dir, ['add', file])
  await gitIn(dir, ['commit', '-q', '-m', subject])
  return gitIn(dir, ['rev-parse', 'HEAD'])
}
const spawnWithWorktree = async (name: string) => {
  const r = await swarm(['spawn', TEAM, name, '--host', host.host, '--worktree', '--json'])
  expect(r.code, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as { cwd: string; worktreePath: string; branch: string; host: string }
}

beforeAll(async () => {
  requireBuilt('dist/worktrees/host-worktree.js')
  sb = sandbox()
  host = await startTestHost(sb.root)
  model = await startLoopbackServer({ scenario: { fallback: { text: 'Noted.' } }, host: host.localAddress })
  // Every ssh goes through this shim, which logs its command line: how the test sees git's ssh go through swarm's master.
  sshLog = sshCallLog(sb.root)
  env = {
    ...sb.env,
    ...IDENTITY,
    PATH: `${sshLog.dir}:${sb.env.PATH}`,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: path.join(sb.root, 'gitconfig'),
    SWARM_SSH_CONFIG: host.sshConfig,
    ANTHROPIC_API_KEY: 'test',
    ANTHROPIC_BASE_URL: model.url,
  }
  fs.writeFileSync(env.GIT_CONFIG_GLOBAL!, '')
  await gitIn(sb.project, ['init', '-q', '-b', 'main'])
  fs.mkdirSync(path.join(sb.project, 'src'))
  fs.writeFileSync(path.join(sb.project, 'src', 'app.txt'), 'the lead wrote this\n')
  await gitIn(sb.project, ['add', '.'])
  await gitIn(sb.project, ['commit', '-q', '-m', 'first'])
  await createTeam({ name: TEAM, cwd: sb.project }, env)
  await ensureTeamKeys(TEAM, env)
}, 60_000)

afterAll(async () => {
  await swarm(['team', 'delete', TEAM, '--force', '--discard']).catch(() => undefined)
  await host?.stop()
  await model?.close()
  await sb?.cleanup()
})

describe.skipIf(!hasSshd)('a worktree on another host', () => {
  let alice: Awaited<ReturnType<typeof spawnWithWorktree>>

  it("spawns the member in its branch's worktree on the host, made from the lead's HEAD through swarm's connection", async () => {
    alice = await spawnWithWorktree('alice')
    expect(alice).toMatchObject({ host: host.host, branch: `swarm/${TEAM}/alice` })
    expect(alice.worktreePath.startsWith(fs.realpathSync(host.remoteSwarmHome))).toBe(true)
    expect(alice.cwd).toBe(alice.worktreePath)
    expect(await gitIn(alice.worktreePath, ['rev-parse', '--abbrev-ref', 'HEAD'])).toBe(`swarm/${TEAM}/alice`)
    expect(await gitIn(alice.worktreePath, ['rev-parse', 'HEAD'])).toBe(await gitIn(sb.project, ['rev-parse', 'HEAD']))
    expect(fs.readFileSync(path.join(alice.worktreePath, 'src', 'app.txt'), 'utf8')).toBe('the lead wrote this\n')
    // The push went through swarm's own connection: its control socket, never a master of its own.
    const pushes = gitSshCalls('git-receive-pack')
    expect(pushes).toHaveLength(1)
    expect(pushes[0]).toContain(`ControlPath=${path.join(env.SWARM_HOME!, 'ssh')}`)
    expect(pushes[0]).toContain('ControlMaster=no')
    // The member runs there: its process's cwd (the host is this machine, so /proc shows it).
    const pid = await waitFor('alice started on the host', async () => (await readMemberState(TEAM, 'alice', remoteEnv()))?.pid, 60_000)
    expect(fs.realpathSync(`/proc/${pid}/cwd`)).toBe(alice.worktreePath)
    const member = (await readTeam(TEAM, env)).members.find((m) => m.name === 'alice')
    expect(member).toMatchObject({ host: host.host, cwd: alice.worktreePath, worktreePath: alice.worktreePath })
    const list = await swarm(['worktrees', 'list', TEAM, '--json'])
    expect(JSON.parse(list.stdout).worktrees).toEqual([
      expect.objectContaining({ name: 'alice', host: host.host, path: alice.worktreePath, branch: `swarm/${TEAM}/alice`, member: 'alice' }),
    ])
  })

  it("swarm worktrees fetch brings a commit made there into the lead's repository", async () => {
    const sha = await commitThere(alice.worktreePath, 'notes.txt', 'written on the host')
    const r = await swarm(['worktrees', 'fetch', TEAM, 'alice'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain(`fetched swarm/${TEAM}/alice from ${host.host}`)
    expect(gitSshCalls('git-upload-pack')).toEqual([expect.stringContaining(`ControlPath=${path.join(env.SWARM_HOME!, 'ssh')}`)])
    expect(await gitIn(sb.project, ['rev-parse', `swarm/${TEAM}/alice`])).toBe(sha)
    expect(await gitIn(sb.project, ['show', `swarm/${TEAM}/alice:notes.txt`])).toBe('written on the host')
  })

  it('kill --remove fetches an unfetched commit before the worktree there goes; the branch stays here', async () => {
    const sha = await commitThere(alice.worktreePath, 'more.txt', 'not fetched yet')
    const r = await swarm(['kill', TEAM, 'alice', '--now', '--remove'])
    expect(r.code, r.stderr).toBe(0)
    expect(await gitIn(sb.project, ['rev-parse', `swarm/${TEAM}/alice`])).toBe(sha)
    expect(fs.existsSync(alice.worktreePath)).toBe(false)
    expect(r.stdout).toContain(`kept its branch swarm/${TEAM}/alice in ${fs.realpathSync(sb.project)}: 2 unmerged commit(s)`)
    // Listed as the branch it now is here: nothing to fetch from the host any more.
    const list = JSON.parse((await swarm(['worktrees', 'list', TEAM, '--json'])).stdout)
    expect(list.worktrees).toEqual([expect.objectContaining({ name: 'alice', path: null, unmergedCount: 2 })])
  })

  it('uncommitted changes there keep the worktree (named with the fix) until --discard', async () => {
    const bob = await spawnWithWorktree('bob')
    fs.writeFileSync(path.join(bob.worktreePath, 'src', 'app.txt'), 'changed, not committed\n')
    const r = await swarm(['kill', TEAM, 'bob', '--now', '--remove'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain(`kept worktree ${bob.worktreePath} (branch swarm/${TEAM}/bob)`)
    expect(r.stdout).toContain(`swarm worktrees remove ${TEAM} ${TEAM}-bob --discard`)
    expect(fs.readFileSync(path.join(bob.worktreePath, 'src', 'app.txt'), 'utf8')).toBe('changed, not committed\n')
    const d = await swarm(['worktrees', 'remove', TEAM, 'bob', '--discard'])
    expect(d.code, d.stderr).toBe(0)
    expect(d.stderr).toContain(`discarding ${bob.worktreePath}`)
    expect(fs.existsSync(bob.worktreePath)).toBe(false)
  })

  it('a branch here that went another way: teardown refuses, naming the branch and the fetch; after the fix it goes', async () => {
    const dave = await spawnWithWorktree('dave')
    const theirs = await commitThere(dave.worktreePath, 'dave.txt', 'dave on the host')
    const branch = `swarm/${TEAM}/dave`
    // A commit of the lead's own on that branch name here: the fetch cannot fast-forward it.
    const tree = await gitIn(sb.project, ['rev-parse', 'HEAD^{tree}'])
    const ours = await gitIn(sb.project, ['commit-tree', tree, '-p', 'HEAD', '-m', 'the lead, on that branch'])
    await gitIn(sb.project, ['update-ref', `refs/heads/${branch}`, ours])
    const r = await swarm(['kill', TEAM, 'dave', '--now', '--remove'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain(`branch ${branch} on ${host.host} was not brought back`)
    expect(r.stdout).toContain(`run "swarm worktrees fetch ${TEAM} dave"`)
    expect(await gitIn(dave.worktreePath, ['rev-parse', 'HEAD'])).toBe(theirs)
    await gitIn(sb.project, ['branch', '-D', branch])
    const f = await swarm(['worktrees', 'fetch', TEAM, 'dave'])
    expect(f.code, f.stderr).toBe(0)
    expect(await gitIn(sb.project, ['rev-parse', branch])).toBe(theirs)
    const d = await swarm(['worktrees', 'remove', TEAM, 'dave'])
    expect(d.code, d.stderr).toBe(0)
    expect(fs.existsSync(dave.worktreePath)).toBe(false)
    await gitIn(sb.project, ['branch', '-D', branch])
  })

  it("team delete fetches a member's unfetched commit first, and leaves no process on either side, nor a connection", async () => {
    const carol = await spawnWithWorktree('carol')
    const sha = await commitThere(carol.worktreePath, 'carol.txt', 'carol, never fetched')
    const r = await swarm(['team', 'delete', TEAM])
    expect(r.code, r.stderr).toBe(0)
    expect(await gitIn(sb.project, ['rev-parse', `swarm/${TEAM}/carol`])).toBe(sha)
    expect(await findMarked(teamDir(TEAM, remoteEnv()))).toEqual([])
    expect(await findMarked(teamDir(TEAM, env))).toEqual([])
    const sockets = path.join(env.SWARM_HOME!, 'ssh')
    for (const s of fs.readdirSync(sockets).filter((f) => !f.includes('.'))) {
      const check = await execa('ssh', ['-F', host.sshConfig, '-S', path.join(sockets, s), '-O', 'check', 'x'], { reject: false })
      expect(check.exitCode, check.stderr).not.toBe(0)
    }
    // The work is here: alice's branch with both commits, carol's with hers; nothing of the team is left on the host.
    expect(await gitIn(sb.project, ['log', '--format=%s', `swarm/${TEAM}/alice`])).toBe('not fetched yet\nwritten on the host\nfirst')
    expect(fs.existsSync(path.join(host.remoteSwarmHome, 'host-worktrees', TEAM))).toBe(false)
  })
})
