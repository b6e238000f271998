/**
 * What a sandboxed process sees, planned from paths: the directories it may write (existing,
 * physical), the protected paths inside them made read-only, what is hidden or masked, and the
 * terminal servers' sockets it must not reach. Shared by the per-call Bash sandbox and the
 * whole-process sandbox of an agent-CLI teammate.
 */
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { pidExists } from '../process/liveness.js'
import { gitHooksDir } from './git-hooks.js'
import { existingProtectedPaths, mountRuleReadOnly, protectedPart } from './protected.js'
import type { SandboxConfig } from './sandbox-settings.js'
import type { SandboxPlan } from './types.js'
import { isDirectorySync } from '../util/fs.js'

export interface ViewInput {
  cwd: string
  /** Writable besides the cwd and `tmp`. */
  writable: readonly string[]
  readOnly: readonly string[]
  hidden: readonly string[]
  /** Directories replaced by an empty tmpfs under which writable directories are bound again. */
  masked?: readonly string[]
  /**
   * Directories whose `.git` and `.claude` are read-only whatever their depth: every member's
   * worktree, from the team's roster and worktree records (mount rule, not scan).
   */
  protectedRoots?: readonly string[]
  config: SandboxConfig
  /** The private TMPDIR. */
  tmp: string
  env: NodeJS.ProcessEnv
}

export type View = Omit<SandboxPlan, 'command' | 'network'> & {
  /** The protected paths that existed before, each with its identity (the rest are moved aside when it ends). */
  before: ReadonlyMap<string, string>
}

export async function planView(i: ViewInput): Promise<View> {
  // Git's hooks wherever core.hooksPath puts them (`.husky` in the tree): the user's next commit runs them.
  const hooks = await gitHooksDir(i.cwd, i.env)
  const writable = unique([i.cwd, ...i.writable, ...i.config.allowWrite, i.tmp].map(physical).filter(isDirectorySync))
  const found = writable.flatMap((d) => (protectedPart(d) ? [d] : existingProtectedPaths(d)))
  const before = new Map(found.map((p) => [p, identity(p)]))
  const rule = mountRuleReadOnly(writable, (i.protectedRoots ?? []).map(physical))
  const readOnly = unique([...found, ...rule.gitPaths, ...(hooks ? [hooks] : []), ...i.readOnly, ...i.config.denyWrite].map(physical)).filter(exists)
  // Each writable directory's and member's `.claude/` read-only whole; a writable one beneath (the
  // member's own worktree in `<repo>/.claude/worktrees/`) is bound again on top.
  const shadowed = rule.configDirs.filter(isDirectorySync)
  const hidden = unique([...i.hidden, ...i.config.denyRead, ...terminalSockets(i.env)].map(physical)).filter(exists)
  const masked = unique((i.masked ?? []).map(physical)).filter(isDirectorySync)
  return {
    cwd: physical(i.cwd),
    writable,
    readOnly,
    hidden,
    ...(shadowed.length && { shadowed }),
    ...(masked.length && { masked }),
    setenv: { TMPDIR: i.tmp, SWARM_SANDBOX: '1' },
    before,
  }
}

/**
 * The sockets of terminal servers a sandboxed process could drive from outside the sandbox
 * (`tmux run-shell` runs in the server): the tmux socket of this pane, and the default socket
 * directories. A `tmux-<uid>` directory is hidden whole; a socket elsewhere by itself.
 */
export function terminalSockets(env: NodeJS.ProcessEnv): string[] {
  const uid = process.getuid?.() ?? 0
  // SWARM_TMUX_SOCKET is a socket name (`tmux -L`): in the tmux-<uid> directories below.
  const sockets = [env.TMUX?.split(',')[0]].filter((s): s is string => Boolean(s) && path.isAbsolute(s as string))
  const dirs = [path.join(env.TMUX_TMPDIR || '/tmp', `tmux-${uid}`), path.join('/tmp', `tmux-${uid}`)]
  for (const s of sockets) dirs.push(/^tmux-\d+$/.test(path.basename(path.dirname(s))) ? path.dirname(s) : s)
  return unique(dirs)
}

/** `swarm-sandbox-<label>-<pid>-XXXXXX`: the pid says whose it is once its agent is gone. */
const PRIVATE_TMP = /^swarm-sandbox-.+-(\d+)-[A-Za-z0-9]{6}$/

/**
 * A private TMPDIR. A process killed with SIGKILL cannot remove its own, so each new one first
 * removes those whose owner is no longer running.
 */
export async function makePrivateTmp(label: string): Promise<string> {
  await removeOrphanedPrivateTmps()
  return fsp.mkdtemp(path.join(os.tmpdir(), `swarm-sandbox-${label}-${process.pid}-`))
}

/**
 * Removes the private TMPDIRs whose owner is no longer running — when a new one is made, and when
 * a sandbox closes (a member that never ran a command after its killed predecessor made none).
 */
export async function removeOrphanedPrivateTmps(): Promise<void> {
  const tmp = os.tmpdir()
  for (const name of await fsp.readdir(tmp).catch(() => [] as string[])) {
    const pid = Number(PRIVATE_TMP.exec(name)?.[1])
    if (!pid || pid === process.pid || pidExists(pid)) continue
    // Another user's, or removed meanwhile by another agent's sweep: not ours to insist on.
    await fsp.rm(path.join(tmp, name), { recursive: true, force: true }).catch(() => undefined)
  }
}

/**
 * Protected paths under `writable` that were not there before — or are not the same file any more:
 * a read-only one is moved away with its parent and another planted at its path — renamed to
 * `<name>.blocked-by-swarm-<time>` (kept, never deleted; the new name is not protected).
 */
export async function moveAsideCreated(writable: readonly string[], before: ReadonlyMap<string, string>): Promise<string[]> {
  const moved: string[] = []
  for (const p of writable.flatMap((d) => existingProtectedPaths(d))) {
    if (before.get(p) === identity(p)) continue
    const aside = `${p}.blocked-by-swarm-${Date.now()}`
    await fsp.rename(p, aside)
    moved.push(`${p} → ${aside}`)
  }
  return moved
}

/** Device and inode of `p` itself (a symlink is not followed); '' when it is gone. */
function identity(p: string): string {
  try {
    const st = fs.lstatSync(p)
    return `${st.dev}:${st.ino}`
  } catch {
    return ''
  }
}

export function physical(p: string): string {
  try {
    return fs.realpathSync(p)
  } catch {
    return path.resolve(p)
  }
}
export function exists(p: string): boolean {
  try {
    fs.statSync(p)
    return true
  } catch {
    return false
  }
}
function unique(list: string[]): string[] {
  return [...new Set(list)]
}
