import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { memberMarker } from '../home/member-marker.js'
import { markerEnv } from '../process/marker.js'
import { containedArgv, memberCgroup } from '../process/containment.js'
import { teamDir } from '../home/paths.js'
import type { Env } from '../home/env.js'

/** Variables a teammate inherits from whoever spawns it (tmux panes do not inherit the client's env). */
const FORWARDED = new Set([
  'PATH',
  'CLAUDE_CONFIG_DIR',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
])
/** ANTHROPIC_API_KEY included: Claude Code's teammates lose it (its issue #30754); ours do not. */
const FORWARDED_PREFIXES = ['ANTHROPIC_', 'SWARM_', 'CLAUDE_CODE_']
/** About the spawner, not the teammate: its tmux server, and the lead key of the spawner's own team. */
const NOT_FORWARDED = new Set(['SWARM_TMUX_SOCKET', 'SWARM_LEAD_VERIFY_KEY'])

/**
 * The environment handed to a teammate: the provider, proxy and swarm variables of `parent`, its
 * identity, then `extra`. It reaches tmux on stdin and iTerm2 through a 0700 launcher file.
 */
export function teammateEnv(parent: Env, identity: { team: string; name: string }, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(parent)) {
    if (v === undefined || NOT_FORWARDED.has(k)) continue
    if (FORWARDED.has(k) || FORWARDED_PREFIXES.some((p) => k.startsWith(p))) env[k] = v
  }
  env.SWARM_AGENT_NAME = identity.name
  // SWARM_TEAM, SWARM_AGENT_ID, SWARM_TEAM_DIR: how `team delete`, `kill` and `resume` find its processes.
  return { ...env, ...markerEnv(memberMarker(identity.team, identity.name, parent)), ...extra }
}

/** `node <repo>/bin/swarm.js`, absolute, so a pane finds it whatever its cwd and PATH. */
export function swarmArgv(): string[] {
  swarmBin ??= findSwarmBin(path.dirname(fileURLToPath(import.meta.url)))
  return [process.execPath, swarmBin]
}
let swarmBin: string | undefined

/**
 * The package's bin/swarm.js, found upward from this module: it runs from src/backends (tests),
 * dist/backends (tsc) or dist/bundle (the CLI bundle), at different depths.
 */
function findSwarmBin(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const bin = path.join(dir, 'bin', 'swarm.js')
    if (fs.existsSync(bin) && fs.existsSync(path.join(dir, 'package.json'))) return bin
    if (path.dirname(dir) === dir) return path.resolve(from, '../../bin/swarm.js')
  }
}

/** The default teammate command: `swarm agent --team T --name N [--model M] [--mode MODE]`. */
export function defaultTeammateArgv(team: string, name: string, opts: { model?: string; mode?: string; agentType?: string } = {}): string[] {
  return [
    ...swarmArgv(),
    'agent',
    '--team',
    team,
    '--name',
    name,
    ...(opts.model ? ['--model', opts.model] : []),
    ...(opts.mode ? ['--mode', opts.mode] : []),
    ...(opts.agentType ? ['--agent-type', opts.agentType] : []),
  ]
}

/**
 * The leader console started in a new team session: `swarm leader <team>`. With
 * SWARM_LEADER_CPU_PROF=DIR in the spawner's environment (`bench:scale --cpu-prof DIR`), its Node
 * writes a V8 CPU profile into DIR when it exits: a hosted team's teammates all run there.
 */
export function defaultLeaderArgv(team: string): string[] {
  const [node, bin] = swarmArgv()
  const profile = process.env.SWARM_LEADER_CPU_PROF
  return [node!, ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []), bin!, 'leader', team]
}

/** `--command 'SHELL CMD'`: the user's command is for a shell by definition. */
export function shellCommandArgv(command: string): string[] {
  return ['/bin/sh', '-c', command]
}

/**
 * A member's argv as its pane runs it: inside the member's cgroup where the system has one
 * (process/containment.ts — what `team delete` finds its processes by, whatever their
 * environment), else as given (the marker alone finds them).
 */
export function containedMemberArgv(team: string, name: string, argv: string[], env: Env): string[] {
  const cgroup = memberCgroup(teamDir(team, env), name, env)
  return cgroup ? containedArgv(argv, cgroup) : argv
}
