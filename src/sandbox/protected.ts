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
]
/** Inside a `.claude` directory: settings, agent definitions, commands and swarm's adapter files. */
export const PROTECTED_CLAUDE: readonly string[] = ['settings.json', 'settings.local.json', 'agents', 'commands', 'swarm-agents']

/**
 * The protected part of absolute `p` ("/repo/.git", "/repo/.claude/agents"), or undefined.
 * Case-insensitive: on macOS `.GIT/config` is `.git/config`.
 */
export function protectedPart(p: string): string | undefined {
  const parts = path.resolve(p).split(path.sep)
  for (let i = 1; i < parts.length; i++) {
    const name = parts[i].toLowerCase()
    const prev = parts[i - 1].toLowerCase()
    const hit = PROTECTED_DIRS.includes(name) || PROTECTED_FILES.includes(name) || (prev === '.claude' && PROTECTED_CLAUDE.includes(name))
    if (hit) return parts.slice(0, i + 1).join(path.sep) || path.sep
  }
  return undefined
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
  const walk = (dir: string, level: number, inClaude: boolean) => {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return // unreadable or gone: nothing to protect there
    }
    for (const e of entries) {
      const name = e.name.toLowerCase()
      const full = path.join(dir, e.name)
      if (PROTECTED_DIRS.includes(name) || PROTECTED_FILES.includes(name) || (inClaude && PROTECTED_CLAUDE.includes(name))) {
        out.push(full)
        continue
      }
      // A .claude directory is looked into at any level the scan reaches: what it protects sits one below.
      if (!e.isDirectory() || (level >= depth && name !== '.claude') || SKIP_DIRS.has(name)) continue
      walk(full, level + 1, name === '.claude')
    }
  }
  walk(root, 1, path.basename(root).toLowerCase() === '.claude')
  return out
}
