import os from 'node:os'
import path from 'node:path'
import { InvalidNameError, UsageError } from '../errors.js'

/** The name of the lead member of every team. */
export const LEAD_NAME = 'team-lead'

/** The name of the lead's private key inside a team directory. */
export const LEAD_KEY_FILE = 'lead.key'
/** `teams/<team>/socket/leader.sock`; bin/swarm.js builds the same path (test/cli/leader-socket.test.ts checks it). */
export const LEADER_SOCKET_DIR = 'socket'
export const LEADER_SOCKET_FILE = 'leader.sock'

const NAME_RE = /^[A-Za-z0-9._-]+$/
const MAX_NAME = 64

/**
 * Validates a team or agent name before any path is built from it.
 * Throws InvalidNameError; returns the name unchanged otherwise.
 */
export function validateName(name: string, kind: 'team' | 'agent' = 'team'): string {
  if (typeof name !== 'string' || name.length === 0) throw new InvalidNameError(kind, String(name), 'it is empty')
  if (name.length > MAX_NAME) throw new InvalidNameError(kind, name, `it is longer than ${MAX_NAME} characters`)
  // eslint-disable-next-line no-control-regex
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what a name may not hold
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new InvalidNameError(kind, name, 'it contains control characters')
  if (name.includes('/') || name.includes('\\')) throw new InvalidNameError(kind, name, 'it contains a path separator')
  if (name.startsWith('.') || name.startsWith('-')) throw new InvalidNameError(kind, name, 'it starts with . or -')
  if (!NAME_RE.test(name)) throw new InvalidNameError(kind, name, 'only A-Z a-z 0-9 . _ - are allowed')
  return name
}

export function validateAgentName(name: string): string {
  return validateName(name, 'agent')
}

/** Names no teammate may take: the lead's (a teammate by that name would be folded into the lead). */
export const RESERVED_NAMES: readonly string[] = [LEAD_NAME]

/** A valid agent name that is not reserved: UsageError (exit 2) for `team-lead` in --agents, a team file or spawn. */
export function validateTeammateName(name: string): string {
  validateAgentName(name)
  if (RESERVED_NAMES.includes(name)) throw new UsageError(`${name} is reserved for the team's lead; a teammate needs another name`)
  return name
}

/** `<name>@<team>` */
export function agentId(name: string, team: string): string {
  return `${validateAgentName(name)}@${validateName(team)}`
}

/** Root of swarm's state: $SWARM_HOME, else $CLAUDE_CONFIG_DIR, else ~/.claude. */
export function rootDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.SWARM_HOME || env.CLAUDE_CONFIG_DIR
  return path.resolve(fromEnv || path.join(os.homedir(), '.claude'))
}

export function teamsDir(env?: NodeJS.ProcessEnv): string {
  return path.join(rootDir(env), 'teams')
}
export function teamDir(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(teamsDir(env), validateName(team))
}
/**
 * The running leader's socket (leader/leader-socket.ts): in a directory of its own, so that a
 * sandbox view which binds the team's directory back (Claude Code's) hides that directory whole —
 * a socket file swapped by a later leader cannot reappear inside it.
 */
export function leaderSocketDir(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(teamDir(team, env), LEADER_SOCKET_DIR)
}
export function leaderSocketPath(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(leaderSocketDir(team, env), LEADER_SOCKET_FILE)
}
export function teamConfigPath(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(teamDir(team, env), 'config.json')
}
export function inboxesDir(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(teamDir(team, env), 'inboxes')
}
export function inboxPath(team: string, agent: string, env?: NodeJS.ProcessEnv): string {
  return path.join(inboxesDir(team, env), `${validateAgentName(agent)}.json`)
}
export function permissionsDir(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(teamDir(team, env), 'permissions')
}
export function pendingPermissionsDir(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(permissionsDir(team, env), 'pending')
}
export function resolvedPermissionsDir(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(permissionsDir(team, env), 'resolved')
}
export function agentDir(team: string, agent: string, env?: NodeJS.ProcessEnv): string {
  return path.join(teamDir(team, env), 'agents', validateAgentName(agent))
}
export function tasksRootDir(env?: NodeJS.ProcessEnv): string {
  return path.join(rootDir(env), 'tasks')
}
export function tasksDir(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(tasksRootDir(env), validateName(team))
}
export function scratchpadDir(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(rootDir(env), 'scratchpad', validateName(team))
}
/** User-level agent definitions: <root>/agents/*.md */
export function userAgentsDir(env?: NodeJS.ProcessEnv): string {
  return path.join(rootDir(env), 'agents')
}

/**
 * A teammate's plan file: `<root>/plans/<team>/<name>.md`. Outside the control plane (so the
 * teammate's Write may reach it in plan mode) and outside the project (so plans do not litter
 * the repository), beside Claude Code's own `~/.claude/plans`.
 */
export function planFilePath(team: string, name: string, env?: NodeJS.ProcessEnv): string {
  return path.join(rootDir(env), 'plans', team, `${name}.md`)
}

/**
 * swarm's record of what it sent to a reader that consumes its inbox (Claude Code removes the
 * entries it has read): `<root>/swarm-sent/<team>/<agent>.jsonl`, outside the team directory, so a
 * Claude-Code-led team's directory gets no swarm files.
 */
export function sentLogPath(team: string, agent: string, env?: NodeJS.ProcessEnv): string {
  return path.join(sentDir(team, env), `${validateAgentName(agent)}.jsonl`)
}

/**
 * `<root>/agent-homes/<team>`: the config dirs of the team's agent-CLI teammates (CODEX_HOME,
 * GEMINI_CLI_HOME, …), outside the control plane; removed with the team.
 */
export function agentHomesDir(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(agentHomesRoot(env), validateName(team))
}

/** `<root>/agent-homes`: every team's CLI teammates' config dirs (their relay tokens among them). */
export function agentHomesRoot(env?: NodeJS.ProcessEnv): string {
  return path.join(rootDir(env), 'agent-homes')
}

/** One teammate's own config dir: `<root>/agent-homes/<team>/<name>` (removed with it). */
export function agentHomeDir(team: string, name: string, env?: NodeJS.ProcessEnv): string {
  return path.join(agentHomesDir(team, env), validateAgentName(name))
}

/** `<root>/swarm-sent/<team>` (removed with the team). */
export function sentDir(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(sentRoot(env), validateName(team))
}

/** `<root>/swarm-sent`: what every team's lead sent. */
export function sentRoot(env?: NodeJS.ProcessEnv): string {
  return path.join(rootDir(env), 'swarm-sent')
}
