import { randomUUID } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { CorruptFileError, ExitCode, SwarmError } from '../errors.js'
import { LEAD_NAME, agentId as makeAgentId, teamDir } from '../home/paths.js'
import { delay } from '../process/delay.js'
import { killTree, processTrees } from '../process/tree.js'
import { ensureDir } from '../util/fs.js'
import { withFileLock } from '../util/lock.js'
import { prepareLogFile, validateSpawnConfig, withBackendEnv } from './spawn-config.js'
import { PaneExecutorBase } from './pane-executor-base.js'
import { parseAgentId } from './shutdown.js'
import { type PaneRow, findPane, listPanes, paneState, teamLeader, teamPanes, teamWindowPane } from './tmux-panes.js'
import {
  EXIT_FILE_ENV,
  START_GATE_ENV,
  START_SOCKET_ENV,
  argvArgs,
  envArgs,
  exitStatusFile,
  gatedExitStatus,
  recordExitStatus,
  recordedExitStatus,
} from './tmux-launch.js'
import { type PaneLaunch, makePanes, paneSetup } from './tmux-spawn.js'
import { startConcurrency, startThrottled } from './start-throttle.js'
import { relayoutTeam } from './tmux-layout.js'
import { containedMemberArgv } from './teammate-launch.js'
import { DETACHED_SIZE, OWN_SERVER_SETUP, leaderPaneArgs, leaderPaneSetup, teamWindowOptions, windowSetup } from './tmux-setup.js'
import { attachTmuxTeam, sessionName } from './tmux-server.js'
import { TmuxClient, type TmuxSocket, formatEscape, isNoServer, resolveSocket, swarmSocket, tmuxCommand } from './tmux-client.js'
import type {
  AttachIo,
  ExecutorOptions,
  LeaderOptions,
  LeaderPane,
  PaneExecutor,
  ProcessState,
  SpawnedTeammate,
  TeammateSpawnConfig,
} from './types.js'

/** How long status waits, once, for tmux to learn the exit status of a pane that just died. */
const STATUS_SETTLE_MS = 30

export interface TmuxExecutorOptions extends ExecutorOptions {
  /** Overrides the server (default: $TMUX's inside tmux, else `-L swarm`). */
  socket?: TmuxSocket
  /** Limit for each tmux call (default TMUX_TIMEOUT_MS). */
  tmuxTimeoutMs?: number
}

/** A team's leader pane as this executor knows it: where it is and the server it is on. */
interface KnownLeader extends LeaderPane {
  windowId: string
  client: TmuxClient
}

/**
 * Teammates in tmux panes (docs/architecture.md §3, §5): outside tmux a `swarm-<team>` session on the swarm server,
 * inside tmux a window of the team's own; each teammate's argv handed to split-window with its
 * cwd, env, log, title and colour set in the same invocation; liveness of all panes from one
 * list-panes.
 */
export class TmuxExecutor extends PaneExecutorBase<TmuxExecutorOptions> implements PaneExecutor {
  readonly type = 'tmux'
  readonly supportsHideShow = true
  readonly client: TmuxClient
  private readonly inside: boolean
  private readonly leaders = new Map<string, KnownLeader>()
  private readonly others = new Map<string, TmuxClient>()
  /** Each team's last layout: layouts of one team run one after the other (parallel spawns). */
  private readonly layouts = new Map<string, Promise<void>>()

  constructor(opts: TmuxExecutorOptions = {}) {
    super(opts)
    const env = opts.env ?? process.env
    this.inside = !opts.socket && Boolean(env.TMUX)
    this.client = new TmuxClient({ socket: opts.socket ?? resolveSocket(env), env, timeoutMs: opts.tmuxTimeoutMs })
  }

  /** tmux processes started so far, by this executor (all servers). */
  get tmuxCalls(): number {
    return this.client.calls + [...this.others.values()].reduce((n, c) => n + c.calls, 0)
  }

  async ensureSession(team: string, leader: LeaderOptions): Promise<LeaderPane> {
    const client = await this.teamClient(team)
    const found = teamLeader(await listPanes(client), team)
    if (found) return this.remember(team, { ...found, created: false, client })
    return this.inside ? this.createWindow(team, leader) : this.createSession(team, leader)
  }

  /**
   * The server the team lives on: the one recorded for its leader (a team created inside your
   * tmux, resumed or spawned into from any shell) while it still holds the team's panes, else
   * this executor's own ($TMUX's inside tmux, else swarm's).
   */
  private async teamClient(team: string): Promise<TmuxClient> {
    // A corrupt config.json records no server: the team's panes are then looked for by their tags
    // on this executor's own server (`team delete --force` of such a team still closes them).
    const lead = await this.lookup([makeAgentId(LEAD_NAME, team)]).catch((err: unknown) => {
      if (err instanceof CorruptFileError) return new Map<string, never>()
      throw err
    })
    const recorded = lead.values().next().value?.socketPath
    if (!recorded) return this.client
    const client = this.clientFor(recorded)
    if (client === this.client) return client
    const rows = await listPanes(client, { allowNoServer: true })
    return rows !== 'no-server' && teamPanes(rows, team).length > 0 ? client : this.client
  }

  /**
   * A running leader pane, the teammates' panes left as they are (team resume): a dead leader pane
   * (remain-on-exit) is respawned in place; a closed one is split back in on the left of the
   * team's window; with no pane of the team at all, a new session or window (ensureSession).
   */
  async ensureLeader(team: string, leader: LeaderOptions): Promise<LeaderPane> {
    const client = await this.teamClient(team)
    const rows = await listPanes(client)
    const lead = rows.find((r) => r.agent === makeAgentId(LEAD_NAME, team))
    if (lead && !lead.dead) return this.remember(team, { ...lead, created: false, client })
    if (lead) {
      leader = await this.withExitStatus(team, leader)
      const respawn = tmuxCommand(
        'respawn-pane',
        '-k',
        '-t',
        lead.paneId,
        '-c',
        formatEscape(leader.cwd),
        ...envArgs(leader.env),
        ...argvArgs(leader.argv),
      )
      await client.source([respawn], { what: 'respawn-pane' })
      return this.remember(team, { paneId: lead.paneId, windowId: lead.windowId, socketPath: lead.socketPath, created: true, client })
    }
    const first = teamWindowPane(teamPanes(rows, team))
    if (!first) return this.ensureSession(team, leader)
    // -b: before the window's first pane, so main-vertical gives the leader the left side again.
    const split = tmuxCommand('split-window', '-h', '-b', '-t', first.paneId, ...leaderPaneArgs(await this.withExitStatus(team, leader)))
    const [paneId, , socketPath, windowId] = (await client.source([split], { what: 'split-window' })).trim().split('\t')
    await client.source(leaderPaneSetup(paneId, team), { what: 'set-option' })
    await this.relayout(team, client)
    return this.remember(team, { paneId, socketPath, windowId, created: true, client })
  }

  private async createSession(team: string, leader: LeaderOptions): Promise<LeaderPane> {
    const session = sessionName(team)
    const create = tmuxCommand(
      'new-session',
      '-d',
      '-s',
      session,
      '-n',
      team,
      ...DETACHED_SIZE,
      ...leaderPaneArgs(await this.withExitStatus(team, leader)),
    )
    let out: string
    try {
      out = await this.client.source([create, ...windowSetup(`=${session}:`, team), ...OWN_SERVER_SETUP], {
        startServer: true,
        what: 'new-session',
      })
    } catch (err) {
      // Another swarm process created it between our look and our new-session.
      if (err instanceof SwarmError && /duplicate session/.test(err.message)) return this.ensureSession(team, leader)
      throw err
    }
    const [paneId, , socketPath, windowId] = out.trim().split('\t')
    return this.remember(team, { paneId, socketPath, windowId, created: true, client: this.client })
  }

  private async createWindow(team: string, leader: LeaderOptions): Promise<LeaderPane> {
    // -a: after the user's current window (-t alone would collide with its index). new-window
    // takes a window, not a pane ("can't specify pane here"): resolve the pane's window first.
    const here = this.env.TMUX_PANE
      ? (await this.client.run(['display-message', '-p', '-t', this.env.TMUX_PANE, '#{window_id}'], 'display-message')).trim()
      : ''
    const target = here ? ['-a', '-t', here] : []
    const create = tmuxCommand('new-window', '-d', '-n', team, ...target, ...leaderPaneArgs(await this.withExitStatus(team, leader)))
    // new-window -d does not make the window current, so it is configured by id in a second call.
    const out = await this.client.source([create], { what: 'new-window' })
    const [paneId, , socketPath, windowId] = out.trim().split('\t')
    await this.client.source(windowSetup(windowId, team, paneId), { what: 'set-option' })
    return this.remember(team, { paneId, socketPath, windowId, created: true, client: this.client })
  }

  /**
   * The leader's command under the exit-status wrapper, as a teammate's: tmux 3.3a never learns the
   * status of some dead panes on a loaded machine (a leader's after /quit too), which then read as
   * "dead" instead of "exited".
   */
  private async withExitStatus(team: string, leader: LeaderOptions): Promise<LeaderOptions> {
    const exitFile = exitStatusFile(team, LEAD_NAME, this.env)
    await ensureDir(path.dirname(exitFile))
    await fs.rm(exitFile, { force: true }) // a previous run's status must not answer for this one
    const argv = recordExitStatus(containedMemberArgv(team, LEAD_NAME, leader.argv, this.env))
    return { ...leader, argv, env: { ...leader.env, [EXIT_FILE_ENV]: exitFile } }
  }

  private remember(team: string, leader: KnownLeader): LeaderPane {
    this.leaders.set(team, leader)
    return { paneId: leader.paneId, socketPath: leader.socketPath, created: leader.created }
  }

  async spawn(config: TeammateSpawnConfig): Promise<SpawnedTeammate> {
    const [r] = await this.spawnMany([config])
    if (r.status === 'rejected') throw r.reason
    return r.value
  }

  /**
   * Every pane from one tmux client (tmux-spawn.ts), their setup from a second, one layout, then
   * the commands let through a few at a time (start-throttle.ts): panes made together never race
   * each other for the server, and their Node start-ups do not starve the tmux calls still to come.
   */
  override async spawnMany(configs: TeammateSpawnConfig[]): Promise<Array<PromiseSettledResult<SpawnedTeammate>>> {
    const results: Array<PromiseSettledResult<SpawnedTeammate>> = []
    const prepared = await Promise.allSettled(configs.map((c) => this.prepareLaunch(c)))
    const byTeam = new Map<string, number[]>()
    for (const [k, p] of prepared.entries()) {
      if (p.status === 'rejected') results[k] = p
      else byTeam.set(configs[k].team, [...(byTeam.get(configs[k].team) ?? []), k])
    }
    for (const [team, ks] of byTeam) {
      const launches = ks.map((k) => (prepared[k] as PromiseFulfilledResult<PaneLaunch>).value)
      const spawned = await this.spawnTeamPanes(team, launches).catch((reason: unknown) => ks.map(() => ({ status: 'rejected' as const, reason })))
      for (const [i, k] of ks.entries()) results[k] = spawned[i]
    }
    return results
  }

  /** A teammate's launch: its log file, a fresh exit-status file, its argv gated and wrapped. */
  private async prepareLaunch(config: TeammateSpawnConfig): Promise<PaneLaunch> {
    const agentId = validateSpawnConfig(config)
    const logFile = await prepareLogFile(config, this.env)
    const exitFile = exitStatusFile(config.team, config.name, this.env)
    await fs.rm(exitFile, { force: true }) // a previous run's status must not answer for this one
    const env = { ...config.env, [EXIT_FILE_ENV]: exitFile, [START_GATE_ENV]: `swarm-start.${agentId}.${randomUUID()}` }
    return {
      config: withBackendEnv(
        { ...config, argv: gatedExitStatus(containedMemberArgv(config.team, config.name, config.argv, this.env)), env },
        this.type,
      ),
      agentId,
      logFile,
    }
  }

  private async spawnTeamPanes(team: string, launches: PaneLaunch[]): Promise<Array<PromiseSettledResult<SpawnedTeammate>>> {
    let leader = this.leaders.get(team) ?? (await this.leaderFor(launches[0].config))
    const gated = (l: PaneLaunch, socket: string): PaneLaunch => ({
      ...l,
      config: { ...l.config, env: { ...l.config.env, [START_SOCKET_ENV]: socket } },
    })
    let { made, failed } = await makePanes(
      leader.client,
      leader.windowId,
      team,
      launches.map((l) => gated(l, leader.socketPath ?? '')),
    )
    if (made.size === 0 && (/can't find (pane|window)/.test(failed) || isNoServer(failed))) {
      // The cached leader pane is gone (closed by the user, or the server died); look again once.
      this.leaders.delete(team)
      leader = await this.leaderFor(launches[0].config)
      ;({ made, failed } = await makePanes(
        leader.client,
        leader.windowId,
        team,
        launches.map((l) => gated(l, leader.socketPath ?? '')),
      ))
    }
    const client = leader.client
    const ok = launches.filter((l) => made.has(l.agentId))
    // Judged by the pane id printed: once a pane exists, its setup and the layout are cosmetic
    // (the next spawn, kill or resize lays the team out again) and it is started whatever they say.
    await client
      .source(
        ok.flatMap((l) => paneSetup(team, l, made.get(l.agentId)!)),
        { what: 'set-option' },
      )
      .catch(() => undefined)
    for (const l of ok)
      this.refs.set(l.agentId, { agentId: l.agentId, paneId: made.get(l.agentId)!.paneId, socketPath: made.get(l.agentId)!.socketPath })
    await this.relayout(team, client).catch(() => undefined)
    try {
      await startThrottled(ok, {
        limit: startConcurrency(this.env),
        release: async (batch) => {
          await client.source(
            batch.map((l) => tmuxCommand('wait-for', '-S', l.config.env![START_GATE_ENV]!)),
            { what: 'wait-for' },
          )
        },
        probe: (l) => l.config.started,
      })
    } catch (err) {
      // Panes whose gate could not be opened would wait there forever: closed, with their trees.
      await Promise.all(ok.map((l) => this.kill(l.agentId).catch(() => undefined)))
      throw err
    }
    return launches.map((l): PromiseSettledResult<SpawnedTeammate> => {
      const pane = made.get(l.agentId)
      if (!pane) return { status: 'rejected', reason: client.failure('new-window', failed) }
      return {
        status: 'fulfilled',
        value: { agentId: l.agentId, backendType: 'tmux', paneId: pane.paneId, pid: pane.pid, socketPath: pane.socketPath },
      }
    })
  }

  private async leaderFor(config: TeammateSpawnConfig): Promise<KnownLeader> {
    const argv = this.opts.leaderArgv?.(config.team)
    if (!argv) {
      const client = await this.teamClient(config.team)
      const found = teamLeader(await listPanes(client), config.team)
      if (!found)
        throw new SwarmError('SWARM_NO_SESSION', `team ${config.team} has no tmux session`, {
          exitCode: ExitCode.notFound,
          hint: 'start the team first',
        })
      this.remember(config.team, { ...found, created: false, client })
    } else {
      await this.ensureSession(config.team, { argv, cwd: config.cwd, env: config.env })
    }
    return this.leaders.get(config.team)!
  }

  /**
   * Lays the team's panes out again for its window's size (backends/tmux-layout.ts): after each
   * spawn, kill and show, and from `swarm layout`, which the windows' resize hook runs.
   */
  async relayout(team: string, client?: TmuxClient): Promise<void> {
    const on = client ?? (await this.teamClient(team))
    // Ordered in this process by the chain, and across processes (the resize hook's `swarm layout`
    // against a spawn's) by the team's layout lock: two layouts planned from the same listing
    // would each move the panes the other already moved.
    // A team whose directory is gone (removed while a resize hook was on its way) is laid out
    // unlocked: the lock never makes the team's files again.
    const lay = () => relayoutTeam(on, team, (w) => teamWindowOptions(w, team))
    const layout = () =>
      withFileLock(path.join(teamDir(team, this.env), 'layout'), lay, { makeDir: false }).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT' && err.path?.endsWith('layout.lock')) return lay()
        throw err
      })
    const next = (this.layouts.get(team) ?? Promise.resolve()).then(layout)
    // The chain only orders layouts; this one's caller gets its error.
    this.layouts.set(
      team,
      next.catch(() => undefined),
    )
    return next
  }

  kill(agentId: string): Promise<void> {
    return this.killMany([agentId])
  }

  /**
   * Per tmux server involved (normally one), whatever the number: one list-panes, one script of
   * kill-panes with the trees signalled beside it, one relayout per team — 64 concurrent kills
   * were ~190 tmux clients, each on its own limit, which a loaded machine could not answer in time.
   */
  override async killMany(agentIds: string[]): Promise<void> {
    const refs = await this.lookup(agentIds)
    for (const id of agentIds) this.refs.delete(id)
    const bySocket = new Map<string | undefined, string[]>()
    for (const id of agentIds) {
      const socket = refs.get(id)?.socketPath
      bySocket.set(socket, [...(bySocket.get(socket) ?? []), id])
    }
    for (const [socket, ids] of bySocket) {
      const client = this.clientFor(socket)
      const rows = await listPanes(client, { allowNoServer: true })
      if (rows === 'no-server') continue
      const found = ids.map((id) => ({ id, pane: findPane(rows, id, refs.get(id)) })).filter((x) => x.pane !== undefined)
      if (found.length === 0) continue
      await this.killPanes(
        client,
        found.map((x) => x.pane!),
      )
      for (const team of new Set(found.map((x) => parseAgentId(x.id).team))) await this.relayout(team, client)
    }
  }

  /**
   * Lists each pane's tree first (an orphan is re-parented and could no longer be found), then
   * closes the panes and signals the trees together: SIGTERM, SIGKILL after the grace.
   */
  private async killPanes(client: TmuxClient, panes: PaneRow[]): Promise<void> {
    if (panes.length === 0) return
    const live = panes.filter((p) => !p.dead && p.pid > 0)
    const trees = await processTrees(live.map((p) => p.pid))
    const lines = panes.map((p) => tmuxCommand('kill-pane', '-t', p.paneId))
    await Promise.all([
      // Each command on its own line: a pane that vanished meanwhile does not stop the others;
      // the errors it reports ("can't find pane/window") are expected.
      client.exec(['source-file', '-'], lines.join('\n') + '\n'),
      ...live.map((p) => killTree(p.pid, { pids: trees.get(p.pid) })),
    ])
  }

  /**
   * One list-panes per tmux server involved (normally one), whatever the number of teammates.
   * An agent with no recorded pane (the leader) is found by its @swarm_agent tag.
   */
  async status(agentIds: string[]): Promise<Map<string, ProcessState>> {
    const refs = await this.lookup(agentIds)
    // Agents without a record (the leader) are looked for on the server their team uses.
    const teamSocket = [...refs.values()].find((r) => r.socketPath)?.socketPath
    const bySocket = new Map<string | undefined, string[]>()
    for (const id of agentIds) {
      const socket = refs.get(id)?.socketPath ?? teamSocket
      bySocket.set(socket, [...(bySocket.get(socket) ?? []), id])
    }
    const result = new Map<string, ProcessState>()
    await Promise.all(
      [...bySocket].map(async ([socket, ids]) => {
        const client = this.clientFor(socket)
        let rows = await listPanes(client, { allowNoServer: true })
        // tmux marks a pane dead when its pty closes and learns the exit status a moment later.
        if (rows !== 'no-server' && rows.some((r) => r.dead && r.deadStatus === undefined && r.deadSignal === undefined)) {
          await delay(STATUS_SETTLE_MS)
          rows = await listPanes(client, { allowNoServer: true })
        }
        for (const id of ids) {
          if (rows === 'no-server') result.set(id, { state: 'dead', reason: 'tmux server not running' })
          else
            result.set(
              id,
              paneState(findPane(rows, id, refs.get(id)), refs.has(id), () => recordedExitStatus(id, this.env)),
            )
        }
      }),
    )
    return result
  }

  async stopTeam(team: string): Promise<void> {
    const clients = new Set<TmuxClient>([this.client])
    // Inside tmux, a team started from outside lives on the swarm server: look there too.
    if (this.inside) clients.add(this.clientFor(undefined, swarmSocket(this.env)))
    for (const ref of (await this.opts.directory?.teamPanes(team, 'tmux')) ?? []) clients.add(this.clientFor(ref.socketPath))
    clients.add(await this.teamClient(team))
    for (const client of clients) {
      const rows = await listPanes(client, { allowNoServer: true })
      if (rows === 'no-server') continue
      const own = this.env.TMUX_PANE
      const panes = teamPanes(rows, team).filter((p) => p.paneId !== own)
      await this.killPanes(client, panes)
      if (!this.inside && own && teamPanes(rows, team).some((p) => p.paneId === own)) {
        // We run inside the team's own session: let it end when we exit instead of killing it now.
        await client.exec(['set', '-p', '-t', own, 'remain-on-exit', 'off'])
      }
    }
    this.leaders.delete(team)
    for (const id of this.refs.keys()) if (parseAgentId(id).team === team) this.refs.delete(id)
  }

  async hide(agentId: string): Promise<void> {
    const { client, pane } = await this.requirePane(agentId)
    await client.run(['break-pane', '-d', '-s', pane.paneId, '-n', `hidden:${parseAgentId(agentId).name}`], 'break-pane')
    await this.relayout(parseAgentId(agentId).team, client)
  }

  async show(agentId: string): Promise<void> {
    const { client, pane, rows } = await this.requirePane(agentId)
    const { team } = parseAgentId(agentId)
    const leader = teamLeader(rows, team)
    if (!leader) throw new SwarmError('SWARM_NO_SESSION', `the leader pane of team ${team} is gone`, { exitCode: ExitCode.notFound })
    if (pane.windowId === leader.windowId) return
    await client.run(['join-pane', '-h', '-d', '-s', pane.paneId, '-t', leader.paneId], 'join-pane')
    await this.relayout(team, client)
  }
  attach(team: string, io: AttachIo, member?: string): Promise<number> {
    return attachTmuxTeam(team, io, this.env, member)
  }

  private async requirePane(agentId: string): Promise<{ client: TmuxClient; pane: PaneRow; rows: PaneRow[] }> {
    const ref = (await this.lookup([agentId])).get(agentId)
    const client = this.clientFor(ref?.socketPath)
    const rows = await listPanes(client)
    const pane = findPane(rows, agentId, ref)
    if (!pane) throw new SwarmError('SWARM_NOT_FOUND', `${agentId} has no tmux pane`, { exitCode: ExitCode.notFound })
    return { client, pane, rows }
  }

  private clientFor(socketPath: string | undefined, socket?: TmuxSocket): TmuxClient {
    if (!socketPath && !socket) return this.client
    const key = socketPath ?? JSON.stringify(socket)
    let client = this.others.get(key)
    if (!client) {
      client = new TmuxClient({ socket: socket ?? { path: socketPath! }, env: this.env, timeoutMs: this.opts.tmuxTimeoutMs })
      this.others.set(key, client)
    }
    return client
  }
}
