import fs from 'node:fs/promises'
import { ConflictError, CorruptFileError, NotFoundError, SwarmError, UsageError } from '../errors.js'
import { atomicWriteJson, ensureDir, OWN_FILE, parseJsonFile, pathExists, readFileIfExists, readJsonForWrite } from '../util/fs.js'
import { isSymlinkRefusal } from '../util/fs-errors.js'
import { withFileLock } from '../util/lock.js'
import { ParsedFileCache } from '../util/parsed-file-cache.js'
import { deepFreeze } from '../util/object.js'
import { pickColor } from '../home/colors.js'
import { archivePath } from '../mailbox/archive.js'
import { spoolDir } from '../mailbox/spool.js'
import {
  agentDir,
  agentHomeDir,
  agentHomesDir,
  agentId,
  inboxesDir,
  inboxPath,
  LEAD_NAME,
  scratchpadDir,
  sentDir,
  sentLogPath,
  tasksDir,
  teamConfigPath,
  teamDir,
  teamsDir,
  validateAgentName,
  validateName,
} from '../home/paths.js'
import { TeamFile, TeamMember } from './types.js'
import type { Env } from '../home/env.js'

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
  maxCostUsd?: number
  maxTokens?: number
  /** The agent CLI adapter it runs (absent: swarm's own agent). */
  agent?: string
  /** Its adapter consumes its own inbox (TeamMember.ownsInbox). */
  ownsInbox?: boolean
  /** Another machine it runs on (TeamMember.host). */
  host?: string
  /** In a host's mirror: it lives on another machine (TeamMember.elsewhere). */
  elsewhere?: boolean
}

export interface NewTeam {
  name: string
  description?: string
  /** Working directory of the lead and the default for teammates; defaults to process.cwd(). */
  cwd?: string
  /** Teammates (a `team-lead` entry here only adds details to the lead). */
  members?: NewMember[]
  leadSessionId?: string
  /** The team's spending limit, all members together. */
  budget?: { maxCostUsd?: number; maxTokens?: number }
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
    ...(input.budget !== undefined && { budget: input.budget }),
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
  return structuredClone(await readTeamShared(team, env)) // the parse is shared (configs): each caller gets its own copy
}

/**
 * readTeam without the copy, for a caller that only looks (a budget check, a message's
 * addressing — each turn of each teammate): the parse every reader in this process shares,
 * frozen, so that changing it throws instead of changing it for all.
 */
export async function readTeamShared(team: string, env?: Env): Promise<TeamFile> {
  const parsed = await settled(() => readConfig(teamConfigPath(team, env)))
  if (!parsed) throw teamNotFound(team)
  return parsed
}

/**
 * Configs as last parsed, while their file is unchanged: a team of 64 in one process reads its
 * config at every start and turn, and writes it seldom. Every read still looks at the file.
 */
const configs = new ParsedFileCache<TeamFile>()

/**
 * config.json as JSON (parsed again only when it changed, see configs), tolerating one artefact of Claude Code 2.1.332, which rewrites the file in
 * place without truncating: a shorter config (isActive true after false) leaves the old tail's last
 * braces behind (`…\n}}`). Only such a remnant — closing brackets and whitespace after a complete
 * value — is ignored; anything else is corrupt as before.
 */
function readConfig(file: string): Promise<TeamFile | undefined> {
  return configs.read(
    file,
    () => readFileIfExists(file, OWN_FILE),
    (text) => deepFreeze(parseConfig(file, text)),
  )
}

function parseConfig(file: string, text: string): TeamFile {
  const remnant = /^([\s\S]*?\n\})[\s\]}]+$/.exec(text)
  if (remnant) {
    try {
      JSON.parse(text)
    } catch {
      const head = remnant[1]!
      if (isJson(head)) return parseJsonFile(file, head, TeamFile)
    }
  }
  return parseJsonFile(file, text, TeamFile)
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** How long a config that does not parse is re-read before it counts as corrupt. */
const TORN_READ_RETRIES = 5
const TORN_READ_DELAY_MS = 20

/**
 * Claude Code 2.1.332 rewrites config.json in place (measured: a reader saw the new content
 * followed by the tail of the old), so a parse error may be a write in progress: read again a
 * few times before calling the file corrupt — and only then move it aside.
 */
async function settled<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read()
    } catch (err) {
      if (!(err instanceof CorruptFileError) || isSymlinkRefusal(err) || attempt >= TORN_READ_RETRIES) throw err
      await new Promise((r) => setTimeout(r, TORN_READ_DELAY_MS))
    }
  }
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
    // A torn read (Claude Code writing in place) is retried; only a file that stays corrupt is moved aside.
    const current = await settled(() => readConfig(file)).catch((err: unknown) => {
      if (err instanceof CorruptFileError) return readJsonForWrite(file, TeamFile, OWN_FILE)
      throw err
    })
    if (!current) throw teamNotFound(team)
    const draft = structuredClone(current) // never the shared parse itself
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

/** Removes `teams/<team>`, `tasks/<team>`, `scratchpad/<team>`, `swarm-sent/<team>` and `agent-homes/<team>`. Stops nothing. */
export async function deleteTeamFiles(team: string, env?: Env): Promise<void> {
  const dirs = [teamDir(team, env), tasksDir(team, env), scratchpadDir(team, env), sentDir(team, env), agentHomesDir(team, env)]
  for (const dir of dirs) await removeAll(dir)
}

/**
 * Removes what a teammate taken off the roster leaves (`kill --remove`): `agents/<name>/`, its
 * inbox (with its lock, spool and archive), its sent log and its agent home. Stops nothing.
 */
export async function deleteMemberFiles(team: string, name: string, env?: Env): Promise<void> {
  const inbox = inboxPath(team, validateAgentName(name), env)
  const paths = [
    agentDir(team, name, env),
    inbox,
    `${inbox}.lock`,
    spoolDir(inbox),
    archivePath(inbox),
    sentLogPath(team, name, env),
    agentHomeDir(team, name, env),
  ]
  for (const p of paths) await removeAll(p)
}

function removeAll(p: string): Promise<void> {
  return fs.rm(p, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
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
    ...(m.maxCostUsd !== undefined && { maxCostUsd: m.maxCostUsd }),
    ...(m.maxTokens !== undefined && { maxTokens: m.maxTokens }),
    ...(m.agent !== undefined && { agent: m.agent }),
    ...(m.ownsInbox === true && { ownsInbox: true }),
    ...(m.host !== undefined && { host: m.host }),
    ...(m.elsewhere === true && { elsewhere: true }),
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
