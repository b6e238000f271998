/**
 * `teams/<team>/agents/<name>/state.json`: a member's state as `swarm status` shows it. This module
 * is its only writer, whoever the process (swarm's agent, the leader, an agent CLI's wrapper or
 * hook processes): every update takes the file's lock, reads, merges and renames the whole file
 * into place, so concurrent writers lose nothing. No write ever brings a deleted team back.
 * Spending (`usage`, `costUsd`) is only ever added (`addMemberSpend`): every process that spends
 * for a member — its runtime, a `swarm batch` run — adds its requests, none overwrites another's.
 */
import path from 'node:path'
import { z } from 'zod'
import { CorruptFileError } from '../errors.js'
import { agentDir, teamConfigPath } from '../home/paths.js'
import { atomicWriteJson, OWN_FILE, pathExists, readJsonFile, readJsonForWrite } from '../util/fs.js'
import { withFileLock } from '../util/lock.js'
import type { Env } from '../home/env.js'

export const MemberStatus = z.enum(['starting', 'working', 'idle', 'waiting', 'exited', 'dead'])
export type MemberStatus = z.infer<typeof MemberStatus>

export const MemberState = z.looseObject({
  pid: z.number().optional(),
  status: MemberStatus,
  /** When `status` last changed (ms). */
  since: z.number().optional(),
  model: z.string().optional(),
  modelSource: z.string().optional(),
  mode: z.string().optional(),
  /** Set on every write. */
  heartbeat: z.number().optional(),
  lastActivity: z.number().optional(),
  currentTask: z.string().optional(),
  detail: z.string().optional(),
  exitCode: z.number().optional(),
  usage: z
    .object({
      inputTokens: z.number(),
      outputTokens: z.number(),
      cacheReadTokens: z.number(),
      cacheWriteTokens: z.number(),
      cacheWrite1hTokens: z.number().optional(),
    })
    .optional(),
  costUsd: z.number().optional(),
  /** The agent's spending limit, as raised so far. */
  budget: z.object({ maxCostUsd: z.number().optional(), maxTokens: z.number().optional() }).optional(),
  turns: z.number().optional(),
  /**
   * Context windows the API named (a 400 "prompt is too long: N tokens > M maximum"), by model:
   * kept across turns and runs so the member compacts in time (agent/compaction/thresholds.ts).
   */
  contextWindows: z.record(z.string(), z.number().int().positive()).optional(),
  /** An agent-CLI teammate: how its whole process tree runs (`sandboxed`, `unavailable`, `unsandboxed`). */
  sandbox: z.enum(['sandboxed', 'unavailable', 'unsandboxed']).optional(),
  /** A member on another machine: the host this record was relayed from (src/remote/link.ts). */
  host: z.string().optional(),
})
export type MemberState = z.infer<typeof MemberState>

/** Fields to set; a field given as `undefined` is removed. */
export type MemberStatePatch = { [K in keyof MemberState]?: MemberState[K] | undefined }

function memberStatePath(team: string, name: string, env?: Env): string {
  return path.join(agentDir(team, name, env), 'state.json')
}

/** The member's state; undefined when it has none. A corrupt file is a CorruptFileError. */
export async function readMemberState(team: string, name: string, env?: Env): Promise<MemberState | undefined> {
  return readJsonFile(memberStatePath(team, name, env), MemberState)
}

export interface MemberStateWrite {
  /**
   * The member is starting (or a hook speaks for it): `agents/<name>/` may be made. Without it a
   * member whose directory is gone (taken off the roster, its team deleted) is written nothing.
   */
  create?: boolean
  /** A new run of the member: the record starts from the patch alone instead of merging into it. */
  replace?: boolean
}

/** One update: the state it replaced (none, or replaced whole) and the state now on disk. */
export interface MemberStateChange {
  before: MemberState | undefined
  after: MemberState
}

/**
 * Merges `patch` into the member's state under the file's lock and writes it atomically; returns
 * the change, or undefined when nothing was written because the team (or, without `create`, the
 * member's directory) is gone. Stamps `heartbeat`, and `since` when the status changes.
 */
export async function updateMemberState(
  team: string,
  name: string,
  patch: MemberStatePatch | ((old: MemberState | undefined) => MemberStatePatch),
  env?: Env,
  write: MemberStateWrite = {},
): Promise<MemberStateChange | undefined> {
  const file = memberStatePath(team, name, env)
  // Checked before the lock too: taking it makes the directory, which must not come back.
  if (!(await writable(team, file, env, write))) return undefined
  return withFileLock(file, async () => {
    const old = write.replace ? undefined : await readForMerge(file)
    if (!(await writable(team, file, env, write))) return undefined // deleted while we waited
    const now = Date.now()
    if (typeof patch === 'function') patch = patch(old)
    const merged: Record<string, unknown> = { ...old, ...patch, heartbeat: now }
    const status = patch.status ?? old?.status
    if (!status) throw new Error(`${file}: the first state of ${name} must say its status`)
    if (patch.status !== undefined && patch.status !== old?.status) merged.since = now
    for (const [k, v] of Object.entries(merged)) if (v === undefined) delete merged[k]
    const next = MemberState.parse({ ...merged, status })
    await atomicWriteJson(file, next)
    return { before: old, after: next }
  })
}

export type MemberUsage = NonNullable<MemberState['usage']>

/** One model request's spend (or several), to add to what the member's record says. */
export interface MemberSpend {
  usage: MemberUsage
  costUsd: number
}

/**
 * Adds `spend` to the member's `usage` and `costUsd` under the file's lock (with `patch` merged in
 * the same write). With `create`, a member with no record yet gets one with `status` (the writer
 * says what it knows: a batch run for a lead that is not running says `exited`).
 */
export async function addMemberSpend(
  team: string,
  name: string,
  spend: MemberSpend,
  o: { env?: Env | undefined; patch?: MemberStatePatch; status?: MemberStatus; create?: boolean } = {},
): Promise<MemberStateChange | undefined> {
  return updateMemberState(
    team,
    name,
    (old) => ({
      ...(old ? {} : { status: o.status ?? 'exited' }),
      ...o.patch,
      usage: addUsageFields(old?.usage, spend.usage),
      costUsd: Math.round(((old?.costUsd ?? 0) + spend.costUsd) * 1_000_000) / 1_000_000,
    }),
    o.env,
    { create: o.create === true },
  )
}

function addUsageFields(a: MemberUsage | undefined, b: MemberUsage): MemberUsage {
  const long = (a?.cacheWrite1hTokens ?? 0) + (b.cacheWrite1hTokens ?? 0)
  return {
    inputTokens: (a?.inputTokens ?? 0) + b.inputTokens,
    outputTokens: (a?.outputTokens ?? 0) + b.outputTokens,
    cacheReadTokens: (a?.cacheReadTokens ?? 0) + b.cacheReadTokens,
    cacheWriteTokens: (a?.cacheWriteTokens ?? 0) + b.cacheWriteTokens,
    ...(long ? { cacheWrite1hTokens: long } : {}),
  }
}

/** The team still exists (its config.json), and so does the member's directory unless it may be made. */
async function writable(team: string, file: string, env: Env | undefined, write: MemberStateWrite): Promise<boolean> {
  if (!(await pathExists(teamConfigPath(team, env)))) return false
  return write.create === true || (await pathExists(path.dirname(file)))
}

/** What to merge into: a corrupt file is moved aside (kept) and the record starts afresh, as a crash-torn one would. */
async function readForMerge(file: string): Promise<MemberState | undefined> {
  try {
    return await readJsonForWrite(file, MemberState, OWN_FILE)
  } catch (err) {
    if (err instanceof CorruptFileError && err.movedTo) return undefined
    throw err
  }
}
