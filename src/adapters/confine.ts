/**
 * Confines one agent-CLI teammate (`confinement: 'swarm'`): its relay, started before the CLI so
 * its first hook finds it, and the whole-process sandbox its CLI runs in — the control plane, the
 * leads' sent messages and plans hidden, every other teammate's home masked, its own home and cwd
 * writable, the files swarm wrote for it (hooks, shim, relay endpoint) read-only.
 */
import path from 'node:path'
import { teamWorktrees } from '../agent/member-sandbox.js'
import { agentHomeDir, agentHomesRoot, rootDir, sentRoot } from '../home/paths.js'
import { controlPlaneOptions } from '../permissions/rules/control-plane.js'
import { loadPermissionSettings } from '../permissions/rules/settings.js'
import { type ConfinedProcess, confineProcess } from '../sandbox/process-sandbox.js'
import { readTeam } from '../teams/team-store.js'
import { ensureDir } from '../util/fs.js'
import { relayEndpointFile } from './relay-frames.js'
import { type Relay, type RelayIdentity, startRelay } from './relay-server.js'
import { projectConfigDirsOf } from './registry.js'
import type { AgentAdapter } from './types.js'

export interface ConfineCliOptions extends RelayIdentity {
  argv: readonly string[]
  cwd: string
  env: NodeJS.ProcessEnv
  /** What prepare() wrote that the CLI must not change (the wrapper's --read-only). */
  readOnly: readonly string[]
  /** The teammate's adapter: its own project config dir is read-only too (a user adapter's, not registered). */
  adapter?: AgentAdapter
}

export interface ConfinedCli {
  process: ConfinedProcess
  relay: Relay
  /** Once the CLI is gone: the relay closed, the sandbox settled (what it moved aside). */
  close(): Promise<string[]>
}

export async function confineCli(o: ConfineCliOptions): Promise<ConfinedCli> {
  const home = agentHomeDir(o.team, o.name, o.env)
  const endpointFile = relayEndpointFile(home)
  const [settings, team, worktrees] = await Promise.all([
    loadPermissionSettings({ cwd: o.cwd, env: o.env }),
    readTeam(o.team, o.env),
    teamWorktrees(o.team, o.env),
  ])
  const relay = await startRelay({ team: o.team, name: o.name, agent: o.agent, endpointFile, env: o.env, cwd: o.cwd })
  try {
    const cp = controlPlaneOptions(o.cwd, o.env)
    const homes = agentHomesRoot(o.env)
    const allowed = (team.teamAllowedPaths ?? []).map((p) => (typeof p === 'string' ? p : p.path))
    // Made now when missing: the sandbox hides what exists, and swarm writes its sent log and plans later.
    const hidden = [...cp.controlPlaneDirs, sentRoot(o.env), path.join(rootDir(o.env), 'plans')]
    await Promise.all(hidden.map((d) => ensureDir(d)))
    const configDirs = await projectConfigDirs(o.cwd, o.adapter)
    const confined = await confineProcess(o.argv, {
      config: settings.sandbox,
      env: o.env,
      label: o.name,
      cwd: o.cwd,
      writable: [home, ...settings.additionalDirectories, ...allowed],
      readOnly: [...cp.protectedPaths.filter((p) => p !== homes), ...configDirs, path.dirname(endpointFile), ...o.readOnly],
      hidden,
      masked: [homes],
      // Fixed at its start: a teammate spawned later is covered by the `.claude/` mount rule in the usual layout.
      protectedRoots: worktrees,
    })
    return {
      process: confined,
      relay,
      async close() {
        await relay.close()
        return confined.settle()
      },
    }
  } catch (err) {
    await relay.close()
    throw err
  }
}

/**
 * The agent CLIs' project config directories in `cwd` (every registered adapter's `projectConfig`,
 * and `own`'s), made when missing so that they are read-only whole: settings or hooks a teammate
 * created there were read by swarm and by the next teammate (its sandbox turned off, its hooks
 * disabled) long before they were moved aside. Left in place afterwards: removing one another
 * sandbox binds would undo that binding. A dir with `makeWhenMissing: false` (opencode's, which
 * installs packages into a config directory it finds) only when it exists.
 */
async function projectConfigDirs(cwd: string, own: AgentAdapter | undefined): Promise<string[]> {
  const dirs = projectConfigDirsOf(own ? [own] : [])
    .filter((d) => d.makeWhenMissing !== false)
    .map((d) => path.join(cwd, d.dir))
  await Promise.all(dirs.map((d) => ensureDir(d)))
  return dirs
}
