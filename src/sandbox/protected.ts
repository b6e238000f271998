import fs from 'node:fs'
import path from 'node:path'

/**
 * Protected paths: files and directories through which a write turns into code that runs later
 * (git hooks and config, editor tasks, MCP servers, shell start-up files). A write to one is asked
 * in every mode; inside the Bash sandbox they are read-only. Matched by name at any depth.
 */

/** Names protected with everything beneath them. */
export const PROTECTED_DIRS: readonly string[] = ['.git', '.vscode', '.idea']
/** File names protected wherever they are. */
export const PROTECTED_FILES: readonly string[] = [
  '.gitmodules',
  '.gitconfig',
  '.mcp.json',
  '.bashrc',
  '.bash_profile',
  '.zshrc',
  '.zprofile',
  '.profile',
  '.ripgreprc',
  // opencode's project config: its permissions, MCP servers and plugins.
  'opencode.json',
  'opencode.jsonc',
]
/**
 * Inside swarm's own project config directory: its settings, agent definitions and adapter files.
 * The agent CLIs' directories are added by the adapter registry (installAgentConfigDirs).
 */
const SWARM_INSIDE: Readonly<Record<string, readonly string[]>> = {
  '.claude': ['settings.json', 'settings.local.json', 'agents', 'swarm-agents'],
}

/**
 * Each agent CLI's project config directory → what inside it makes the CLI run something or grant
 * itself more (hooks, policies, extensions, plugins). Derived from the adapters' descriptors and
 * installed by the adapter registry when it loads (sandbox/ sits below adapters/ and cannot read
 * it); undefined until then, and every reader throws rather than protect a partial list.
 */
let inside: Map<string, Set<string>> | undefined

/** Adds agent CLIs' config dirs (the registry's built-ins at load, then each adapter it registers). */
export function installAgentConfigDirs(dirs: Readonly<Record<string, readonly string[]>>): void {
  inside ??= new Map(Object.entries(SWARM_INSIDE).map(([d, names]) => [d, new Set(names)]))
  for (const [dir, names] of Object.entries(dirs)) {
    const key = dir.toLowerCase()
    const set = inside.get(key) ?? new Set<string>()
    for (const n of names) set.add(n.toLowerCase())
    inside.set(key, set)
  }
}

/** Every protected config directory (`.claude`, `.gemini`…) with what inside it is protected. */
export function protectedInside(): ReadonlyMap<string, ReadonlySet<string>> {
  if (!inside)
    throw new Error("swarm: the agent CLIs' protected config directories were never installed (src/adapters/registry.ts installs them when it loads)")
  return inside
}

function isProtectedName(name: string, parent: string): boolean {
  return PROTECTED_DIRS.includes(name) || PROTECTED_FILES.includes(name) || protectedInside().get(parent)?.has(name) === true
}

/**
 * The protected part of absolute `p` ("/repo/.git", "/repo/.claude/agents"), or undefined.
 * Case-insensitive: on macOS `.GIT/config` is `.git/config`.
 */
export function protectedPart(p: string): string | undefined {
  const parts = path.resolve(p).split(path.sep)
  for (let i = 1; i < parts.length; i++) {
    if (isProtectedName(parts[i].toLowerCase(), parts[i - 1].toLowerCase())) return parts.slice(0, i + 1).join(path.sep) || path.sep
  }
  return undefined
}

/** A project's agent config directory: protected whole (see configDirPart), its `worktrees/` excepted. */
export const PROJECT_CONFIG_DIR = '.claude'
/** Where swarm (and Claude Code) put a repository's worktrees, inside its config directory. */
export const WORKTREES_SUBDIR = 'worktrees'

/**
 * The project config directory that absolute `p` lies in ("/repo/.claude"), or undefined: edits
 * anywhere beneath one are asked in every mode (hooks, skills and the programs settings run live
 * there). A `.claude/worktrees/<slug>/…` path is a worktree, a project of its own: its own
 * `.claude` counts, the outer one does not. `exempt` lists `.claude` directories that are not a
 * project's (swarm's state root `~/.claude`, whose control plane and settings are guarded apart).
 */
export function configDirPart(p: string, exempt: readonly string[] = []): string | undefined {
  const parts = path.resolve(p).split(path.sep)
  const skip = new Set(exempt.map((e) => path.resolve(e).toLowerCase()))
  let found: string | undefined
  for (let i = 1; i < parts.length; i++) {
    if (parts[i].toLowerCase() !== PROJECT_CONFIG_DIR) continue
    const dir = parts.slice(0, i + 1).join(path.sep)
    if (skip.has(dir.toLowerCase())) continue
    // `.claude/worktrees/<slug>/…`: look on inside the worktree.
    if (parts[i + 1]?.toLowerCase() === WORKTREES_SUBDIR && parts.length > i + 3) continue
    found ??= dir
  }
  return found
}

/**
 * The mount rule, not a scan: what is read-only whatever its depth — the `.claude/` of each
 * writable directory and of each member's worktree (`memberRoots`: the team's roster and worktree
 * records), and each member worktree's `.git`. `<repo>/.claude/worktrees/` is inside the first, so
 * another member's worktree is read-only whole; a writable directory beneath one (the member's own
 * worktree) stays writable, the deepest rule deciding. The one list every sandbox plans from:
 * swarm's bwrap view (view.ts) and Codex's permission profile (adapters/codex.ts).
 */
export function mountRuleReadOnly(writable: readonly string[], memberRoots: readonly string[]): { configDirs: string[]; gitPaths: string[] } {
  return {
    configDirs: [...new Set([...writable, ...memberRoots].map((d) => path.join(d, PROJECT_CONFIG_DIR)))],
    gitPaths: [...new Set(memberRoots.map((r) => path.join(r, '.git')))],
  }
}

/** How deep below a writable root the sandbox looks for protected paths that exist. */
export const PROTECTED_SCAN_DEPTH = 3
/** Directories never descended into by that scan (large, and git never reads config from them). */
const SKIP_DIRS = new Set(['node_modules', '.cache', 'dist', 'build', 'target', 'vendor'])

/**
 * The protected paths that exist under `root` (to depth PROTECTED_SCAN_DEPTH), for the sandbox to
 * mount read-only. Symlinks are not followed: the mount covers the link's own path, and a link
 * pointing out of the root points at something the sandbox does not make writable anyway.
 */
export function existingProtectedPaths(root: string, depth = PROTECTED_SCAN_DEPTH): string[] {
  const out: string[] = []
  const configDirs = protectedInside()
  const walk = (dir: string, level: number, parent: string) => {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return // unreadable or gone: nothing to protect there
    }
    for (const e of entries) {
      const name = e.name.toLowerCase()
      const full = path.join(dir, e.name)
      if (isProtectedName(name, parent)) {
        out.push(full)
        continue
      }
      // An agent's config directory is looked into at any level the scan reaches: what it protects sits one below.
      if (!e.isDirectory() || (level >= depth && !configDirs.has(name)) || SKIP_DIRS.has(name)) continue
      walk(full, level + 1, name)
    }
  }
  walk(root, 1, path.basename(root).toLowerCase())
  return out
}
