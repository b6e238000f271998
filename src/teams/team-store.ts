import fs from 'node:fs/promises'
import { ConflictError, NotFoundError, SwarmError, UsageError } from '../errors.js'
import { atomicWriteJson, ensureDir, pathExists, readJsonFile, readJsonForWrite } from '../util/fs.js'
import { withFileLock } from '../util/lock.js'
import { pickColor } from '../home/colors.js'
import {
  LEAD_NAME,
  agentId,
  inboxesDir,
  scratchpadDir,
  tasksDir,
  teamConfigPath,
  teamDir,
  teamsDir,
  validateAgentName,
  validateName,
} from '../home/paths.js'
import { TeamFile, TeamMember } from './types.js'

type Env = NodeJS.ProcessEnv

/** What a caller says about a member; the store fills in agentId, joinedAt, colour and defaults. */
export interface NewMember {
  name: string
  agentType?: string
  model?: string
  prompt?: string
  color?: string
  cwd?: string
  mode?: string
  planModeRequired?: boolean
  backendType?: string
  tmuxPaneId?: string
  isActive?: boolean
  /** Start it in a git worktree of its own (a string names the worktree). */
  worktree?: boolean | string
}

export interface NewTeam {
  name: string
  description?: string
  /** Working directory of the lead and the default for teammates; defaults to process.cwd(). */
  cwd?: string
  /** Teammates (a `team-lead` entry here only adds details to the lead). */
  members?: NewMember[]
  leadSessionId?: string
}

/** The agent type Claude Code records for a teammate spawned without `subagent_type`. */
const DEFAULT_AGENT_TYPE = 'general-purpose'

/**
 * Writes `<root>/teams/<team>/config.json` with the lead as members[0] (`team-lead@<team>`,
 * tmuxPaneId ''), creates the inbox and task directories, and starts nothing.
 * ConflictError SWARM_TEAM_EXISTS when the team already has a config.
 */
export async function createTeam(input: NewTeam, env?: Env): Promise<TeamFile> {
  const name = validateName(input.name, 'team')
  const wanted = input.members ?? []
  const seen = new Set<string>()
  for (const m of wanted) {
    validateAgentName(m.name)
    if (seen.has(m.name)) throw new UsageError(`member ${JSON.stringify(m.name)} is listed twice`)
    seen.add(m.name)
  }
  const cwd = input.cwd ?? process.cwd()
  const now = Date.now()
  const leadExtra = wanted.find((m) => m.name === LEAD_NAME)
  const lead = buildMember(name, { ...leadExtra, name: LEAD_NAME, agentType: leadExtra?.agentType ?? LEAD_NAME, tmuxPaneId: '' }, cwd, now, [])
  if (!leadExtra?.color) delete lead.color // Claude Code gives the lead no colour; the palette is for teammates.
  const members: TeamMember[] = [lead]
  for (const m of wanted) {
    if (m.name === LEAD_NAME) continue
    members.push(
      buildMember(
        name,
        m,
        cwd,
        now,
        members.map((x) => x.color),
      ),
    )
  }
  const team = TeamFile.parse({
    name,
    ...(input.description !== undefined && { description: input.description }),
    createdAt: now,
    leadAgentId: lead.agentId,
    ...(input.leadSessionId !== undefined && { leadSessionId: input.leadSessionId }),
    members,
  })

  const file = teamConfigPath(name, env)
  await withFileLock(file, async () => {
    if (await pathExists(file)) {
      throw new ConflictError('SWARM_TEAM_EXISTS', `team ${JSON.stringify(name)} already exists`, {
        hint: `pick another name, or remove it first with "swarm team delete ${name}"`,
      })
    }
    await atomicWriteJson(file, team)
  })
  await ensureDir(inboxesDir(name, env))
  await ensureDir(tasksDir(name, env))
  return team
}

/** Reads a team's config. NotFoundError (exit 3) if missing; CorruptFileError (exit 5) naming the file. */
export async function readTeam(team: string, env?: Env): Promise<TeamFile> {
  const file = teamConfigPath(team, env)
  const parsed = await readJsonFile(file, TeamFile)
  if (!parsed) throw teamNotFound(team)
  return parsed
}

export async function teamExists(team: string, env?: Env): Promise<boolean> {
  return pathExists(teamConfigPath(team, env))
}

/** Every directory under `<root>/teams` with a valid name, with its config or why it cannot be read. */
export async function listTeams(env?: Env): Promise<Array<{ name: string; team?: TeamFile; error?: string }>> {
  let entries: import('node:fs').Dirent[]
  try {
    entries = await fs.readdir(teamsDir(env), { withFileTypes: true })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
  const names = entries.filter((e) => e.isDirectory() && isValidName(e.name)).map((e) => e.name)
  names.sort()
  return Promise.all(
    names.map(async (name) => {
      try {
        return { name, team: await readTeam(name, env) }
      } catch (err) {
        if (!(err instanceof SwarmError)) throw err
        return { name, error: err instanceof NotFoundError ? 'no config.json' : err.message }
      }
    }),
  )
}

/**
 * Read-modify-write of a team's config under its own lock (`config.json.lock`, the lock Claude
 * Code takes too), written atomically. `mutate` may change the draft in place or return a new
 * one; the result is validated before it is written. A corrupt config is moved aside and
 * reported (CorruptFileError with movedTo), never overwritten.
 */
export async function updateTeam(team: string, mutate: (t: TeamFile) => TeamFile | void | Promise<TeamFile | void>, env?: Env): Promise<TeamFile> {
  const file = teamConfigPath(team, env)
  // Checked before locking: taking the lock would create the team directory as a side effect.
  if (!(await pathExists(file))) throw teamNotFound(team)
  return withFileLock(file, async () => {
    const current = await readJsonForWrite(file, TeamFile)
    if (!current) throw teamNotFound(team)
    const draft = structuredClone(current)
    const next = (await mutate(draft)) ?? draft
    const checked = TeamFile.safeParse(next)
    if (!checked.success) {
      throw new SwarmError('SWARM_INTERNAL', `refusing to write an invalid config for team ${team}: ${checked.error.message}`)
    }
    await atomicWriteJson(file, checked.data)
    return checked.data
  })
}

export async function getMember(team: string, name: string, env?: Env): Promise<TeamMember> {
  validateAgentName(name)
  return findMember(await readTeam(team, env), name)
}

/** Adds a teammate (colour from the palette). ConflictError SWARM_MEMBER_EXISTS if the name is taken. */
export async function addMember(team: string, m: NewMember, env?: Env): Promise<TeamMember> {
  validateAgentName(m.name)
  let added: TeamMember | undefined
  await updateTeam(
    team,
    (t) => {
      if (t.members.some((x) => x.name === m.name)) {
        throw new ConflictError('SWARM_MEMBER_EXISTS', `team ${team} already has a member named ${JSON.stringify(m.name)}`, {
          hint: 'pick another name',
        })
      }
      const lead = t.members.find((x) => x.name === LEAD_NAME)
      added = buildMember(
        t.name,
        m,
        lead?.cwd ?? process.cwd(),
        Date.now(),
        t.members.map((x) => x.color),
      )
      t.members.push(added)
    },
    env,
  )
  return added!
}

/** Shallow-merges `patch` into a member. Its name and agentId cannot change. */
export async function updateMember(team: string, name: string, patch: Partial<TeamMember>, env?: Env): Promise<TeamMember> {
  validateAgentName(name)
  if ((patch.name !== undefined && patch.name !== name) || (patch.agentId !== undefined && patch.agentId !== agentId(name, team))) {
    throw new UsageError(`a member's name and agentId cannot be changed (member ${name})`)
  }
  let updated: TeamMember | undefined
  await updateTeam(
    team,
    (t) => {
      const i = t.members.findIndex((x) => x.name === name)
      if (i < 0) throw memberNotFound(t, name)
      updated = { ...t.members[i], ...patch }
      t.members[i] = updated
    },
    env,
  )
  return updated!
}

/** Removes a teammate (never the lead) from the roster; `removeFromRoster` (tasks/roster.ts) also releases its tasks. */
export async function removeMember(team: string, name: string, env?: Env): Promise<void> {
  validateAgentName(name)
  if (name === LEAD_NAME) throw new UsageError(`the lead (${LEAD_NAME}) cannot be removed from a team`, { hint: 'delete the team instead' })
  await updateTeam(
    team,
    (t) => {
      const i = t.members.findIndex((x) => x.name === name)
      if (i < 0) throw memberNotFound(t, name)
      t.members.splice(i, 1)
    },
    env,
  )
}

/** Removes `teams/<team>`, `tasks/<team>` and `scratchpad/<team>`. Stops nothing. */
export async function deleteTeamFiles(team: string, env?: Env): Promise<void> {
  const dirs = [teamDir(team, env), tasksDir(team, env), scratchpadDir(team, env)]
  for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
}

function buildMember(team: string, m: NewMember, defaultCwd: string, joinedAt: number, usedColors: Array<string | undefined>): TeamMember {
  return TeamMember.parse({
    agentId: agentId(m.name, team),
    name: m.name,
    agentType: m.agentType ?? DEFAULT_AGENT_TYPE,
    ...(m.model !== undefined && { model: m.model }),
    ...(m.prompt !== undefined && { prompt: m.prompt }),
    color: m.color ?? pickColor(usedColors),
    ...(m.planModeRequired !== undefined && { planModeRequired: m.planModeRequired }),
    joinedAt,
    tmuxPaneId: m.tmuxPaneId ?? '',
    cwd: m.cwd ?? defaultCwd,
    subscriptions: [],
    ...(m.backendType !== undefined && { backendType: m.backendType }),
    ...(m.isActive !== undefined && { isActive: m.isActive }),
    ...(m.mode !== undefined && { mode: m.mode }),
    ...(m.worktree !== undefined && { worktree: m.worktree }),
  })
}

/** Finds a member by name (or by agentId). NotFoundError listing the members otherwise. */
export function findMember(team: TeamFile, name: string): TeamMember {
  const m = team.members.find((x) => x.name === name || x.agentId === name)
  if (!m) throw memberNotFound(team, name)
  return m
}

function memberNotFound(team: TeamFile, name: string): NotFoundError {
  return new NotFoundError(`${JSON.stringify(name)} is not a member of team ${team.name}`, {
    hint: `members: ${team.members.map((m) => m.name).join(', ')}`,
  })
}

function teamNotFound(team: string): NotFoundError {
  return new NotFoundError(`no team named ${JSON.stringify(team)}`, { hint: 'see "swarm team list"' })
}

function isValidName(name: string): boolean {
  try {
    validateName(name)
    return true
  } catch {
    return false // stray entries (".DS_Store", editors' temp dirs) are not teams
  }
}
