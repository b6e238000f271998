import path from 'node:path'
import type { WorktreeRecord } from './record.js'
import { readWorktreeRecords } from './record.js'
import type { Env } from '../home/env.js'

/**
 * What an agent working in a worktree is told (in its system prompt): where it is, that paths
 * pointing into the main checkout must be translated, and that its changes stay on its branch.
 */
export function worktreeNotice(w: Pick<WorktreeRecord, 'path' | 'branch' | 'repo' | 'baseRef' | 'links'>): string {
  const shared = w.links.length
    ? [
        `These directories are symlinks to the main checkout's and SHARED with it and with other teammates: ${w.links.join(', ')}. Use them as they are; never install into them, delete or rebuild them from here.`,
      ]
    : []
  return [
    '# Worktree',
    `You work in a git worktree of your own: ${w.path}, on branch ${w.branch}, made from commit ${w.baseRef.slice(0, 12)} of the repository whose main checkout is ${w.repo}.`,
    `Paths in your instructions or in messages that point into the main checkout (${w.repo}/…) name files of that other checkout: translate them to the same relative path under ${w.path}/ and work there.`,
    'Your changes are isolated from the main checkout and from other teammates. Commit your work on your branch when it is done; the lead decides what to merge. Never delete or force-reset the branch.',
    ...shared,
  ].join('\n')
}

/** The record of the worktree containing `cwd`, if swarm made one there for `team`. */
export async function findWorktreeRecord(team: string, cwd: string, env: Env): Promise<WorktreeRecord | undefined> {
  const { records } = await readWorktreeRecords(team, env)
  return records.find((r) => r.path === cwd || cwd.startsWith(`${r.path}${path.sep}`))
}
