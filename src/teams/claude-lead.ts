import fs from 'node:fs'
import { LEAD_NAME } from '../home/paths.js'
import { pidExists } from '../process/liveness.js'
import { procStartTime } from '../process/table.js'
import type { TeamFile } from './types.js'

/**
 * Teams led by a Claude Code session (2.1.332): config.json carries `leadProcess` {pid, procStart}
 * and the lead member sits in pane "leader". swarm reads and messages such a team but never leads
 * it: no leader console, no swarm key files, no delete while that session lives.
 */

export interface ClaudeLead {
  pid: number
  /** Field 22 of /proc/<pid>/stat when the lead claimed the team: tells a reused pid apart. */
  procStart?: string
  sessionId?: string
}

/** The Claude Code lead of a team; undefined for a team swarm leads. */
export function claudeLeadOf(config: TeamFile): ClaudeLead | undefined {
  const lp = config.leadProcess as { pid?: unknown; procStart?: unknown } | undefined
  const leadMember = config.members.find((m) => m.name === LEAD_NAME)
  const pid = typeof lp?.pid === 'number' ? lp.pid : undefined
  if (pid === undefined && leadMember?.tmuxPaneId !== 'leader') return undefined
  return {
    pid: pid ?? 0,
    ...(typeof lp?.procStart === 'string' && { procStart: lp.procStart }),
    ...(config.leadSessionId !== undefined && { sessionId: config.leadSessionId }),
  }
}

/** Whether the Claude Code lead still runs (the same process: its start time matches when known). */
export function claudeLeadAlive(lead: ClaudeLead): boolean {
  if (!lead.pid || !pidExists(lead.pid)) return false
  if (lead.procStart === undefined) return true
  const started = procStartTime(lead.pid)
  return started === undefined || started === lead.procStart // no /proc (macOS): the pid alone
}

/** Claude Code's own tmux server for its teammates' panes when it runs outside tmux. */
export function claudeTmuxSocket(lead: ClaudeLead): string {
  return `claude-swarm-${lead.pid}`
}

/**
 * The tmux server socket of a Claude-Code-led team's panes: the lead's own tmux (its `TMUX`) when
 * it runs inside one, else the `claude-swarm-<pid>` server it started (under its TMUX_TMPDIR).
 */
export function claudePaneSocket(lead: ClaudeLead, env: NodeJS.ProcessEnv = process.env): string | undefined {
  let leadEnv: Record<string, string> = {}
  try {
    leadEnv = Object.fromEntries(
      fs
        .readFileSync(`/proc/${lead.pid}/environ`, 'utf8')
        .split('\0')
        .filter((kv) => kv.includes('='))
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    )
  } catch {
    // gone, or not ours to read: look for its server where ours would be
  }
  if (leadEnv.TMUX) return leadEnv.TMUX.split(',')[0]
  const socket = claudeTmuxSocketPath(lead, { TMUX_TMPDIR: leadEnv.TMUX_TMPDIR || env.TMUX_TMPDIR })
  return fs.existsSync(socket) ? socket : undefined
}

/** Where the lead's `claude-swarm-<pid>` socket lives: `<TMUX_TMPDIR or /tmp>/tmux-<uid>/`, as tmux puts a `-L` socket. */
export function claudeTmuxSocketPath(lead: ClaudeLead, env: NodeJS.ProcessEnv = process.env): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0
  return `${env.TMUX_TMPDIR || '/tmp'}/tmux-${uid}/${claudeTmuxSocket(lead)}`
}
