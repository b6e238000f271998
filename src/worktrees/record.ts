import { createHash } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { errorMessage } from '../errors.js'
import { rootDir, validateName } from '../home/paths.js'
import { atomicWriteJson, ensureDir, readJsonFile } from '../util/fs.js'
import type { Env } from '../home/env.js'

/**
 * What swarm remembers of a worktree it made, in `<root>/worktrees/<team>/<slug>-<repo hash>.json`.
 * Kept outside `teams/<team>/` on purpose: it outlives `team delete` (a kept worktree stays
 * listed, also for a later team of the same name) and goes only when the worktree does.
 */
export const WorktreeRecord = z.looseObject({
  team: z.string(),
  /** The teammate (or one-off subagent) it was made for. */
  name: z.string(),
  slug: z.string(),
  /** The top of the main working tree. */
  repo: z.string(),
  /** Its directory; on `host` when there is one (a path there, never looked at here). */
  path: z.string(),
  branch: z.string(),
  /** HEAD of the main tree when the worktree was made: commits beyond it are the teammate's. */
  baseRef: z.string(),
  /** Where in the tree the teammate starts: the subdirectory the lead was in ('' for the top). */
  subdir: z.string().default(''),
  /** Paths (relative to the tree) symlinked to the main tree's ignored directories. */
  links: z.array(z.string()).default([]),
  createdAt: z.number(),
  /**
   * The machine it lives on (`user@host[:port]`, `spawn --host --worktree`): its branch is made
   * there from `repo`'s HEAD and comes back into `repo` by `git fetch` (worktrees/host-worktree.ts).
   */
  host: z.string().optional(),
})
export type WorktreeRecord = z.infer<typeof WorktreeRecord>

export function worktreeRecordsDir(team: string, env?: Env): string {
  return path.join(rootDir(env), 'worktrees', validateName(team))
}

function repoHash(repo: string): string {
  return createHash('sha256').update(repo).digest('hex').slice(0, 8)
}

function recordFile(rec: Pick<WorktreeRecord, 'team' | 'slug' | 'repo'>, env?: Env): string {
  return path.join(worktreeRecordsDir(rec.team, env), `${rec.slug}-${repoHash(rec.repo)}.json`)
}

/** The file whose lock serializes worktree creation in one repository (`<root>/worktrees/.create-<repo hash>`). */
export function creationLockFile(repo: string, env?: Env): string {
  return path.join(rootDir(env), 'worktrees', `.create-${repoHash(repo)}`)
}

export async function writeWorktreeRecord(rec: WorktreeRecord, env?: Env): Promise<void> {
  const file = recordFile(rec, env)
  await ensureDir(path.dirname(file))
  await atomicWriteJson(file, rec)
}

export async function deleteWorktreeRecord(rec: Pick<WorktreeRecord, 'team' | 'slug' | 'repo'>, env?: Env): Promise<void> {
  await fs.rm(recordFile(rec, env), { force: true })
  await fs.rmdir(worktreeRecordsDir(rec.team, env)).catch(() => undefined) // only when it is empty
}

/** Every record of `team`; an unreadable one is named in `problems` (and left where it is). */
export async function readWorktreeRecords(team: string, env?: Env): Promise<{ records: WorktreeRecord[]; problems: string[] }> {
  const dir = worktreeRecordsDir(team, env)
  const names = await fs.readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[]
    throw err
  })
  const records: WorktreeRecord[] = []
  const problems: string[] = []
  for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
    try {
      const rec = await readJsonFile(path.join(dir, name), WorktreeRecord)
      if (rec) records.push(rec)
    } catch (err) {
      problems.push(errorMessage(err))
    }
  }
  return { records, problems }
}

/** Teams that have records (for `swarm worktrees prune` without a team). */
export async function teamsWithWorktreeRecords(env?: Env): Promise<string[]> {
  const dir = path.join(rootDir(env), 'worktrees')
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => [])
  return entries
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort()
}
