import { agentHomesRoot, sentRoot } from '../home/paths.js'
import { controlPlaneOptions } from '../permissions/rules/control-plane.js'
import { createBashSandbox } from '../sandbox/sandbox.js'
import type { SandboxConfig } from '../sandbox/sandbox-settings.js'
import type { BashSandbox } from '../sandbox/types.js'
import { readTeam } from '../teams/team-store.js'
import { readWorktreeRecords } from '../worktrees/record.js'

/**
 * The Bash sandbox of one member — a teammate, the lead, a batch worker: the control plane, what
 * the leads sent and CLI teammates' homes hidden; settings, agent definitions, every `.claude/`
 * and every team member's worktree `.git` read-only (by mount rule, from the roster and the
 * worktree records); writable only its cwd, its private TMPDIR and `writableDirs`. Subagents and
 * forks use their parent's.
 */
export function memberSandbox(o: {
  config: SandboxConfig
  cwd: string
  env: NodeJS.ProcessEnv
  /** Names its private temp directory. */
  label: string
  writableDirs(): Promise<string[]> | string[]
  /** The member's team: its members' worktrees are protected whatever their depth. */
  team?: string
  /** Read-only besides the settings: the files the settings' hooks name. */
  readOnly?: readonly string[]
}): BashSandbox {
  const cp = controlPlaneOptions(o.cwd, o.env)
  const team = o.team
  return createBashSandbox({
    config: o.config,
    env: o.env,
    label: o.label,
    // Beside the control plane: what the leads sent, and CLI teammates' homes (their relay tokens).
    hidden: [...cp.controlPlaneDirs, sentRoot(o.env), agentHomesRoot(o.env)],
    readOnly: [...cp.protectedPaths, ...(o.readOnly ?? [])],
    writableDirs: o.writableDirs,
    ...(team !== undefined && { protectedRoots: () => teamWorktrees(team, o.env) }),
  })
}

/** Every directory a member of `team` works in: the roster's cwds and worktrees, and the worktree records. */
export async function teamWorktrees(team: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  // Read per call: a teammate spawned later has its worktree protected from the next call on.
  const [config, records] = await Promise.all([readTeam(team, env), readWorktreeRecords(team, env)])
  const dirs = config.members.flatMap((m) => [m.cwd, ...(m.worktreePath ? [m.worktreePath] : [])])
  return [...new Set([...dirs, ...records.records.map((r) => r.path)])]
}
