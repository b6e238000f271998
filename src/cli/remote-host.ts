import { z } from 'zod'
import { ConflictError, NotFoundError } from '../errors.js'
import { LEAD_NAME } from '../home/paths.js'
import type { Env } from '../home/env.js'
import { runCommand } from '../process/launch.js'
import { nextStopSignal } from '../process/handlers.js'
import { PROTOCOL } from '../remote/protocol.js'
import { runRelay } from '../remote/relay.js'
import { swarmVersion } from '../remote/version.js'
import { rootDir } from '../home/paths.js'
import { addMember, createTeam, deleteTeamFiles, readTeam, teamExists, updateTeam } from '../teams/team-store.js'
import { writeLeadPublicKey } from '../trust/keys.js'
import { defaultTeammateArgv, swarmArgv } from '../backends/teammate-launch.js'
import { transcriptPath } from '../agent/transcript.js'
import { pathExists } from '../util/fs.js'
import { definedOnly } from '../util/object.js'
import { spawnTeammates } from '../supervisor/teammates.js'
import { teamStatus } from '../supervisor/status.js'
import { killTeammate, stopTeamMembers } from '../supervisor/stop.js'
import { reapTeam } from '../supervisor/reap-team.js'
import { printJson, println } from '../terminal/output.js'
import { addHostedWorktree, openHostedRepo, removeHostedWorktree } from '../worktrees/hosted-repo.js'

/*
 * What `swarm remote …` does on a host (run over ssh by src/remote/ and backends/remote.ts): the
 * team there is a mirror — its roster, the lead's public key — in the host's own state root, its
 * members' panes on the host's own tmux server, every path (HOME, config dirs, cwd) the host's.
 */

/** `swarm remote hello`: this machine, for the handshake and `swarm hosts check`. */
export async function remoteHello(env: Env): Promise<void> {
  const tools: Record<string, string | null> = {}
  const probes: Array<[string, string[]]> = [
    ['tmux', ['-V']],
    ['git', ['--version']],
    ['bwrap', ['--version']],
    ['codex', ['--version']],
    ['claude', ['--version']],
    ['gemini', ['--version']],
  ]
  await Promise.all(
    probes.map(async ([tool, args]) => {
      const r = await runCommand(tool, args, { env, timeoutMs: 5_000 }).catch(() => undefined)
      tools[tool] = r && r.code === 0 ? (r.stdout || r.stderr).trim().split('\n')[0]! : null
    }),
  )
  printJson({
    version: swarmVersion(),
    protocol: PROTOCOL,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    home: env.HOME ?? '',
    root: rootDir(env),
    bin: swarmArgv()[1],
    tools,
  })
}

const SpawnRequest = z.object({
  team: z.string(),
  leadPublicKey: z.string(),
  /** Every member's name, here or elsewhere: who a resident may message. */
  roster: z.array(z.string()),
  /** Those of the roster placed on this host (being started by this call or another): residents here. */
  placedHere: z.array(z.string()),
  members: z.array(
    z.object({
      name: z.string(),
      agent: z.string().optional(),
      model: z.string().optional(),
      mode: z.string().optional(),
      agentType: z.string().optional(),
      color: z.string().optional(),
      resume: z.boolean().optional(),
      cwd: z.string().optional(),
    }),
  ),
  /** The provider's variables for the members (src/remote/env.ts decides which travel). */
  env: z.record(z.string(), z.string()),
})

/** `swarm remote spawn` (the request on stdin): the mirror team made or brought up to date, then its members' panes. */
export async function remoteSpawn(input: string, env: Env): Promise<void> {
  const req = SpawnRequest.parse(JSON.parse(input))
  if (!(await teamExists(req.team, env))) await createTeam({ name: req.team, cwd: env.HOME ?? '/' }, env)
  await writeLeadPublicKey(req.team, req.leadPublicKey, env)
  await mirrorRoster(req.team, req.roster, [...new Set([...req.placedHere, ...req.members.map((m) => m.name)])], env)
  const inputs = await Promise.all(
    req.members.map(async (m) => ({
      ...m,
      cwd: m.cwd ?? env.HOME ?? '/',
      env: req.env,
      // `team resume` of swarm's agent: it continues from its transcript here (an agent CLI's resume is its adapter's).
      ...(m.resume && m.agent === undefined && (await pathExists(transcriptPath(req.team, m.name, env)))
        ? { argv: [...defaultTeammateArgv(req.team, m.name, definedOnly({ model: m.model, mode: m.mode, agentType: m.agentType })), '--resume'] }
        : {}),
    })),
  )
  const results = await spawnTeammates(req.team, inputs, {
    backend: 'tmux',
    env,
    here: true,
    leaderArgv: (team) => [...swarmArgv(), 'remote', 'home', team],
  })
  printJson(results.map((r) => ({ name: r.member.name, paneId: r.spawned.paneId, pid: r.spawned.pid, cwd: r.member.cwd })))
}

/**
 * The mirror's roster before any pane starts: each member placed on this host resident (its inbox
 * its own: the relay writes its first prompt there and never sends it back), everyone else marked
 * as living elsewhere (what a resident writes them is relayed out). A member moved here loses the
 * mark. Parallel spawns on one host run this at once: each names the same members as placed here
 * (the lead's record of their host, not which call starts them), so whichever adds a member first
 * adds it as the others would.
 */
export async function mirrorRoster(team: string, roster: readonly string[], here: readonly string[], env: Env): Promise<void> {
  const known = new Set((await readTeam(team, env)).members.map((m) => m.name))
  for (const name of new Set([...roster, ...here])) {
    if (name === LEAD_NAME || known.has(name)) continue
    try {
      await addMember(team, { name, isActive: false, ...(!here.includes(name) && { elsewhere: true }) }, env)
    } catch (err) {
      // Added by a spawn running beside this one.
      if (!(err instanceof ConflictError)) throw err
    }
  }
  await updateTeam(
    team,
    (t) => {
      for (const m of t.members) if (here.includes(m.name)) delete m.elsewhere
    },
    env,
  )
}

/** `swarm remote status --team T`: every resident's process and state, for one poll of the lead's machine. */
export async function remoteStatus(team: string, env: Env): Promise<void> {
  if (!(await teamExists(team, env))) {
    printJson({ members: {} })
    return
  }
  const status = await teamStatus(team, { env })
  const members: Record<string, unknown> = {}
  for (const m of status.members) {
    if (m.name === LEAD_NAME) continue
    members[m.name] = { state: m.state, pid: m.pid, exitCode: m.exitCode, reason: m.reason, pane: m.pane }
  }
  printJson({ members })
}

/** `swarm remote kill --team T --name N`: the member's pane and process tree, now. */
export async function remoteKill(team: string, name: string, env: Env): Promise<void> {
  if (!(await teamExists(team, env))) return
  try {
    await killTeammate(team, name, { now: true, env })
  } catch (err) {
    // Not here (its spawn failed before the mirror had it, or it never started): nothing to kill.
    if (!(err instanceof NotFoundError)) throw err
  }
}

/** `swarm remote stop-team --team T`: every pane of the team here, whatever carries its marker, then the mirror's files. */
export async function remoteStopTeam(team: string, env: Env): Promise<void> {
  if (!(await teamExists(team, env))) return
  await stopTeamMembers(team, { env, graceful: false })
  const { survivors } = await reapTeam(team, env)
  if (survivors.length) throw new Error(`processes of team ${team} survived: ${survivors.map((s) => s.pid).join(', ')}`)
  await deleteTeamFiles(team, env)
  println(`team ${team} stopped on this host`)
}

/** `swarm remote relay --team T`: the host's end of the relay, on this process's stdin and stdout. */
export async function remoteRelay(team: string, link: string, env: Env): Promise<void> {
  const stop = new AbortController()
  void nextStopSignal(stop.signal).then(() => stop.abort())
  const why = await runRelay(team, { input: process.stdin, write: (t) => process.stdout.write(t), signal: stop.signal }, env, link)
  stop.abort()
  process.stderr.write(`swarm relay: ${why}\n`)
}

/** `swarm remote home T`: the first pane of a mirror team's session (tmux needs one); it waits to be closed. */
export async function remoteHome(team: string): Promise<void> {
  println(`team ${team}: its members' panes on this host. The lead runs on the machine that spawned them.`)
  await nextStopSignal()
}

/** `swarm remote worktree-open`: the team's repository for one lead repository, and the branch's commit there. */
export async function remoteWorktreeOpen(o: HostedWorktreeFlags, env: Env): Promise<void> {
  printJson(await openHostedRepo(o.team, o.repoId, o.branch, env))
}

/** `swarm remote worktree-add`: the member's worktree of its branch, made or found. */
export async function remoteWorktreeAdd(o: HostedWorktreeFlags, env: Env): Promise<void> {
  printJson(await addHostedWorktree({ team: o.team, repoId: o.repoId, branch: o.branch, slug: o.slug!, subdir: o.subdir ?? '' }, env))
}

/** `swarm remote worktree-remove`: the member's worktree unless it holds uncommitted changes, its branch while at --tip. */
export async function remoteWorktreeRemove(o: HostedWorktreeFlags, env: Env): Promise<void> {
  printJson(
    await removeHostedWorktree(
      { team: o.team, repoId: o.repoId, branch: o.branch, slug: o.slug!, ...definedOnly({ tip: o.tip, discard: o.discard }) },
      env,
    ),
  )
}

/** The flags of `swarm remote worktree-*`. */
export interface HostedWorktreeFlags {
  team: string
  repoId: string
  branch: string
  slug?: string
  subdir?: string
  tip?: string
  discard?: boolean
}
