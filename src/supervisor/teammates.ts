import path from 'node:path'
import { planAgentLaunch, type AgentLaunch } from '../adapters/launch-plan.js'
import { preflightAdapter } from '../adapters/preflight.js'
import { resolveAdapter } from '../adapters/registry.js'
import { ADAPTER_PIN_FIELD, pinOf } from '../adapters/adapter-pin.js'
import { recordSettingsPins } from './settings-pins.js'
import type { AgentAdapter } from '../adapters/types.js'
import { checkAgentType, loadAgentDefinitions } from '../agent/definitions/load.js'
import type { AgentDefinition } from '../agent/definitions/types.js'
import { definedOnly } from '../util/object.js'
import { readMemberState } from '../store/member-state.js'
import { BackendUnavailableError, ConflictError, NotFoundError, UsageError } from '../errors.js'
import { LEAD_VERIFY_KEY_ENV, loadLeadPublicKey } from '../trust/keys.js'
import { LEAD_NAME, validateName, validateTeammateName } from '../home/paths.js'
import { sendTeamMessage } from '../teams/messaging.js'
import { addMember, readTeam, updateTeam } from '../teams/team-store.js'
import type { TeamFile, TeamMember } from '../teams/types.js'
import { wantsWorktree } from '../agent/definitions/isolation.js'
import { type CreateWorktreeOptions, type Worktree, createWorktree, planWorktree, removeWorktree, worktreeCwd } from '../worktrees/worktree.js'
import { createHostWorktree, removeHostWorktree } from '../worktrees/host-worktree.js'
import { type DetectInputs, systemDetectInputs } from '../backends/detect.js'
import { STOPPED_FIELD, TMUX_SOCKET_FIELD } from '../backends/directory.js'
import { defaultLeaderArgv, defaultTeammateArgv, shellCommandArgv, teammateEnv } from '../backends/teammate-launch.js'
import { selectBackend } from '../backends/detect.js'
import { createExecutor } from '../backends/registry.js'
import { teamBackend } from '../backends/team-backend.js'
import { remoteExecutor } from '../backends/registry.js'
import { REMOTE_HOME_CWD, parseHost } from '../remote/host.js'
import type { BackendChoice, PaneExecutor, SpawnedTeammate } from '../backends/types.js'
import type { Env } from '../home/env.js'

/** One teammate to start (the fields of `swarm spawn`). */
export interface SpawnTeammateInput {
  name: string
  /** A shell command (`--command`); else `argv`; else `swarm agent --team T --name N`. */
  command?: string
  argv?: string[]
  cwd?: string
  agentType?: string
  /**
   * The agent CLI to run through its adapter (`--agent codex`); undefined: the agent definition's
   * `agent:`, else swarm's own agent. Ignored when `command` or `argv` is given.
   */
  agent?: string
  /** With `agent`: continue the CLI's last session (team resume). */
  resume?: boolean
  model?: string
  mode?: string
  /** Put in the teammate's inbox, from team-lead, before it starts. */
  prompt?: string
  color?: string
  /** Extra environment for the teammate. */
  env?: Record<string, string>
  /**
   * Run in a git worktree of its own (branch `swarm/<team>/<name>`) made from the repository of
   * `cwd` or the lead's cwd; a string names its directory under `.claude/worktrees/` (default
   * `<team>-<name>`). Undefined: what the agent definition's `isolation` says.
   */
  worktree?: boolean | string
  /**
   * Another machine to run on (`--host user@host[:port]`, a team file's `host:`): the host's swarm
   * starts it in tmux there (backends/remote.ts); its cwd, when given, is a path on that host.
   */
  host?: string
  /** Its budget (`--max-cost`, `--max-tokens`), kept in its team entry. */
  maxCostUsd?: number
  maxTokens?: number
}

export interface SpawnOptions {
  backend?: BackendChoice
  env?: Env
  /** A pane executor to reuse (team create spawns many with one). */
  executor?: PaneExecutor
  detectInputs?: DetectInputs
  /** The leader command for a team that has no session yet (default `swarm leader <team>`). */
  leaderArgv?: (team: string) => string[]
  /**
   * Start every input on this machine, whatever its agent definition's `host:` says: the host's
   * own side of a placement (`swarm remote spawn`), where the lead's machine made that choice.
   */
  here?: boolean
}

export interface SpawnResult {
  member: TeamMember
  spawned: SpawnedTeammate
  /** The worktree it runs in, when it has one made (or reused) by this spawn. */
  worktree?: Worktree
}

/** Starts one teammate and registers it; see spawnTeammates. */
export async function spawnTeammate(team: string, input: SpawnTeammateInput, opts: SpawnOptions = {}): Promise<SpawnResult> {
  const [result] = await spawnTeammates(team, [input], opts)
  return result
}

/**
 * Starts teammates in panes and registers them in the team's config.json: each is added (or,
 * if it exists and is not running, reused), gets its prompt in its inbox, is spawned — all
 * panes at once, their agents a few at a time (executor.spawnMany) — and then recorded (backendType, tmuxPaneId, cwd, worktreePath, isActive) in one config
 * write. A teammate that wants a worktree (`worktree`, or its definition's `isolation`) gets it
 * first and runs in it.
 * In-process teammates need a running leader and are refused here (exit 7).
 */
export async function spawnTeammates(team: string, given: SpawnTeammateInput[], opts: SpawnOptions = {}): Promise<SpawnResult[]> {
  const env = opts.env ?? process.env
  validateName(team)
  const inputs = opts.here ? given : await placeByDefinition(team, given, env)
  for (const i of inputs) {
    validateTeammateName(i.name)
    if (i.host !== undefined) parseHost(i.host)
  }
  // Members placed on hosts and members here are two spawns: one executor each.
  const placed = inputs.filter((i) => i.host !== undefined)
  if (placed.length > 0 && placed.length < inputs.length) {
    const here = await spawnTeammates(
      team,
      inputs.filter((i) => i.host === undefined),
      opts,
    )
    const there = await spawnTeammates(team, placed, opts)
    return inputs.map((i) => [...here, ...there].find((r) => r.member.name === i.name)!)
  }
  if (placed.length > 0) return spawnPlaced(team, inputs, env)
  const config = await readTeam(team, env)
  const leadCwd = config.members.find((m) => m.name === LEAD_NAME)?.cwd ?? process.cwd()
  // Before anything is written or started: an unknown agent type is exit 3 naming the known ones,
  // an unknown or broken adapter 2 / 5, a CLI that is missing or cannot address the name 7 / 2 —
  // never a dead teammate left on the roster.
  for (const i of inputs)
    if (i.agentType !== undefined && i.command === undefined) await checkAgentType(i.agentType, { cwd: path.resolve(i.cwd ?? leadCwd), env })
  const adapters = await Promise.all(inputs.map((i) => adapterFor(i, leadCwd, env)))
  for (const [k, adapter] of adapters.entries())
    if (adapter) preflightAdapter(adapter, { team, name: inputs[k].name, env: memberEnv(env, inputs[k]) })
  const executor = opts.executor ?? (await paneExecutor(config, opts, env))
  const verifyKey = await leadVerifyKey(team, env)
  // Before registering: a cwd that is not a repository refuses the spawn without leaving a member.
  const worktrees = await makeWorktrees(team, inputs, leadCwd, env)
  let members: TeamMember[]
  try {
    members = await registerMembers(team, inputs, config.members, executor, env)
    // A team that ran nowhere yet runs on this backend from now on (its leader pane must not take it for in-process).
    if (!teamBackend(config)) {
      await updateTeam(
        team,
        (t) => {
          t.swarmBackend ??= executor.type
        },
        env,
      )
    }
  } catch (err) {
    await undoWorktrees(worktrees, env)
    throw err
  }
  const cwds = await Promise.all(
    inputs.map(async (input, k) => (worktrees[k] ? worktreeCwd(worktrees[k]) : path.resolve(input.cwd ?? members[k].cwd ?? leadCwd))),
  )
  const launches = await Promise.all(inputs.map((input, k) => agentLaunchFor(team, input, adapters[k], cwds[k], env)))
  await recordAdapterPins(team, inputs, members, adapters, env)
  // Its hooks and sandbox settings as they are at its start: `team resume` names what changed since.
  await recordSettingsPins(
    team,
    inputs.map((i, k) => ({ name: i.name, cwd: cwds[k] })),
    env,
  )
  // A CLI that takes its first prompt in its argv has it there; everyone else finds it in the inbox.
  // Sent as the lead sends (signed, recorded for a reader that deletes it): a Claude Code teammate
  // holding the team's key shows an unsigned prompt to its model as an unverified lead message.
  await Promise.all(
    inputs.flatMap((i, k) => {
      const text = launches[k]?.launch.inboxPrompt ?? i.prompt
      return text && !launches[k]?.launch.promptInArgv
        ? [
            sendTeamMessage({
              team,
              to: i.name,
              text,
              summary: 'initial prompt',
              env,
              ...definedOnly({ recipientOwnsInbox: launches[k]?.ownsInbox }),
            }),
          ]
        : []
    }),
  )
  const spawned = await executor.spawnMany(
    inputs.map((input, k) => {
      const member = members[k]
      const cwd = cwds[k]
      const launch = launches[k]?.launch
      return {
        team,
        name: input.name,
        argv:
          input.command !== undefined
            ? shellCommandArgv(input.command)
            : (input.argv ?? launch?.argv ?? defaultTeammateArgv(team, input.name, input)),
        cwd,
        env: teammateEnv(env, { team, name: input.name }, { ...verifyKey, ...launch?.env, ...input.env }),
        color: member.color,
        // swarm's agent and an agent CLI's wrapper write their state once started; a plain command is cheap to start.
        ...(input.command === undefined && input.argv === undefined
          ? { started: (since: number) => wroteStateSince(team, input.name, since, env) }
          : {}),
      }
    }),
  )
  const ok = new Map<string, SpawnedTeammate>()
  for (const [k, r] of spawned.entries()) if (r.status === 'fulfilled') ok.set(inputs[k].name, r.value)
  const updated = await updateTeam(
    team,
    (t) => {
      for (const m of t.members) {
        const s = ok.get(m.name)
        if (!s) continue
        const k = inputs.findIndex((i) => i.name === m.name)
        const { agentType, model, mode, prompt } = inputs[k]
        Object.assign(m, definedOnly({ agentType, model, mode, prompt }))
        if (launches[k]) m.agent = launches[k].kind
        else if (inputs[k].command === undefined && inputs[k].argv === undefined) delete m.agent
        if (launches[k]?.ownsInbox) m.ownsInbox = true
        else delete m.ownsInbox
        m.backendType = s.backendType
        m.tmuxPaneId = s.paneId
        m.isActive = true
        delete m[STOPPED_FIELD]
        m.cwd = cwds[k]
        if (worktrees[k]) m.worktreePath = worktrees[k].path
        if (s.socketPath) m[TMUX_SOCKET_FIELD] = s.socketPath
        else delete m[TMUX_SOCKET_FIELD]
      }
    },
    env,
  )
  const failed = spawned.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failed) {
    await undoWorktrees(
      worktrees.map((w, k) => (spawned[k].status === 'rejected' ? w : undefined)),
      env,
    )
    throw failed.reason
  }
  return inputs.map((i, k) => ({
    member: updated.members.find((m) => m.name === i.name)!,
    spawned: ok.get(i.name)!,
    ...(worktrees[k] ? { worktree: worktrees[k] } : {}),
  }))
}

/**
 * Members placed on other machines (all of `inputs` name a host): registered here with their host,
 * their first prompts in their inboxes here (the link carries them), then started by the hosts'
 * swarm, which plans each launch (agent CLI, paths, sandbox) there. No settings pin is made here:
 * it would describe this machine. A member with `worktree` gets its branch in a worktree on its
 * host first (worktrees/host-worktree.ts: the lead's repository is the one of `cwd`, a directory
 * here then, or of the lead's cwd) and starts there.
 */
async function spawnPlaced(team: string, inputs: SpawnTeammateInput[], env: Env): Promise<SpawnResult[]> {
  const config = await readTeam(team, env)
  const executor = remoteExecutor({ env })
  for (const i of inputs) {
    if (i.command !== undefined || i.argv !== undefined)
      throw new UsageError(`${i.name}: a member on another host runs swarm's agent or an agent CLI (--agent), not --command`)
  }
  const leadCwd = config.members.find((m) => m.name === LEAD_NAME)?.cwd ?? process.cwd()
  // Before registering, one at a time (each pushes through the host's connection): a worktree that cannot be made leaves no member.
  const worktrees: Array<{ worktree: Worktree; cwd: string } | undefined> = []
  try {
    for (const i of inputs)
      worktrees.push(
        i.worktree
          ? await createHostWorktree({
              repoDir: path.resolve(i.cwd ?? leadCwd),
              team,
              name: i.name,
              host: i.host!,
              env,
              ...(typeof i.worktree === 'string' && { slug: i.worktree }),
            })
          : undefined,
      )
  } catch (err) {
    await undoHostWorktrees(worktrees, env)
    throw err
  }
  const cwdOf = (k: number) => worktrees[k]?.cwd ?? inputs[k]!.cwd ?? REMOTE_HOME_CWD
  let spawned: Array<PromiseSettledResult<SpawnedTeammate>>
  let members: TeamMember[]
  try {
    members = await registerMembers(
      team,
      inputs.map((i) => (i.worktree ? { ...i, cwd: undefined } : i)),
      config.members,
      executor,
      env,
    )
    await updateTeam(
      team,
      (t) => {
        for (const m of t.members) {
          const i = inputs.find((x) => x.name === m.name)
          if (i) m.host = parseHost(i.host!).spec
        }
      },
      env,
    )
    await Promise.all(
      inputs.flatMap((i) => (i.prompt ? [sendTeamMessage({ team, to: i.name, text: i.prompt, summary: 'initial prompt', env })] : [])),
    )
    spawned = await executor.spawnMany(
      inputs.map((i, k) => ({
        team,
        name: i.name,
        argv: defaultTeammateArgv(team, i.name, i),
        cwd: cwdOf(k),
        env: { ...teammateEnv(env, { team, name: i.name }), ...i.env },
        color: members[k]!.color,
        remote: {
          host: i.host!,
          launch: definedOnly({
            agent: i.agent,
            model: i.model,
            mode: i.mode,
            agentType: i.agentType,
            resume: i.resume,
            cwd: worktrees[k]?.cwd ?? i.cwd,
          }),
        },
      })),
    )
  } catch (err) {
    await undoHostWorktrees(worktrees, env)
    throw err
  }
  const updated = await updateTeam(
    team,
    (t) => {
      for (const m of t.members) {
        const k = inputs.findIndex((i) => i.name === m.name)
        const r = spawned[k]
        if (k < 0 || r?.status !== 'fulfilled') continue
        const { agentType, model, mode, prompt, agent } = inputs[k]!
        Object.assign(m, definedOnly({ agentType, model, mode, prompt, agent }))
        m.backendType = r.value.backendType
        m.tmuxPaneId = r.value.paneId
        m.isActive = true
        m.cwd = cwdOf(k)
        if (worktrees[k]) m.worktreePath = worktrees[k].worktree.path
        delete m[STOPPED_FIELD]
      }
    },
    env,
  )
  const failed = spawned.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failed) {
    await undoHostWorktrees(
      worktrees.map((w, k) => (spawned[k]!.status === 'rejected' ? w : undefined)),
      env,
    )
    throw failed.reason
  }
  return inputs.map((i, k) => ({
    member: updated.members.find((m) => m.name === i.name)!,
    spawned: (spawned[k] as PromiseFulfilledResult<SpawnedTeammate>).value,
    ...(worktrees[k] && { worktree: worktrees[k].worktree }),
  }))
}

/** Takes away the host worktrees this spawn made (not reused ones): nobody has worked in them yet. */
async function undoHostWorktrees(made: Array<{ worktree: Worktree } | undefined>, env: Env): Promise<void> {
  for (const m of made) {
    if (!m || m.worktree.reused) continue
    const contents = { exists: true, branchExists: false, uncommitted: [], ignored: [], unmerged: [], unmergedCount: 0, clean: true }
    // Best effort: the spawn's own failure is the one to report.
    await removeHostWorktree({ ...m.worktree, contents }, { env, discard: true }).catch(() => undefined)
  }
}

/** Has the member written its state.json since `since` (ms): its process got through its start-up? */
async function wroteStateSince(team: string, name: string, since: number, env: Env): Promise<boolean> {
  const state = await readMemberState(team, name, env).catch(() => undefined)
  return (state?.heartbeat ?? 0) >= since
}

/**
 * The worktree of each input that wants one. All are checked first (nothing is made if any
 * cannot be), then made one at a time: concurrent `git worktree add`s race on the repository's
 * locks. If making one fails, those made before it are taken away again.
 */
async function makeWorktrees(team: string, inputs: SpawnTeammateInput[], leadCwd: string, env: Env): Promise<Array<Worktree | undefined>> {
  const wanted: Array<CreateWorktreeOptions | undefined> = []
  for (const input of inputs) {
    const worktree = input.worktree
    const want = await wantsWorktree({
      ...(worktree !== undefined ? { worktree } : {}),
      ...(input.agentType ? { agentType: input.agentType } : {}),
      cwd: leadCwd,
      env,
    })
    const o = {
      repoDir: path.resolve(input.cwd ?? leadCwd),
      team,
      name: input.name,
      env,
      ...(typeof worktree === 'string' ? { slug: worktree } : {}),
    }
    if (want) await planWorktree(o)
    wanted.push(want ? o : undefined)
  }
  const made: Array<Worktree | undefined> = []
  try {
    for (const o of wanted) made.push(o ? await createWorktree(o) : undefined)
  } catch (err) {
    await undoWorktrees(made, env)
    throw err
  }
  return made
}

/** Takes away worktrees this spawn made (not reused ones), when the spawn fails after making them. */
async function undoWorktrees(worktrees: Array<Worktree | undefined>, env: Env): Promise<void> {
  for (const w of worktrees) if (w && !w.reused) await removeWorktree(w, { env }).catch(() => undefined)
}

/**
 * The adapter of an input that runs an agent CLI (`agent`, or its definition's `agent:`);
 * undefined for swarm's own agent and for explicit commands. Adapters are looked up from the lead's cwd.
 */
async function adapterFor(input: SpawnTeammateInput, leadCwd: string, env: Env): Promise<AgentAdapter | undefined> {
  if (input.command !== undefined || input.argv !== undefined) return undefined
  const kind = input.agent ?? (input.agentType ? (await findAgentDefinition(input.agentType, leadCwd, env))?.agent : undefined)
  return resolveAdapter(kind, { cwd: leadCwd, env })
}

/** Before any pane starts: the user-defined adapter file each teammate's hooks may load, by hash (adapters/adapter-pin.ts). */
async function recordAdapterPins(
  team: string,
  inputs: SpawnTeammateInput[],
  members: TeamMember[],
  adapters: Array<AgentAdapter | undefined>,
  env: Env,
): Promise<void> {
  const pins = adapters.map(pinOf)
  if (!pins.some(Boolean) && !members.some((m) => m[ADAPTER_PIN_FIELD] !== undefined)) return
  await updateTeam(
    team,
    (t) => {
      for (const m of t.members) {
        const k = inputs.findIndex((i) => i.name === m.name)
        if (k < 0) continue
        if (pins[k]) m[ADAPTER_PIN_FIELD] = pins[k]
        else delete m[ADAPTER_PIN_FIELD]
      }
    },
    env,
  )
}

/**
 * What an adapter plans and checks a member with: the spawner's environment and the member's own
 * on top — on a host, the provider's variables that travelled with the spawn (remote/env.ts),
 * which name the model's address a CLI's config must carry (Codex's `base_url`).
 */
function memberEnv(env: Env, input: SpawnTeammateInput): Env {
  return input.env ? { ...env, ...input.env } : env
}

/** The launch of a teammate that runs an agent CLI through `adapter`. */
async function agentLaunchFor(
  team: string,
  input: SpawnTeammateInput,
  adapter: AgentAdapter | undefined,
  cwd: string,
  env: Env,
): Promise<{ kind: string; ownsInbox: boolean; launch: AgentLaunch } | undefined> {
  if (!adapter) return undefined
  const launch = await planAgentLaunch(adapter, {
    team,
    name: input.name,
    cwd,
    env: memberEnv(env, input),
    ...definedOnly({ prompt: input.prompt, model: input.model, mode: input.mode, resume: input.resume }),
  })
  return { kind: adapter.kind, ownsInbox: adapter.ownsInbox === true, launch }
}

/** Inputs of an agent type whose definition names a `host:` (and that name none themselves) are placed there. */
async function placeByDefinition(team: string, inputs: SpawnTeammateInput[], env: Env): Promise<SpawnTeammateInput[]> {
  const open = (i: SpawnTeammateInput) => i.host === undefined && i.agentType !== undefined && i.command === undefined && i.argv === undefined
  if (!inputs.some(open)) return inputs
  const config = await readTeam(team, env)
  const leadCwd = config.members.find((m) => m.name === LEAD_NAME)?.cwd ?? process.cwd()
  return Promise.all(
    inputs.map(async (i) => {
      const host = open(i) ? (await findAgentDefinition(i.agentType!, leadCwd, env))?.host : undefined
      return host === undefined ? i : { ...i, host }
    }),
  )
}

async function findAgentDefinition(agentType: string, cwd: string, env: Env): Promise<AgentDefinition | undefined> {
  const { definitions } = await loadAgentDefinitions({ cwd, env })
  return definitions.get(agentType)
}

/** The lead's public key for the teammate's environment, when the team has one (else it reads lead.pub). */
async function leadVerifyKey(team: string, env: Env): Promise<Record<string, string>> {
  try {
    return { [LEAD_VERIFY_KEY_ENV]: await loadLeadPublicKey(team, env) }
  } catch (err) {
    if (err instanceof NotFoundError) return {}
    throw err
  }
}

/** The executor of `--backend`; with auto, the backend the team runs on (recorded at creation), else detection's. */
async function paneExecutor(config: TeamFile, opts: SpawnOptions, env: Env): Promise<PaneExecutor> {
  const choice = opts.backend ?? 'auto'
  const recorded = choice === 'auto' ? teamBackend(config) : undefined
  const { backend } = recorded ? { backend: recorded } : await selectBackend(choice, opts.detectInputs ?? systemDetectInputs(env))
  if (backend === 'in-process') {
    throw new BackendUnavailableError('an in-process teammate runs inside its leader, and this command is not the leader', {
      hint: 'start the team with "swarm team create --backend in-process", or spawn with --backend tmux',
    })
  }
  return createExecutor(backend, { env, leaderArgv: opts.leaderArgv ?? defaultLeaderArgv })
}

/** Adds new members; a member that exists is reused unless it is running. */
async function registerMembers(
  team: string,
  inputs: SpawnTeammateInput[],
  existing: TeamMember[],
  executor: PaneExecutor,
  env: Env,
): Promise<TeamMember[]> {
  const known = inputs.filter((i) => existing.some((m) => m.name === i.name))
  if (known.length) {
    const states = await executor.status(known.map((i) => `${i.name}@${team}`))
    const running = [...states].filter(([, s]) => s.state === 'alive').map(([id]) => id)
    if (running.length) {
      throw new ConflictError('SWARM_TEAMMATE_RUNNING', `already running: ${running.join(', ')}`, { hint: 'stop it first with "swarm kill"' })
    }
  }
  const result: TeamMember[] = []
  // One at a time: each add takes the config lock, and in order the palette hands out colours predictably.
  for (const i of inputs) {
    const old = existing.find((m) => m.name === i.name)
    if (old) {
      result.push(old)
      continue
    }
    result.push(
      await addMember(
        team,
        {
          name: i.name,
          agentType: i.agentType,
          model: i.model,
          prompt: i.prompt,
          color: i.color,
          cwd: i.cwd === undefined ? undefined : path.resolve(i.cwd),
          mode: i.mode,
          ...(i.maxCostUsd !== undefined && { maxCostUsd: i.maxCostUsd }),
          ...(i.maxTokens !== undefined && { maxTokens: i.maxTokens }),
          backendType: executor.type,
          isActive: false,
        },
        env,
      ),
    )
  }
  return result
}
