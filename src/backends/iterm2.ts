import fs from 'node:fs/promises'
import path from 'node:path'
import { ExitCode, NotFoundError, SwarmError } from '../errors.js'
import { agentDir } from '../home/paths.js'
import { ensureDir } from '../util/fs.js'
import { delay } from '../process/delay.js'
import type { CommandResult } from '../process/launch.js'
import { isAlive } from '../process/liveness.js'
import { killTree, processTrees } from '../process/tree.js'
import { validateSpawnConfig, withBackendEnv } from './spawn-config.js'
import { containedMemberArgv } from './teammate-launch.js'
import { PaneExecutorBase } from './pane-executor-base.js'
import { parseAgentId } from './shutdown.js'
import { shellQuote } from './tmux-client.js'
import { itermPaneDriver, runIt2 } from './iterm2-pane-driver.js'
import type { PaneBackend } from './backend.js'
import type { AttachIo, ExecutorOptions, LeaderPane, PaneExecutor, ProcessState, SpawnedTeammate, TeammateSpawnConfig } from './types.js'

/** How long spawn waits for the launcher to report its pid. */
const READY_TIMEOUT_MS = 10_000

export interface ITermExecutorOptions extends ExecutorOptions {
  /** The it2 executable (default `it2` on PATH). */
  it2?: string
}

/** The leader's iTerm2 session: the part of ITERM_SESSION_ID after the colon (`w0t0p0:<uuid>`). */
export function leaderSessionId(env: NodeJS.ProcessEnv): string | undefined {
  const id = env.ITERM_SESSION_ID
  const colon = id?.indexOf(':') ?? -1
  return id && colon >= 0 ? id.slice(colon + 1) || undefined : undefined
}

/** "Created new pane: <id>" → id */
export function parseSplitOutput(stdout: string): string | undefined {
  return /Created new pane:\s*(\S+)/.exec(stdout)?.[1]
}

/**
 * Teammates in iTerm2 splits through the `it2` CLI. it2 can only type a command into a session's
 * shell, so the teammate is started by a launcher script in its control directory: it records
 * its pid and exit code there (iTerm2 reports neither), carries the environment (no secret in an
 * argv or the shell history) and deletes itself once read.
 */
export class ITermExecutor extends PaneExecutorBase<ITermExecutorOptions> implements PaneExecutor {
  readonly type = 'iterm2'
  readonly supportsHideShow = false
  /** Teammate sessions per team, oldest first: the next split is made from the last one. */
  private readonly sessions = new Map<string, string[]>()
  /** Sessions found gone while splitting (reported by `pruned`). */
  readonly pruned: string[] = []
  private splitting: Promise<unknown> = Promise.resolve()
  calls = 0

  constructor(opts: ITermExecutorOptions = {}) {
    super(opts)
  }

  private async it2(args: string[]): Promise<CommandResult> {
    this.calls++
    return runIt2(args, this.env, this.opts.it2)
  }

  /** The leader is the session swarm runs in; iTerm2 has nothing to create. */
  async ensureSession(): Promise<LeaderPane> {
    return { paneId: leaderSessionId(this.env) ?? '', created: false }
  }

  /** Likewise: the leader is the session swarm runs in. */
  async ensureLeader(): Promise<LeaderPane> {
    return this.ensureSession()
  }

  async spawn(config: TeammateSpawnConfig): Promise<SpawnedTeammate> {
    const agentId = validateSpawnConfig(config)
    // In its member's cgroup where the system has one, as a tmux pane's teammate (process/containment.ts).
    config = withBackendEnv({ ...config, argv: containedMemberArgv(config.team, config.name, config.argv, this.env) }, this.type)
    const files = this.files(config.team, config.name)
    await ensureDir(path.dirname(files.launcher))
    await Promise.all([fs.rm(files.pid, { force: true }), fs.rm(files.exit, { force: true })])
    await fs.writeFile(files.launcher, launcherScript(config, files), { mode: 0o700 })
    const sessionId = await this.serialized(() => this.split(config.team))
    const run = await this.it2(['session', 'run', '-s', sessionId, `/bin/sh ${shellQuote(files.launcher)}`])
    if (run.code !== 0)
      throw new SwarmError('SWARM_IT2_FAILED', `it2 session run failed: ${run.stderr.trim()}`, { exitCode: ExitCode.processFailure })
    const pid = await this.waitForPid(files.pid, agentId)
    this.refs.set(agentId, { agentId, paneId: sessionId })
    return { agentId, backendType: 'iterm2', paneId: sessionId, pid }
  }

  /**
   * Splits the team's last teammate session (the leader's for the first one). A target that
   * vanished is pruned — confirmed with `it2 session list` — and the split retried from the one
   * before; the list only shrinks, so this ends.
   */
  private async split(team: string): Promise<string> {
    const list = await this.teamSessions(team)
    for (;;) {
      const target = list.at(-1)
      const leader = leaderSessionId(this.env)
      const args = target ? ['session', 'split', '-s', target] : ['session', 'split', '-v', ...(leader ? ['-s', leader] : [])]
      const r = await this.it2(args)
      if (r.code === 0) {
        const id = parseSplitOutput(r.stdout)
        if (!id) throw new SwarmError('SWARM_IT2_FAILED', `could not read the new session id from it2 (${JSON.stringify(r.stdout.trim())})`)
        list.push(id)
        return id
      }
      if (target && !(await this.listSessions())?.has(target)) {
        list.pop()
        this.pruned.push(target)
        continue
      }
      throw new SwarmError('SWARM_IT2_FAILED', `it2 session split failed: ${r.stderr.trim() || r.stdout.trim()}`, {
        exitCode: ExitCode.processFailure,
      })
    }
  }

  private async teamSessions(team: string): Promise<string[]> {
    let list = this.sessions.get(team)
    if (!list) {
      list = ((await this.opts.directory?.teamPanes(team, 'iterm2')) ?? []).map((r) => r.paneId)
      this.sessions.set(team, list)
    }
    return list
  }

  /** What `it2 session list` prints (ids are looked up in it), or undefined when it2 cannot say. */
  private async listSessions(): Promise<{ has(id: string): boolean } | undefined> {
    const r = await this.it2(['session', 'list'])
    if (r.code !== 0) return undefined
    return { has: (id) => r.stdout.includes(id) }
  }

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.splitting.then(fn, fn)
    this.splitting = next.catch(() => undefined)
    return next
  }

  private async waitForPid(file: string, agentId: string): Promise<number> {
    const deadline = Date.now() + READY_TIMEOUT_MS
    while (Date.now() < deadline) {
      const pid = await readNumber(file)
      if (pid) return pid
      await delay(20)
    }
    throw new SwarmError('SWARM_SPAWN_TIMEOUT', `${agentId} did not start within ${READY_TIMEOUT_MS} ms in iTerm2`, {
      exitCode: ExitCode.timeout,
      hint: 'check the new iTerm2 pane for errors from its shell',
    })
  }

  kill(agentId: string): Promise<void> {
    return this.killMany([agentId])
  }

  /**
   * Lists every launcher's tree first — closing a session ends its launcher, whose orphans are
   * re-parented and could no longer be found — then closes the sessions and signals the trees together.
   */
  override async killMany(agentIds: string[]): Promise<void> {
    const refs = await this.lookup(agentIds)
    const pids = new Map<string, number>()
    for (const id of agentIds) {
      const { name, team } = parseAgentId(id)
      const pid = await readNumber(this.files(team, name).pid)
      if (pid && isAlive(pid)) pids.set(id, pid)
      this.refs.delete(id)
      const ref = refs.get(id)
      const list = this.sessions.get(team)
      if (ref && list?.includes(ref.paneId)) list.splice(list.indexOf(ref.paneId), 1)
    }
    const trees = await processTrees([...pids.values()])
    const ends: Array<Promise<unknown>> = []
    for (const id of agentIds) {
      const pid = pids.get(id)
      const ref = refs.get(id)
      if (pid) ends.push(killTree(pid, { pids: trees.get(pid) }))
      // A session closed by the user already is not an error here.
      if (ref) ends.push(this.it2(['session', 'close', '-f', '-s', ref.paneId]))
    }
    await Promise.all(ends)
  }

  /** One `it2 session list` for all teammates, plus the launcher's pid and exit files. */
  async status(agentIds: string[]): Promise<Map<string, ProcessState>> {
    const refs = await this.lookup(agentIds)
    const sessions = refs.size ? await this.listSessions() : undefined
    const result = new Map<string, ProcessState>()
    await Promise.all(
      agentIds.map(async (id) => {
        const { name, team } = parseAgentId(id)
        const files = this.files(team, name)
        const [pid, code] = await Promise.all([readNumber(files.pid), readNumber(files.exit)])
        const ref = refs.get(id)
        if (code !== undefined) result.set(id, { state: 'exited', code })
        else if (pid && isAlive(pid)) result.set(id, { state: 'alive', pid })
        else if (!ref) result.set(id, { state: 'dead', reason: 'no session recorded' })
        else if (sessions && !sessions.has(ref.paneId)) result.set(id, { state: 'dead', reason: 'iTerm2 session closed' })
        else result.set(id, { state: 'dead', reason: pid ? 'process ended' : 'never started' })
      }),
    )
    return result
  }

  async stopTeam(team: string): Promise<void> {
    const ids = new Set<string>(
      [...this.refs.keys(), ...((await this.opts.directory?.teamPanes(team, 'iterm2')) ?? []).map((r) => r.agentId)].filter(
        (id) => parseAgentId(id).team === team,
      ),
    )
    await this.killMany([...ids])
    this.sessions.delete(team)
  }

  async hide(): Promise<void> {
    throw new SwarmError('SWARM_UNSUPPORTED', 'hiding a pane is supported with tmux only', { exitCode: ExitCode.backendUnavailable })
  }

  async show(): Promise<void> {
    throw new SwarmError('SWARM_UNSUPPORTED', 'showing a hidden pane is supported with tmux only', { exitCode: ExitCode.backendUnavailable })
  }

  /** A team's iTerm2 panes are splits of the leader's own window, already in sight. */
  async attach(team: string, _io: AttachIo, _member?: string): Promise<number> {
    throw new NotFoundError(`team ${team} runs in iTerm2 panes: there is no tmux session to attach to`)
  }

  private files(team: string, name: string) {
    const dir = agentDir(team, name, this.env)
    return { launcher: path.join(dir, 'launch.sh'), pid: path.join(dir, 'pane.pid'), exit: path.join(dir, 'pane.exit') }
  }
}

/** The launcher: removes itself, records its pid, runs the teammate, records its exit code. */
export function launcherScript(config: TeammateSpawnConfig, files: { launcher: string; pid: string; exit: string }): string {
  const q = shellQuote
  const exports = Object.entries(config.env ?? {}).map(([k, v]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k))
      throw new SwarmError('SWARM_USAGE', `invalid environment variable name ${JSON.stringify(k)}`, { exitCode: ExitCode.usage })
    return `export ${k}=${q(v)}`
  })
  return [
    '#!/bin/sh',
    `# swarm: starts ${config.name}@${config.team}; it removes itself because it may hold secrets.`,
    `rm -f -- ${q(files.launcher)}`,
    `echo $$ > ${q(files.pid + '.tmp')} && mv -f -- ${q(files.pid + '.tmp')} ${q(files.pid)}`,
    `cd -- ${q(config.cwd)} || { echo 127 > ${q(files.exit)}; exit 127; }`,
    ...exports,
    config.argv.map(q).join(' '),
    'code=$?',
    `echo "$code" > ${q(files.exit + '.tmp')} && mv -f -- ${q(files.exit + '.tmp')} ${q(files.exit)}`,
    'exit "$code"',
    '',
  ].join('\n')
}

async function readNumber(file: string): Promise<number | undefined> {
  try {
    const n = Number.parseInt(await fs.readFile(file, 'utf8'), 10)
    return Number.isFinite(n) ? n : undefined
  } catch {
    return undefined // not written yet
  }
}

/** iTerm2 through its `it2` CLI: splits of the leader's own iTerm2 session. */
export const iterm2Backend: PaneBackend = {
  type: 'iterm2',
  kind: 'pane',
  label: 'iTerm2',
  probe: ['it2', 'session', 'list'],
  standalone: false,
  inside: (env) => env.TERM_PROGRAM === 'iTerm.app' || Boolean(env.ITERM_SESSION_ID),
  probeWhenInside: true,
  installHint: () => it2InstallHint(),
  create: (opts) => new ITermExecutor(opts as ITermExecutorOptions),
  // iTerm2 sets ITERM_SESSION_ID in each of its sessions, a teammate's split included.
  ownPane: (env) => {
    const paneId = leaderSessionId(env)
    return paneId ? { paneId } : undefined
  },
  paneDriver: (pane, env) => itermPaneDriver(pane, env),
}

/** How to make the iTerm2 backend work. */
export function it2InstallHint(): string {
  return 'install the it2 CLI ("uv tool install it2", "pipx install it2" or "pip install --user it2") and enable iTerm2 → Settings → General → Magic → Enable Python API'
}
