import os from 'node:os'
import path from 'node:path'
import { rootDir as stateRoot, tasksRootDir, teamsDir } from '../../home/paths.js'
import { isWithin } from './rule-paths.js'
import { dirForms } from './physical-path.js'

/**
 * The control plane (`<root>/teams`, `<root>/tasks`) is written by swarm only. These helpers
 * answer "does this tool call reach it?" for file paths and, heuristically, for shell commands.
 */

/** What evaluatePermission needs to keep teammates out of swarm's own state; spread it into a query. */
export interface ControlPlaneOptions {
  controlPlaneDirs: string[]
  rootDir: string
  protectedPaths: string[]
}

/**
 * The control-plane directories for `env`, and the settings and agent-definition paths a
 * teammate could edit to raise its own rights (user settings, the project's `.claude/settings*.json`
 * and `.claude/agents`, the user's agent definitions).
 */
export function controlPlaneOptions(cwd: string, env: NodeJS.ProcessEnv = process.env): ControlPlaneOptions {
  const root = stateRoot(env)
  return {
    controlPlaneDirs: [teamsDir(env), tasksRootDir(env)],
    rootDir: root,
    protectedPaths: [
      path.join(root, 'settings.json'),
      path.join(root, 'agents'),
      // Adapter files (what a CLI teammate runs, how its permissions are answered) and their config dirs (hooks).
      path.join(root, 'swarm-agents'),
      path.join(root, 'agent-homes'),
      path.join(cwd, '.claude', 'settings.json'),
      path.join(cwd, '.claude', 'settings.local.json'),
      path.join(cwd, '.claude', 'agents'),
    ],
  }
}

/** Every lexical and physical form of `dirs`. */
export function allDirForms(dirs: readonly string[]): string[] {
  return [...new Set(dirs.flatMap((d) => dirForms(d)))]
}

export interface MentionContext {
  controlPlaneDirs: readonly string[]
  rootDir?: string
  cwd: string
  home?: string
}

const ENV_NEEDLES = ['$SWARM_HOME', '${SWARM_HOME', '$CLAUDE_CONFIG_DIR', '${CLAUDE_CONFIG_DIR', '.claude/teams', '.claude/tasks']

/**
 * Returns what a shell command mentions of the control plane (a path, `~/.claude/teams`,
 * `$SWARM_HOME`, …), or undefined. A string heuristic: it catches what a prompt-injected or
 * careless command writes plainly, not a command built to hide (`/tm?/x/te*`); such commands are
 * still never auto-allowed by rules below `bypassPermissions`.
 */
export function bashMentionsControlPlane(command: string, ctx: MentionContext): string | undefined {
  const home = ctx.home ?? os.homedir()
  const dirs = [...ctx.controlPlaneDirs, ...(ctx.rootDir ? [ctx.rootDir] : [])]
  const needles = new Set<string>(ENV_NEEDLES)
  const homeForms = dirForms(home)
  for (const form of allDirForms(dirs)) {
    needles.add(form)
    for (const h of homeForms) {
      if (!isWithin(form, h) || form === h) continue
      const rel = path.relative(h, form)
      needles.add(`~/${rel}`)
      needles.add(`$HOME/${rel}`)
      needles.add(`\${HOME}/${rel}`)
    }
  }
  // Quotes and backslashes split words without changing them: "$HOME"/.claude is $HOME/.claude.
  const variants = [command, command.replace(/["'\\]/g, '')]
  for (const needle of needles) {
    const re = new RegExp(escapeRegex(needle) + '(?![A-Za-z0-9._-])')
    if (variants.some((v) => re.test(v))) return needle
  }
  if (ctx.rootDir && allDirForms([ctx.rootDir]).some((r) => isWithin(ctx.cwd, r))) {
    // From inside the state root, `../teams` or a bare `teams` reaches the control plane.
    if (/\.\.|\bteams\b|\btasks\b/.test(command)) return `a relative path from ${ctx.cwd}`
  }
  return undefined
}

/** A mention of the project's settings or agent definitions in a shell command. */
export function bashMentionsProtected(command: string): string | undefined {
  const stripped = command.replace(/["'\\]/g, '')
  const m = /\.claude\/(settings(\.local)?\.json|agents)\b/.exec(stripped)
  return m ? m[0] : undefined
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
