/**
 * Confines one agent-CLI teammate (`confinement: 'swarm'`): its relay, started before the CLI so
 * its first hook finds it, and the whole-process sandbox its CLI runs in — the control plane, the
 * leads' sent messages and plans hidden, every other teammate's home masked, its own home and cwd
 * writable, the files swarm wrote for it (hooks, shim, relay endpoint) read-only.
 */
import path from 'node:path'
import { agentHomeDir, agentHomesRoot, rootDir, sentRoot } from '../home/paths.js'
import { controlPlaneOptions } from '../permissions/rules/control-plane.js'
import { loadPermissionSettings } from '../permissions/rules/settings.js'
import { gitHooksDir } from '../sandbox/git-hooks.js'
import { type ConfinedProcess, confineProcess } from '../sandbox/process-sandbox.js'
import { readTeam } from '../teams/team-store.js'
import { ensureDir } from '../util/fs.js'
import { relayEndpointFile } from './relay-frames.js'
import { type Relay, type RelayIdentity, startRelay } from './relay-server.js'

export interface ConfineCliOptions extends RelayIdentity {
  argv: readonly string[]
  cwd: string
  env: NodeJS.ProcessEnv
  /** What prepare() wrote that the CLI must not change (the wrapper's --read-only). */
  readOnly: readonly string[]
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
  const [settings, team] = await Promise.all([loadPermissionSettings({ cwd: o.cwd, env: o.env }), readTeam(o.team, o.env)])
  const relay = await startRelay({ team: o.team, name: o.name, agent: o.agent, endpointFile, env: o.env, cwd: o.cwd })
  try {
    const cp = controlPlaneOptions(o.cwd, o.env)
    const homes = agentHomesRoot(o.env)
    const allowed = (team.teamAllowedPaths ?? []).map((p) => (typeof p === 'string' ? p : p.path))
    // Made now when missing: the sandbox hides what exists, and swarm writes its sent log and plans later.
    const hidden = [...cp.controlPlaneDirs, sentRoot(o.env), path.join(rootDir(o.env), 'plans')]
    await Promise.all(hidden.map((d) => ensureDir(d)))
    // The project's .claude whole, made when missing: a settings file or agent definition it created
    // would be read by swarm (the next teammate's sandbox and rules) long before it is moved aside.
    const projectClaude = path.join(o.cwd, '.claude')
    await ensureDir(projectClaude)
    // Git's hooks wherever core.hooksPath puts them (`.husky` in the tree): the user's next commit runs them.
    const hooks = await gitHooksDir(o.cwd, o.env)
    const confined = await confineProcess(o.argv, {
      config: settings.sandbox,
      env: o.env,
      label: o.name,
      cwd: o.cwd,
      writable: [home, ...settings.additionalDirectories, ...allowed],
      readOnly: [
        ...cp.protectedPaths.filter((p) => p !== homes),
        projectClaude,
        ...(hooks ? [hooks] : []),
        path.dirname(endpointFile),
        ...o.readOnly,
      ],
      hidden,
      masked: [homes],
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
