import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { type LoopbackServer, startLoopbackServer } from '../../src/loopback-model/loopback-server.js'
import type { ScenarioInput } from '../../src/loopback-model/scenario.js'
import { type Sandbox, sandbox } from '../e2e/helpers.js'
import { waitFor } from '../support/wait.js'

/**
 * What every interop test needs: the real Claude Code binary (SWARM_CLAUDE_BIN, set by
 * scripts/interop.mjs), a sandbox whose SWARM_HOME is also Claude Code's CLAUDE_CONFIG_DIR (with
 * onboarding done, the project trusted, the test key approved), and a loopback Messages API.
 */

export const API_KEY = 'sk-interop-12345'

export function claudeBin(): string {
  const bin = process.env.SWARM_CLAUDE_BIN
  if (!bin || !fs.existsSync(bin)) throw new Error('SWARM_CLAUDE_BIN is not set: run these tests with `npm run test:interop`')
  return bin
}

export interface ClaudeSandbox extends Sandbox {
  loopback: LoopbackServer
  home: string
  /** Every team directory file the test may inspect. */
  teamFile(team: string, ...rel: string[]): string
  readJson<T = unknown>(file: string): T | undefined
  close(): Promise<void>
}

/** The `.claude.json` that lets Claude Code start without any dialog in `configDir` for `projects`. */
export function writeClaudeConfig(configDir: string, projects: string[]): void {
  fs.mkdirSync(configDir, { recursive: true })
  const config = {
    hasCompletedOnboarding: true,
    theme: 'dark',
    projects: Object.fromEntries(projects.map((p) => [p, { hasTrustDialogAccepted: true }])),
    customApiKeyResponses: { approved: [API_KEY.slice(-20)], rejected: [] },
  }
  fs.writeFileSync(path.join(configDir, '.claude.json'), JSON.stringify(config))
}

export async function claudeSandbox(scenario: ScenarioInput): Promise<ClaudeSandbox> {
  const bin = claudeBin()
  const loopback = await startLoopbackServer({ scenario })
  const sb = sandbox({
    ANTHROPIC_BASE_URL: loopback.url,
    ANTHROPIC_API_KEY: API_KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    SWARM_CLAUDE_BIN: bin,
  })
  // The sandbox's own HOME (isolatedEnv): where Claude Code writes ~/.claude.json and the like.
  const home = sb.env.HOME!
  // Claude Code keeps `claude-<uid>/` and `cc-socks/` in its TMPDIR: the sandbox's, removed with it.
  sb.env.TMPDIR = path.join(sb.root, 'tmp')
  fs.mkdirSync(sb.env.TMPDIR, { recursive: true })
  writeClaudeConfig(sb.env.SWARM_HOME!, [sb.project])
  return {
    ...sb,
    loopback,
    home,
    teamFile: (team, ...rel) => path.join(sb.env.SWARM_HOME!, 'teams', team, ...rel),
    readJson<T>(file: string): T | undefined {
      try {
        return JSON.parse(fs.readFileSync(file, 'utf8')) as T
      } catch {
        return undefined
      }
    },
    async close() {
      await sb.cleanup() // every tmux server under its TMUX_TMPDIR: swarm's, the test's, Claude Code's
      await loopback.close()
    },
  }
}

/**
 * The requests the loopback server saw whose last user message contains `text` (Claude Code
 * 2.1.332 may put `system` messages after it).
 */
export function requestsMentioning(loopback: LoopbackServer, text: string): unknown[] {
  return loopback.requests.filter((r) => {
    const messages = (r.body as { messages?: Array<{ role?: string }> } | undefined)?.messages ?? []
    const users = messages.filter((m) => m.role === 'user')
    return JSON.stringify(users.at(-1) ?? '').includes(text)
  })
}

/** Pending requests as `swarm perms --json` lists them. */
export async function pendingRequests(
  sb: Sandbox,
  team: string,
): Promise<Array<{ id: string; agent: string; toolName: string; input: Record<string, unknown> }>> {
  const r = await sb.swarm(['perms', team, '--json'])
  if (r.code !== 0) throw new Error(`swarm perms failed: ${r.stderr}`)
  return JSON.parse(r.stdout).requests
}

/**
 * Waits for a permission request from `agent`. Claude Code 2.1.332 sometimes fails to append its
 * request to team-lead's inbox and tells its model so ("could not be delivered … mailbox write
 * failed. Retry the tool call"): a real model retries; for the scripted one `resend` asks again.
 */
export async function waitForRequest(sb: ClaudeSandbox, team: string, agent: string, resend?: () => Promise<unknown>, ms = 60_000) {
  let seen = undeliveredRequests(sb.loopback)
  return waitFor(
    `a permission request from ${agent}`,
    async () => {
      const failed = undeliveredRequests(sb.loopback)
      if (failed > seen && resend) {
        seen = failed
        await resend()
      }
      return (await pendingRequests(sb, team)).find((r) => r.agent === agent)
    },
    ms,
  )
}

/** How many times Claude Code told its model that a permission request could not be delivered. */
export function undeliveredRequests(loopback: LoopbackServer): number {
  return requestsMentioning(loopback, 'mailbox write failed').length
}

/** A member's state as `swarm status --json` reports it. */
export async function memberStatus(sb: Sandbox, team: string, name: string): Promise<{ status: string; pendingRequests: number } | undefined> {
  const r = await sb.swarm(['status', team, '--json'])
  if (r.code !== 0) throw new Error(`swarm status failed: ${r.stderr}`)
  return (JSON.parse(r.stdout).members as Array<{ name: string; status: string; pendingRequests: number }>).find((m) => m.name === name)
}

/** Pane commands on the sandbox's tmux server (`swarm` socket). */
export function panes(env: NodeJS.ProcessEnv, socket = 'swarm'): Array<{ id: string; pid: number; dead: boolean }> {
  try {
    return execFileSync('tmux', ['-L', socket, 'list-panes', '-a', '-F', '#{pane_id} #{pane_pid} #{pane_dead}'], {
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [id, pid, dead] = l.split(' ')
        return { id: id!, pid: Number(pid), dead: dead === '1' }
      })
  } catch {
    return []
  }
}

/** A scripted Claude Code teammate's answers: `SHUTDOWN` rules approve a shutdown_request by the id it carries. */
export function approveShutdownRule(name: string, approve = true) {
  return {
    when: { lastUserMatches: `"requestId":"(shutdown-\\d+@${name})"` },
    content: [
      {
        type: 'tool_use' as const,
        name: 'SendMessage',
        input: {
          to: 'team-lead',
          message: { type: 'shutdown_response', request_id: '{{match.1}}', approve, ...(approve ? {} : { reason: 'still busy with the probe' }) },
        },
      },
    ],
  }
}

/** A scripted reply calling tool `name` with `input`. */
export function tool(name: string, input: Record<string, unknown>) {
  return { content: [{ type: 'tool_use' as const, name, input }] }
}

export function bash(command: string, description = command) {
  return tool('Bash', { command, description })
}

/** The rule of a scripted swarm agent that agrees when asked to shut down. */
export const BYE_ON_SHUTDOWN = { when: { lastUserIncludes: 'asks you to shut down' }, text: 'Bye.' }

export interface ClaudeLead {
  socket: string
  pane: string
  /** Types a line into the lead's prompt and submits it. */
  type(text: string): void
  /**
   * Types `text` once the lead's model calls have all been answered, and again (up to 3 times) until
   * a request whose last user message carries it was answered by a scenario rule: a line typed while
   * the TUI is still busy with a teammate's message can be folded into that turn and never reach a rule.
   */
  prompt(text: string): Promise<void>
  screen(): string
}

/**
 * A real Claude Code lead, interactive, in a pane of a tmux server of the test's own (`socket`):
 * TMUX unset inside, `--teammate-mode tmux`, so it starts its teammates on its own claude-swarm-<pid> server.
 */
export function startClaudeLead(sb: ClaudeSandbox, opts: { prompt: string; socket?: string; env?: Record<string, string> }): ClaudeLead {
  const socket = opts.socket ?? 'cclead'
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    TERM: 'xterm-256color',
    HOME: sb.home,
    CLAUDE_CONFIG_DIR: sb.env.SWARM_HOME!,
    ANTHROPIC_BASE_URL: sb.loopback.url,
    ANTHROPIC_API_KEY: API_KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS: '1',
    TMUX_TMPDIR: sb.env.TMUX_TMPDIR!,
    TMPDIR: sb.env.TMPDIR!,
    // swarm teammates it starts find the same home as swarm's CLI.
    SWARM_HOME: sb.env.SWARM_HOME!,
    ...opts.env,
  }
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`
  const cmd = `cd ${q(sb.project)} && exec env -i ${Object.entries(env)
    .map(([k, v]) => `${k}=${q(v)}`)
    .join(' ')} ${q(claudeBin())} --permission-mode default --teammate-mode tmux ${q(opts.prompt)}`
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { env: sb.env, encoding: 'utf8' })
  tmux('new-session', '-d', '-s', 'lead', '-x', '200', '-y', '50', cmd)
  const pane = tmux('list-panes', '-t', 'lead', '-F', '#{pane_id}').trim()
  return {
    socket,
    pane,
    type(text) {
      tmux('send-keys', '-t', pane, '-l', text)
      execFileSync('sleep', ['0.3'])
      tmux('send-keys', '-t', pane, 'Enter')
    },
    async prompt(text) {
      const lead = () => sb.loopback.requests.filter((r) => r.headers['x-swarm-agent'] === undefined)
      const played = () => requestsMentioning(sb.loopback, text).some((r) => (r as { played?: { kind: string } }).played?.kind === 'rule')
      for (let attempt = 1; ; attempt++) {
        await waitFor(
          'the lead idle',
          () => {
            const rs = lead()
            const last = rs.at(-1)
            return rs.every((r) => r.answeredAt !== undefined || r.clientClosed) && (!last || Date.now() - (last.answeredAt ?? 0) > 1_000)
          },
          60_000,
        )
        this.type(text)
        try {
          await waitFor(`the lead's model given ${JSON.stringify(text)}`, played, 20_000)
          return
        } catch (err) {
          if (attempt === 3) throw err
        }
      }
    },
    screen: () => tmux('capture-pane', '-p', '-t', pane),
  }
}

/** The team a Claude Code lead created (its name is `session-<8 hex>`). */
export function claudeTeamName(sb: ClaudeSandbox): string | undefined {
  const dir = path.join(sb.env.SWARM_HOME!, 'teams')
  try {
    return fs.readdirSync(dir).find((n) => n.startsWith('session-') && fs.existsSync(path.join(dir, n, 'config.json')))
  } catch {
    return undefined
  }
}

/** The live pane (on swarm's tmux server) whose process is a Claude Code teammate. */
export function claudePane(sb: Sandbox): { id: string; pid: number } | undefined {
  return panes(sb.env).find((p) => {
    if (p.dead) return false
    try {
      return fs.readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').includes('--agent-name')
    } catch {
      return false
    }
  })
}

/** The session id of a Claude Code teammate's transcript (`<config>/projects/<cwd>/<id>.jsonl`). */
export function sessionOf(sb: Sandbox, team: string, name: string): string | undefined {
  const dir = path.join(sb.env.SWARM_HOME!, 'projects', sb.project.replace(/[^a-zA-Z0-9]/g, '-'))
  try {
    return fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.jsonl'))
      .map((f) => ({ f, text: fs.readFileSync(path.join(dir, f), 'utf8'), mtime: fs.statSync(path.join(dir, f)).mtimeMs }))
      .filter((x) => x.text.includes(`"teamName":"${team}"`) && x.text.includes(`"agentName":"${name}"`))
      .sort((a, b) => b.mtime - a.mtime)[0]
      ?.f.slice(0, -'.jsonl'.length)
  } catch {
    return undefined
  }
}

/** The pane (on swarm's tmux server) running `swarm leader <team>`: the leader console. */
export function leaderPane(sb: Sandbox, team: string): { id: string; pid: number } | undefined {
  return panes(sb.env).find((p) => {
    if (p.dead) return false
    try {
      const argv = fs.readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').split('\0')
      return argv.includes('leader') && argv.at(argv.indexOf('leader') + 1) === team
    } catch {
      return false
    }
  })
}

/** Types `text` into a pane of swarm's tmux server and presses Enter. */
export function typeInto(sb: Sandbox, pane: string, text: string): void {
  execFileSync('tmux', ['-L', 'swarm', 'send-keys', '-t', pane, '-l', text], { env: sb.env })
  execFileSync('tmux', ['-L', 'swarm', 'send-keys', '-t', pane, 'Enter'], { env: sb.env })
}

/** What a pane of swarm's tmux server shows, with its scrollback. */
export function paneText(sb: Sandbox, pane: string): string {
  return execFileSync('tmux', ['-L', 'swarm', 'capture-pane', '-p', '-J', '-S', '-500', '-t', pane], { env: sb.env, encoding: 'utf8' })
}

/** The live Claude Code teammate `name` of `team` (by its argv), on any tmux server. */
export function claudeProcessOf(team: string, name: string): { pid: number; argv: string[] } | undefined {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let argv: string[]
    try {
      argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')
    } catch {
      continue
    }
    if (argv.includes('--agent-id') && argv[argv.indexOf('--agent-id') + 1] === `${name}@${team}` && path.basename(argv[0] ?? '') === 'claude')
      return { pid: Number(entry), argv }
  }
  return undefined
}

/** The process names of `pid`'s chain up to init (its own first). */
export function ancestors(pid: number): string[] {
  const names: string[] = []
  for (let p = pid; p > 1; ) {
    let stat: string
    try {
      stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8')
    } catch {
      break
    }
    names.push(stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')))
    p = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  }
  return names
}
