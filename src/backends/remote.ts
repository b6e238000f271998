import { z } from 'zod'
import { BackendUnavailableError, ExitCode, SwarmError } from '../errors.js'
import { LEAD_NAME } from '../home/paths.js'
import { HostUnreachableError, connectionTo } from '../remote/connection.js'
import { remoteMemberEnv } from '../remote/env.js'
import { handshake, remoteSwarm } from '../remote/helper.js'
import { type RemoteHost, parseHost } from '../remote/host.js'
import { ensureLink, stopLink } from '../remote/link-process.js'
import { readTeam } from '../teams/team-store.js'
import { loadLeadPublicKey } from '../trust/keys.js'
import { PaneExecutorBase } from './pane-executor-base.js'
import { parseAgentId } from './shutdown.js'
import { swarmArgv } from './teammate-launch.js'
import type { AttachIo, ExecutorOptions, LeaderPane, PaneExecutor, ProcessState, SpawnedTeammate, TeammateSpawnConfig } from './types.js'

/**
 * Teammates on other machines (`--host`, src/remote/): each host's swarm starts them in tmux
 * there, in a mirror of the team; the team's link relays their mailbox; status is one ssh call
 * per host and team, within the host's own limit. The leader never runs here: its team stays on
 * its local backend.
 */

/** A spawn runs the host's swarm, its tmux, and each member's start-up (an agent's first state write): longer than a poll. */
const REMOTE_SPAWN_TIMEOUT_MS = 90_000
/** Stopping a team on a host: its panes, their trees, the mirror's files. */
const REMOTE_STOP_TIMEOUT_MS = 30_000

const SpawnReply = z.array(z.object({ name: z.string(), paneId: z.string(), pid: z.number().optional(), cwd: z.string().optional() }))
const StatusReply = z.object({
  members: z.record(
    z.string(),
    z.object({ state: z.string(), pid: z.number().optional(), exitCode: z.number().optional(), reason: z.string().optional() }),
  ),
})

export class RemoteExecutor extends PaneExecutorBase<ExecutorOptions> implements PaneExecutor {
  readonly type = 'ssh'
  readonly supportsHideShow = false
  private readonly shaken = new Set<string>()

  /** The host's connection, its helper's version checked once per process. */
  private async ready(host: RemoteHost) {
    const conn = connectionTo(host, this.env)
    await conn.ensure()
    if (!this.shaken.has(host.spec)) {
      await handshake(conn, this.env)
      this.shaken.add(host.spec)
    }
    return conn
  }

  async spawn(config: TeammateSpawnConfig): Promise<SpawnedTeammate> {
    const [r] = await this.spawnMany([config])
    if (r!.status === 'rejected') throw r!.reason
    return r!.value
  }

  /** One call per host and team: the host's swarm makes every pane there at once (its own tmux spawnMany). */
  override async spawnMany(configs: TeammateSpawnConfig[]): Promise<Array<PromiseSettledResult<SpawnedTeammate>>> {
    const results: Array<PromiseSettledResult<SpawnedTeammate>> = []
    const groups = new Map<string, number[]>()
    for (const [k, c] of configs.entries()) {
      if (!c.remote) {
        results[k] = { status: 'rejected', reason: new SwarmError('SWARM_NO_HOST', `${c.name} names no host`, { exitCode: ExitCode.usage }) }
        continue
      }
      const key = `${c.team}\u0000${parseHost(c.remote.host).spec}`
      groups.set(key, [...(groups.get(key) ?? []), k])
    }
    await Promise.all(
      [...groups.values()].map(async (ks) => {
        const first = configs[ks[0]!]!
        try {
          const spawned = await this.spawnOnHost(
            first.team,
            parseHost(first.remote!.host),
            ks.map((k) => configs[k]!),
          )
          for (const [i, k] of ks.entries()) results[k] = { status: 'fulfilled', value: spawned[i]! }
        } catch (reason) {
          for (const k of ks) results[k] = { status: 'rejected', reason }
        }
      }),
    )
    return results
  }

  private async spawnOnHost(team: string, host: RemoteHost, configs: TeammateSpawnConfig[]): Promise<SpawnedTeammate[]> {
    const conn = await this.ready(host)
    // Before the panes: the link carries each member's first prompt, already in its local inbox.
    await ensureLink(team, host, swarmArgv(), this.env)
    const config = await readTeam(team, this.env)
    const request = {
      team,
      leadPublicKey: await loadLeadPublicKey(team, this.env),
      roster: config.members.map((m) => m.name),
      placedHere: config.members.filter((m) => m.host === host.spec).map((m) => m.name),
      members: configs.map((c) => ({ name: c.name, ...c.remote!.launch, ...(c.color && { color: c.color }) })),
      // The spawner's provider variables, not only those a swarm teammate inherits (teammateEnv
      // keeps ANTHROPIC_*): a Codex member there needs OPENAI_BASE_URL in its config, its key in its pane.
      env: remoteMemberEnv({ ...this.env, ...configs[0]!.env }),
    }
    const r = await conn.run(remoteSwarm(this.env, ['remote', 'spawn']), { input: JSON.stringify(request), timeoutMs: REMOTE_SPAWN_TIMEOUT_MS })
    if (r.code !== 0) {
      throw new SwarmError('SWARM_REMOTE_SPAWN', `spawning on ${host.spec} failed: ${r.stderr.trim().split('\n').at(-1) ?? `exit ${r.code}`}`, {
        exitCode: ExitCode.processFailure,
      })
    }
    const reply = SpawnReply.parse(JSON.parse(r.stdout))
    return configs.map((c) => {
      const got = reply.find((x) => x.name === c.name)
      if (!got) throw new SwarmError('SWARM_REMOTE_SPAWN', `${host.spec} did not start ${c.name}`, { exitCode: ExitCode.processFailure })
      return { agentId: `${c.name}@${team}`, backendType: this.type, paneId: got.paneId, ...(got.pid !== undefined && { pid: got.pid }) }
    })
  }

  /** The hosts of a team's members that are placed on one. */
  private async hostsOf(team: string): Promise<Map<string, RemoteHost>> {
    const config = await readTeam(team, this.env).catch(() => undefined)
    const hosts = new Map<string, RemoteHost>()
    for (const m of config?.members ?? []) if (m.host && m.name !== LEAD_NAME) hosts.set(m.name, parseHost(m.host))
    return hosts
  }

  /** One `swarm remote status` per host and team, all at once, each within its host's limit. */
  async status(agentIds: string[]): Promise<Map<string, ProcessState>> {
    const result = new Map<string, ProcessState>()
    const byTeam = new Map<string, string[]>()
    for (const id of agentIds) {
      const { team } = parseAgentId(id)
      byTeam.set(team, [...(byTeam.get(team) ?? []), id])
    }
    await Promise.all(
      [...byTeam].map(async ([team, ids]) => {
        const hosts = await this.hostsOf(team)
        const calls = new Map<string, { host: RemoteHost; ids: string[] }>()
        for (const id of ids) {
          const host = hosts.get(parseAgentId(id).name)
          if (!host) {
            result.set(id, { state: 'dead', reason: 'no host recorded' })
            continue
          }
          calls.set(host.spec, { host, ids: [...(calls.get(host.spec)?.ids ?? []), id] })
        }
        await Promise.all([...calls.values()].map(({ host, ids: here }) => this.hostStatus(team, host, here, result)))
      }),
    )
    return result
  }

  private async hostStatus(team: string, host: RemoteHost, ids: string[], result: Map<string, ProcessState>): Promise<void> {
    let reply: z.infer<typeof StatusReply>
    try {
      const r = await connectionTo(host, this.env).run(remoteSwarm(this.env, ['remote', 'status', '--team', team]))
      if (r.code !== 0) throw new HostUnreachableError(host.spec, `failed its status call: ${r.stderr.trim().split('\n').at(-1) ?? `exit ${r.code}`}`)
      reply = StatusReply.parse(JSON.parse(r.stdout))
    } catch (err) {
      if (!(err instanceof SwarmError)) throw err
      for (const id of ids) result.set(id, { state: 'unreachable', reason: err.message })
      return
    }
    for (const id of ids) {
      const m = reply.members[parseAgentId(id).name]
      if (!m || m.state === 'unknown') result.set(id, { state: 'dead', reason: m?.reason ?? `no pane on ${host.spec}` })
      else if (m.state === 'alive') result.set(id, { state: 'alive', ...(m.pid !== undefined && { pid: m.pid }) })
      else if (m.state === 'exited') result.set(id, { state: 'exited', code: m.exitCode ?? 0 })
      else result.set(id, { state: 'dead', reason: `${m.reason ?? 'dead'} (on ${host.spec})` })
    }
  }

  async kill(agentId: string): Promise<void> {
    const { team, name } = parseAgentId(agentId)
    const host = (await this.hostsOf(team)).get(name)
    if (!host) return
    const r = await connectionTo(host, this.env).run(remoteSwarm(this.env, ['remote', 'kill', '--team', team, '--name', name]), {
      timeoutMs: REMOTE_STOP_TIMEOUT_MS,
    })
    if (r.code !== 0) throw new SwarmError('SWARM_REMOTE_KILL', `killing ${name} on ${host.spec} failed: ${r.stderr.trim()}`)
  }

  /**
   * The team's link to every host its members are placed on, started again where it is not running
   * (`team resume` after this machine rebooted: the panes there ran on, their mailbox did not).
   */
  async relink(team: string): Promise<void> {
    const hosts = new Map([...(await this.hostsOf(team)).values()].map((h) => [h.spec, h]))
    for (const host of hosts.values()) await ensureLink(team, host, swarmArgv(), this.env)
  }

  /** Every host of the team: its panes and processes there, then the link, then the connection. */
  async stopTeam(team: string): Promise<void> {
    const hosts = new Map([...(await this.hostsOf(team)).values()].map((h) => [h.spec, h]))
    await Promise.all(
      [...hosts.values()].map(async (host) => {
        const conn = connectionTo(host, this.env)
        const r = await conn.run(remoteSwarm(this.env, ['remote', 'stop-team', '--team', team]), { timeoutMs: REMOTE_STOP_TIMEOUT_MS })
        if (r.code !== 0) throw new SwarmError('SWARM_REMOTE_STOP', `stopping team ${team} on ${host.spec} failed: ${r.stderr.trim()}`)
        await stopLink(team, host, this.env)
        await conn.close()
      }),
    )
  }

  ensureSession(team: string): Promise<LeaderPane> {
    return Promise.reject(noLeader(team))
  }
  ensureLeader(team: string): Promise<LeaderPane> {
    return Promise.reject(noLeader(team))
  }
  hide(): Promise<void> {
    return Promise.reject(new BackendUnavailableError('a teammate on another machine cannot be hidden from here'))
  }
  show(): Promise<void> {
    return this.hide()
  }

  /** `swarm attach <team> <member>` on the member's host, through the connection (its tmux there). */
  async attach(team: string, io: AttachIo, member?: string): Promise<number> {
    const hosts = await this.hostsOf(team)
    const host = member ? hosts.get(member) : hosts.values().next().value
    if (!host) throw new SwarmError('SWARM_NOT_FOUND', `${member ?? 'no member'} of team ${team} runs on no host`, { exitCode: ExitCode.notFound })
    io.notice(`attaching to ${team} on ${host.spec} (detach: C-b d)`)
    return connectionTo(host, this.env).inTerminal(remoteSwarm(this.env, ['attach', team, ...(member ? [member] : [])]))
  }
}

function noLeader(team: string): BackendUnavailableError {
  return new BackendUnavailableError(`team ${team}'s leader runs on this machine: a host runs only teammates`, {
    hint: 'create the team with a local backend (tmux), then spawn with --host',
  })
}
