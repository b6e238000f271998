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
 * Inside an agent's config directory: what makes it run something or grant itself more — Claude
 * Code's settings, agent definitions, commands and swarm's adapter files; the hooks, policies,
 * extensions and plugins of Gemini CLI, Qwen Code, Codex, opencode and pi.
 */
export const PROTECTED_INSIDE: Readonly<Record<string, readonly string[]>> = {
  '.claude': ['settings.json', 'settings.local.json', 'agents', 'commands', 'swarm-agents'],
  '.gemini': ['settings.json', 'extensions', 'policies', 'commands'],
  '.qwen': ['settings.json', 'extensions', 'agents', 'commands', 'skills', 'hooks'],
  '.codex': ['config.toml', 'hooks.json'],
  '.opencode': ['opencode.json', 'opencode.jsonc', 'plugin', 'plugins', 'agent', 'command', 'tool'],
  '.pi': ['settings.json', 'extensions'],
}

function isProtectedName(name: string, parent: string): boolean {
  return (
    PROTECTED_DIRS.includes(name) ||
    PROTECTED_FILES.includes(name) ||
    (Object.hasOwn(PROTECTED_INSIDE, parent) && PROTECTED_INSIDE[parent].includes(name))
  )
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
      if (!e.isDirectory() || (level >= depth && !Object.hasOwn(PROTECTED_INSIDE, name)) || SKIP_DIRS.has(name)) continue
      walk(full, level + 1, name)
    }
  }
  walk(root, 1, path.basename(root).toLowerCase())
  return out
}
