import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach } from 'vitest'

/** What a test gets: a temp directory with the state root, a project and a private tmux dir. */
export interface IsolatedHome {
  /** The temp directory (realpath), removed by cleanup. */
  base: string
  /** SWARM_HOME. */
  home: string
  /** A working directory for teammates. */
  project: string
  /** TMUX_TMPDIR: swarm's tmux server lives here, never the user's. */
  tmuxTmp: string
  /** A full environment pointing at the above and a HOME of its own; nothing of the real ~, ~/.claude, tmux, git config or model key. */
  env: NodeJS.ProcessEnv
  cleanup(): Promise<void>
}

/** Variables of the developer's own session that must not reach a test (their tmux, iTerm2, keys, models). */
const SCRUBBED = [
  'TMUX',
  'TMUX_PANE',
  'ITERM_SESSION_ID',
  'TERM_PROGRAM',
  'SWARM_TMUX_SOCKET',
  'CLAUDE_CONFIG_DIR',
  'SWARM_LEAD_VERIFY_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'SWARM_SUBAGENT_MODEL',
  'SWARM_SUBAGENT_MODEL_FORCE',
  // The team marker of a swarm team the suite may be run from (src/process/marker.ts).
  'SWARM_TEAM',
  'SWARM_AGENT_ID',
  'SWARM_AGENT_NAME',
  'SWARM_TEAM_DIR',
]

/**
 * The one isolated home of the test suite: SWARM_HOME, a project directory and TMUX_TMPDIR in a
 * fresh temp directory, the session's tmux/iTerm2/model variables removed, no model key unless
 * `extra` gives one.
 */
export function isolatedHome(prefix = 'swarm-test-', extra: NodeJS.ProcessEnv = {}): IsolatedHome {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
  const project = path.join(base, 'project')
  fs.mkdirSync(project, { recursive: true })
  const env = isolatedEnv(base, extra)
  const home = env.SWARM_HOME as string
  const tmuxTmp = env.TMUX_TMPDIR as string
  return {
    base,
    home,
    project,
    tmuxTmp,
    env,
    cleanup: () => fs.promises.rm(base, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }),
  }
}

/** The git identity every test's git runs with: no test depends on the user's ~/.gitconfig. */
export const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'Swarm Test',
  GIT_AUTHOR_EMAIL: 'swarm@example.invalid',
  GIT_COMMITTER_NAME: 'Swarm Test',
  GIT_COMMITTER_EMAIL: 'swarm@example.invalid',
} as const

/**
 * A user's home of a test's own under `root`: HOME=<root>/user-home, the four XDG directories in
 * it, the git identity, GIT_CONFIG_GLOBAL an (empty) file in it and no system git config. The one
 * place a test process gets its HOME; everything it writes "to ~" lands in `root`.
 */
export function userHomeEnv(root: string): Record<string, string> {
  const home = path.join(root, 'user-home')
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    ...GIT_IDENTITY,
    GIT_CONFIG_GLOBAL: path.join(home, '.gitconfig'),
    GIT_CONFIG_NOSYSTEM: '1',
  }
  fs.mkdirSync(home, { recursive: true })
  fs.closeSync(fs.openSync(env.GIT_CONFIG_GLOBAL, 'a'))
  return env
}

/**
 * The environment of an isolated home under `root`: SWARM_HOME=<root>/home, TMUX_TMPDIR=<root>/tmux
 * (both created) and a user's home of its own (userHomeEnv), the session's own variables removed,
 * then `extra`. TMPDIR stays the run's (global-setup.ts), whose leftovers are checked at the end.
 */
export function isolatedEnv(root: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...userHomeEnv(root),
    SWARM_HOME: path.join(root, 'home'),
    TMUX_TMPDIR: path.join(root, 'tmux'),
    NO_COLOR: '1',
    ANTHROPIC_API_KEY: '',
    // The tmux clients tests attach (through `script`, or a private outer server) need a terminal
    // type tmux can draw and a UTF-8 locale, whatever the shell the suite runs from had (CI: none).
    ...terminalEnv(process.env),
  }
  for (const k of SCRUBBED) delete env[k]
  Object.assign(env, extra)
  fs.mkdirSync(env.SWARM_HOME as string, { recursive: true })
  fs.mkdirSync(env.TMUX_TMPDIR as string, { recursive: true })
  return env
}

/** TERM and LANG for tmux clients: the parent's when usable, else xterm-256color and C.UTF-8. */
function terminalEnv(parent: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const term = parent.TERM && parent.TERM !== 'dumb' ? parent.TERM : 'xterm-256color'
  const utf8 = [parent.LC_ALL, parent.LC_CTYPE, parent.LANG].some((v) => /utf-?8/i.test(v ?? ''))
  return { TERM: term, ...(!utf8 && { LANG: 'C.UTF-8' }) }
}

/**
 * Per test: a fresh temp directory (its realpath) handed to `onReady`, which may fill it or build
 * an environment on it; removed after the test.
 */
export function useTempDir(prefix: string, onReady: (dir: string) => unknown): void {
  let dir: string
  beforeEach(async () => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
    await onReady(dir)
  })
  afterEach(() => fs.promises.rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }))
}
