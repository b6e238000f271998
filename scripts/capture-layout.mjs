#!/usr/bin/env node
/**
 * Renders what a user sees of a real team in a terminal of a given size: a team of three on the
 * loopback model (no key, nothing leaves 127.0.0.1), a tmux client of that size attached (itself a
 * pane of a private outer tmux server standing for the terminal), one long permission prompt on
 * the leader's console; the terminal's text is the capture. Everything lives in a temp dir, and is
 * reaped after. Run `npm run build` first.
 *
 *   node scripts/capture-layout.mjs                    # writes docs/img/layout-120x40.txt
 *   node scripts/capture-layout.mjs --size 80x24 --out -   # prints it
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const BIN = path.join(ROOT, 'bin', 'swarm.js')
const TEAM = 'demo'
/** The command alice asks to run: long enough to wrap in a 60-column leader pane. */
export const LONG_COMMAND =
  'npm run build && npx vitest run --reporter=verbose --coverage.enabled test/leader/console.test.ts test/terminal/wrap.test.ts'

const tool = (name, input) => ({ content: [{ type: 'tool_use', name, input }] })
const SCENARIO = {
  agents: { alice: [{ ...tool('Bash', { command: LONG_COMMAND }), when: { lastUserIncludes: 'run the tests' } }, { text: 'ok' }] },
  fallback: { text: 'Noted.' },
}

/**
 * A real run at `columns` × `rows`: returns the terminal's text and each pane's window, size and
 * agent (`tmux list-panes` of the team's server), then reaps everything it started.
 */
export async function captureLayout({ columns, rows }) {
  const { startLoopbackServer } = await import(path.join(ROOT, 'dist/loopback-model/loopback-server.js'))
  const { killTree, processTrees } = await import(path.join(ROOT, 'dist/process/tree.js'))
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-capture-')))
  const project = path.join(base, 'project')
  for (const d of ['home', 'tmux', 'project']) fs.mkdirSync(path.join(base, d), { recursive: true })
  const server = await startLoopbackServer({ scenario: SCENARIO })
  const env = { ...process.env, SWARM_HOME: path.join(base, 'home'), TMUX_TMPDIR: path.join(base, 'tmux'), NO_COLOR: '1' }
  for (const k of [
    'TMUX',
    'TMUX_PANE',
    'SWARM_TMUX_SOCKET',
    'CLAUDE_CONFIG_DIR',
    'SWARM_TEAM',
    'SWARM_AGENT_ID',
    'SWARM_AGENT_NAME',
    'SWARM_TEAM_DIR',
  ])
    delete env[k]
  Object.assign(env, { ANTHROPIC_API_KEY: 'loopback', ANTHROPIC_BASE_URL: server.url, HOME: path.join(base, 'home') })
  const swarm = (...args) =>
    execFileSync(process.execPath, [BIN, ...args], { env, cwd: project, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  const tmux = (socket, ...args) => execFileSync('tmux', ['-u', '-L', socket, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  try {
    swarm('team', 'create', TEAM, '--agents', 'alice,bob,carol', '--backend', 'tmux', '--mode', 'default', '--cwd', project, '--no-attach')
    // The user's terminal: a pane of the given size on a server of its own, attached to the team.
    tmux(
      'outer',
      '-f',
      '/dev/null',
      'new-session',
      '-d',
      '-x',
      String(columns),
      '-y',
      String(rows),
      '-s',
      'terminal',
      `env -u TMUX tmux -L swarm attach -t swarm-${TEAM}`,
    )
    tmux('outer', 'set', '-g', 'status', 'off')
    const panes = () =>
      tmux('swarm', 'list-panes', '-a', '-F', '#{window_name}\t#{pane_width}\t#{pane_height}\t#{@swarm_agent}\t#{pane_id}')
        .trim()
        .split('\n')
        .map((l) => {
          const [window, width, height, agent, pane] = l.split('\t')
          return { window, width: Number(width), height: Number(height), agent, pane }
        })
    const leaderPane = () => panes().find((p) => p.agent === `team-lead@${TEAM}`)?.pane
    // The prompt is asked for once the client is attached and the layout has settled: a line
    // printed at another width is re-flowed by tmux, mid-word, when the pane changes size.
    let seen = ''
    for (const deadline = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 500))) {
      const now = JSON.stringify(panes())
      if (tmux('swarm', 'list-clients').trim() && now === seen) break
      if (Date.now() > deadline) throw new Error(`the layout did not settle: ${now}`)
      seen = now
    }
    swarm('send', TEAM, 'alice', 'please run the tests')
    let text = ''
    let last = ''
    let lead = ''
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
      const pane = leaderPane()
      lead = pane ? tmux('swarm', 'capture-pane', '-p', '-t', pane) : ''
      text = tmux('outer', 'capture-pane', '-p', '-t', 'terminal')
      // Done once the prompt is on screen and the picture stopped changing (the layout settled).
      if (/\[y\] approve once/.test(lead) && text === last) break
      last = text
    }
    // The pane has it but the terminal does not: its tmux client stopped redrawing (a status message freezes it).
    if (!/approve once/.test(text) && /approve once/.test(lead))
      throw new Error(
        `the leader's pane shows the prompt but the terminal does not (its tmux client did not redraw):\n${text}\n--- the leader's pane:\n${lead}`,
      )
    if (!/approve once/.test(text)) throw new Error(`no permission prompt on screen after 60 s:\n${text}`)
    const pane = leaderPane()
    return { text: text.replace(/\s+$/, '') + '\n', panes: panes(), leader: tmux('swarm', 'capture-pane', '-p', '-t', pane) }
  } finally {
    const pids = []
    for (const socket of ['swarm', 'outer']) {
      try {
        pids.push(
          ...tmux(socket, 'list-panes', '-a', '-F', '#{pane_pid}')
            .split('\n')
            .map(Number)
            .filter((p) => p > 0),
        )
        tmux(socket, 'kill-server')
      } catch {
        // that server is not running: nothing of it to reap
      }
    }
    const trees = [...(await processTrees(pids)).values()].flat()
    await Promise.all(trees.map((p) => killTree(p, { graceMs: 500 })))
    await server.close()
    fs.rmSync(base, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(name)
    return i > 0 ? process.argv[i + 1] : fallback
  }
  const [columns, rows] = arg('--size', '120x40').split('x').map(Number)
  const out = arg('--out', path.join(ROOT, 'docs', 'img', `layout-${columns}x${rows}.txt`))
  const { text } = await captureLayout({ columns, rows })
  if (out === '-') process.stdout.write(text)
  else {
    fs.mkdirSync(path.dirname(out), { recursive: true })
    fs.writeFileSync(out, text)
    console.log(`wrote ${path.relative(process.cwd(), out)}`)
  }
}
