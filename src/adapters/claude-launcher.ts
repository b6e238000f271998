/**
 * `CLAUDE_CODE_PROCESS_WRAPPER=<swarm>/bin/swarm-claude-launcher.js`: Claude Code 2.1.332 starts each
 * of its self-spawns (split-pane teammates, background sessions) as `<launcher> <claude> <args…>`,
 * the variable still set; swarm starts its own Claude Code teammates the same way (claude.ts). This
 * runs that argv in swarm's whole-process sandbox, the runner an agent-CLI teammate runs in
 * (sandbox/process-sandbox.ts), with the view claudeSandboxView plans. Inside already (the marker
 * below), the argv runs as it is: the sandbox holds for the whole tree, in-process subagents included.
 */
import fs from 'node:fs'
import path from 'node:path'
import { teamWorktrees } from '../agent/member-sandbox.js'
import { LEAD_KEY_FILE, LEADER_SOCKET_DIR, agentHomeDir, agentHomesRoot, rootDir, sentRoot, validateName } from '../home/paths.js'
import { controlPlaneOptions } from '../permissions/rules/control-plane.js'
import { loadPermissionSettings } from '../permissions/rules/settings.js'
import { ignoreSignal, onStopSignal } from '../process/handlers.js'
import { shellExitCode, startInTerminal } from '../process/launch.js'
import { killTree } from '../process/tree.js'
import { confineProcess } from '../sandbox/process-sandbox.js'
import { readTeam } from '../teams/team-store.js'
import { ensureDir } from '../util/fs.js'
import { projectConfigDirsOf } from './registry.js'

/** Set inside the sandbox: a self-spawn of a confined Claude Code is confined already. */
export const CLAUDE_CONFINED_ENV = 'SWARM_CLAUDE_CONFINED'

/**
 * What in Claude Code's config dir turns a write into code or instructions that an unconfined
 * Claude Code (a user's lead) runs later: user settings (hooks), agents, commands, skills,
 * plugins, output styles, the user's CLAUDE.md. Read-only where they exist.
 */
const CONFIG_CODE = ['settings.json', 'agents', 'commands', 'skills', 'plugins', 'hooks', 'output-styles', 'CLAUDE.md']

/** The value after `flag` in Claude Code's argv (`--team-name T`), if any. */
function flagValue(argv: readonly string[], flag: string): string | undefined {
  const i = argv.indexOf(flag)
  return i >= 0 ? argv[i + 1] : undefined
}

/** A team or agent name from its argv that makes a path (validateName), else undefined: then none is assumed. */
function nameFlag(argv: readonly string[], flag: string, kind: 'team' | 'agent'): string | undefined {
  const value = flagValue(argv, flag)
  try {
    return value === undefined ? undefined : validateName(value, kind)
  } catch {
    return undefined // `../x` names no team directory: the view without a team (every lead.key hidden)
  }
}

export interface ClaudeView {
  writable: string[]
  readOnly: string[]
  hidden: string[]
  masked: string[]
  protectedRoots: string[]
}

/**
 * What a confined Claude Code (argv: its binary and arguments) sees, beyond what every confined
 * process does (root read-only, cwd writable, tmux sockets hidden). Its config dir and swarm's root
 * writable — its own session files and plans live there. Of the state roots' `teams/` and `tasks/`
 * only its own team's directories (`--team-name`), over an empty tmpfs: another team's inboxes,
 * keys and tasks are not there. In its team's directory, the lead's `lead.key` and the leader's socket hidden and swarm's
 * records (`permissions/`, `agents/`) read-only; swarm's sent log hidden, the agent homes masked
 * but its own (its `swarm` shim) bound back read-only,
 * swarm's settings, agent files and Claude Code's code-bearing config read-only; the team's
 * worktrees' `.git` and `.claude/` read-only (protectedRoots), its allowed paths writable. Without
 * a team (a background session), every team's `lead.key` is hidden instead.
 */
export async function claudeSandboxView(argv: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<ClaudeView> {
  const settings = await loadPermissionSettings({ cwd, env })
  const cp = controlPlaneOptions(cwd, env)
  const configDir = env.CLAUDE_CONFIG_DIR || path.join(env.HOME ?? '', '.claude')
  const roots = [...new Set([configDir, rootDir(env)])]
  const team = nameFlag(argv, '--team-name', 'team')
  const view: ClaudeView = {
    writable: [...roots, ...settings.additionalDirectories],
    readOnly: [
      ...cp.protectedPaths.filter((p) => p !== agentHomesRoot(env)),
      ...roots.flatMap((r) => CONFIG_CODE.map((n) => path.join(r, n))),
      // The agent CLIs' project config dirs (hooks, settings) as every confined CLI sees them.
      ...projectConfigDirsOf([])
        .map((d) => path.join(cwd, d.dir))
        .filter((d) => fs.existsSync(d)),
    ],
    hidden: [sentRoot(env)],
    masked: [agentHomesRoot(env)],
    protectedRoots: [],
  }
  const teamDirs = team === undefined ? [] : roots.map((r) => path.join(r, 'teams', team)).filter((d) => fs.existsSync(d))
  if (team === undefined || teamDirs.length === 0) {
    view.hidden.push(...roots.flatMap((r) => leadKeys(path.join(r, 'teams'))))
    return view
  }
  for (const r of roots) view.masked.push(path.join(r, 'teams'), path.join(r, 'tasks'))
  for (const dir of teamDirs) {
    const tasks = path.join(path.dirname(path.dirname(dir)), 'tasks', team)
    const records = [path.join(dir, 'permissions'), path.join(dir, 'agents')]
    // The running leader's socket (leader/leader-socket.ts) answers as the lead: its directory hidden
    // whole, so that a socket a later leader makes there does not appear inside.
    const leaderSocket = path.join(dir, LEADER_SOCKET_DIR)
    // Made now: a tasks dir it made on the tmpfs would be lost, a record dir made later would be writable.
    await Promise.all([tasks, ...records, leaderSocket].map((d) => ensureDir(d)))
    view.writable.push(dir, tasks)
    view.readOnly.push(...records)
    view.hidden.push(path.join(dir, LEAD_KEY_FILE), leaderSocket)
  }
  const name = nameFlag(argv, '--agent-name', 'agent')
  // Its own agent home (the `swarm` shim its shell runs) back over the masked homes, read-only.
  if (name !== undefined && fs.existsSync(agentHomeDir(team, name, env))) view.readOnly.push(agentHomeDir(team, name, env))
  const config = await readTeam(team, env).catch(() => undefined) // a team of Claude Code's own config dir only
  if (config) {
    view.writable.push(...(config.teamAllowedPaths ?? []).map((p) => (typeof p === 'string' ? p : p.path)))
    view.protectedRoots.push(...(await teamWorktrees(team, env)))
  }
  return view
}

/** Every team's private lead key under `teams` (swarm's own teams; a Claude-led team has none). */
function leadKeys(teams: string): string[] {
  let names: string[] = []
  try {
    names = fs.readdirSync(teams)
  } catch {
    return [] // no team yet: nothing to hide
  }
  return names.map((t) => path.join(teams, t, LEAD_KEY_FILE)).filter((f) => fs.existsSync(f))
}

/** Runs `argv` (Claude Code and its arguments) confined; resolves with its exit code. */
export async function runClaudeLauncher(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  if (argv.length === 0) {
    process.stderr.write('swarm-claude-launcher: no command — Claude Code runs it as `<launcher> <claude> <args…>`\n')
    return 2
  }
  const cwd = process.cwd()
  let file = argv[0]
  let args = argv.slice(1)
  let fd3: Uint8Array | undefined
  let settle = async (): Promise<string[]> => []
  if (env[CLAUDE_CONFINED_ENV] !== '1') {
    const settings = await loadPermissionSettings({ cwd, env })
    const name = flagValue(argv, '--agent-name')
    const confined = await confineProcess(argv, {
      config: settings.sandbox,
      env,
      label: name || 'claude',
      cwd,
      ...(await claudeSandboxView(argv, cwd, env)),
    })
    if (confined.status !== 'sandboxed') process.stderr.write(`swarm: warning: Claude Code runs without the OS sandbox: ${confined.reason}\n`)
    ;({ file, args, fd3 } = confined)
    settle = confined.settle
  }
  const child = startInTerminal(file, args, { env: { ...env, [CLAUDE_CONFINED_ENV]: '1' }, ...(fd3 && { fd3 }) })
  // Ctrl-C in its pane is for Claude Code; a hang-up or TERM ends it and what it started.
  ignoreSignal('SIGINT')
  onStopSignal(() => {
    if (child.pid) void killTree(child.pid)
  })
  const code = shellExitCode(await child.exited)
  await settle()
  return code
}
