import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { readTeam } from '../../src/teams/team-store.js'
import { processesWithEnv } from '../support/proc.js'
import { REPO } from '../support/repo.js'
import { hasTmux, tmuxSessions } from '../support/tmux.js'
import { waitFor } from '../support/wait.js'
import { BIN, sandbox, type Sandbox } from './helpers.js'

/**
 * The README's Quick start, typed as a newcomer types it: each line between its walk markers goes,
 * as written, into a real bash in a real terminal (a pane of a private tmux server standing for
 * the user's terminal, TMUX unset inside, `swarm` on PATH), shell 1 and shell 2 being two of its
 * windows. The one prompt is answered by typing `y` Enter into the attached client, detach is
 * Ctrl-b d. Only the PORT of the pasted export line is taken from what `model serve` printed.
 */
const README = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8')

/** The Quick start's command lines, comments and blank lines dropped. */
export function walkLines(readme: string): string[] {
  const block = /<!-- walk:begin -->\n```sh\n([\s\S]*?)```\n<!-- walk:end -->/.exec(readme)?.[1]
  if (!block) throw new Error('README.md has no walk block')
  return block
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
}

const PROMPT = '__walk_prompt__'

describe.skipIf(!hasTmux)('the README quick start', () => {
  let sb: Sandbox | undefined
  afterEach(async () => {
    // The terminal's server, swarm's and a demo's cut short: cleanup reaps every one under its TMUX_TMPDIR.
    await sb?.cleanup()
    sb = undefined
  })

  it('runs as written: demo, an offline team, a prompt answered, detach, attach, kill-server, resume, delete', async () => {
    sb = sandbox()
    const s = sb
    const bin = path.join(s.root, 'bin')
    fs.mkdirSync(bin)
    fs.writeFileSync(path.join(bin, 'swarm'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, { mode: 0o755 })
    // `mktemp -d` (the walk's scratch project) inside the test's directory, where hello.txt is looked for.
    const tmp = path.join(s.root, 'tmp')
    fs.mkdirSync(tmp)
    const env: NodeJS.ProcessEnv = { ...s.env, PATH: `${bin}:${s.env.PATH}`, TERM: 'xterm-256color', HISTFILE: '/dev/null', TMPDIR: tmp }
    delete env.CI
    const tmux = (...args: string[]) => execFileSync('tmux', ['-L', 'user', ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    const shell = `env -u TMUX -u TMUX_PANE PS1='${PROMPT} $? ' bash --norc --noprofile`
    tmux('new-session', '-d', '-s', 'term', '-n', 'shell1', '-x', '120', '-y', '40', '-c', s.project, shell)
    tmux('new-window', '-d', '-t', 'term', '-n', 'shell2', '-c', s.project, shell)
    tmux('set', '-g', 'history-limit', '20000')
    const screen = (w: string) => tmux('capture-pane', '-p', '-J', '-S', '-', '-t', `term:${w}`)
    const prompts = (w: string) => screen(w).split(PROMPT).length - 1
    const type = (w: string, line: string) => {
      tmux('send-keys', '-t', `term:${w}`, '-l', line)
      tmux('send-keys', '-t', `term:${w}`, 'Enter')
    }
    /** Types a line into shell 2 and waits for its prompt; returns the exit status and what it printed. */
    const run = async (line: string, timeoutMs = 60_000) => {
      const before = prompts('shell2')
      type('shell2', line)
      await waitFor(`"${line}" to finish`, () => prompts('shell2') > before, timeoutMs, { output: () => screen('shell2') })
      const text = screen('shell2')
      const last = text.slice(text.lastIndexOf(line))
      const rc = Number(new RegExp(`${PROMPT} (\\d+) *$`).exec(last.trimEnd())?.[1])
      return { rc, out: last }
    }
    await waitFor('both shells', () => prompts('shell1') > 0 && prompts('shell2') > 0, 10_000)

    const lines = walkLines(README)
    expect(lines.length).toBeGreaterThanOrEqual(8)
    let team: string | undefined
    for (const line of lines) {
      if (line === 'swarm demo') {
        // In a terminal the demo asks before its one command runs: the newcomer says yes.
        const before = prompts('shell2')
        type('shell2', line)
        await waitFor("the demo's question", () => /approve\? \[Y\/n\]/.test(screen('shell2')), 120_000, { output: () => screen('shell2') })
        type('shell2', 'y')
        await waitFor('the demo to finish', () => prompts('shell2') > before, 120_000, { output: () => screen('shell2') })
        expect(screen('shell2')).toMatch(/verdict\s+Review of src\/slug\.js: PASS/)
        continue
      }
      if (/^swarm model serve\b/.test(line)) {
        // Shell 1 runs the model; it prints the lines to export.
        type('shell1', line)
        await waitFor('the exports', () => /export ANTHROPIC_API_KEY=\S+/.test(screen('shell1')), 20_000, { output: () => screen('shell1') })
        continue
      }
      if (line.startsWith('export ')) {
        const printed = Object.fromEntries([...screen('shell1').matchAll(/export (ANTHROPIC_\w+)=(\S+)/g)].map((m) => [m[1], m[2]]))
        const named = Object.fromEntries([...line.matchAll(/(ANTHROPIC_\w+)=(\S+)/g)].map((m) => [m[1], m[2]]))
        expect(Object.keys(named).sort()).toEqual(Object.keys(printed).sort())
        expect(named.ANTHROPIC_API_KEY).toBe(printed.ANTHROPIC_API_KEY)
        // The README's PORT is whatever the server printed: that is what the user pastes.
        expect(printed.ANTHROPIC_BASE_URL).toMatch(new RegExp(`^${named.ANTHROPIC_BASE_URL.replace('PORT', '\\d+').replaceAll('.', '\\.')}$`))
        expect(
          (
            await run(
              `export ${Object.entries(printed)
                .map(([k, v]) => `${k}=${v}`)
                .join(' ')}`,
            )
          ).rc,
        ).toBe(0)
        continue
      }
      if (/^swarm attach (\S+)$/.test(line)) {
        team = /^swarm attach (\S+)$/.exec(line)![1]
        const before = prompts('shell2')
        type('shell2', line)
        // The team's window, in the terminal: bob's request on the leader console.
        await waitFor('the permission prompt on the console', () => /\[y\] approve once/.test(screen('shell2')), 90_000, {
          output: () => screen('shell2'),
        })
        tmux('send-keys', '-t', 'term:shell2', 'y', 'Enter')
        await waitFor(
          'hello.txt written after the approval',
          () =>
            fs
              .readdirSync(s.root, { recursive: true })
              .map(String)
              .some((f) => f.endsWith('hello.txt')),
          60_000,
          {
            output: () => screen('shell2'),
          },
        )
        tmux('send-keys', '-t', 'term:shell2', 'C-b', 'd')
        await waitFor('detached, back at the shell', () => prompts('shell2') > before, 15_000, { output: () => screen('shell2') })
        expect(tmuxSessions(env)).toContain(`swarm-${team}`)
        continue
      }
      if (line.startsWith('tmux ')) {
        expect((await run(line)).rc).toBe(0)
        await waitFor('the tmux server gone', () => tmuxSessions(env).length === 0, 15_000)
        continue
      }
      const r = await run(line, 120_000)
      expect(r.rc, `${line}\n${r.out}`).toBe(0)
      const created = /^swarm team create (\S+)/.exec(line)
      if (created) {
        team = created[1]
        expect(tmuxSessions(env)).toContain(`swarm-${team}`)
      }
      if (/^swarm team resume /.test(line)) {
        expect(tmuxSessions(env)).toContain(`swarm-${team}`)
        const config = await readTeam(team!, env)
        expect(config.members.map((m) => m.name).sort()).toEqual(['alice', 'bob', 'team-lead'])
      }
      if (/^swarm status /.test(line)) expect(r.out).toMatch(/alice/)
    }
    // Deleted: no team, no session, no process of the walk's state root but the model in shell 1.
    expect(team).toBeDefined()
    expect(fs.existsSync(path.join(s.env.SWARM_HOME!, 'teams', team!))).toBe(false)
    expect(tmuxSessions(env)).toEqual([])
    const left = processesWithEnv(`SWARM_HOME=${s.env.SWARM_HOME}`).filter((p) => !/model serve|bash|tmux -L user|\/bin\/sh/.test(p))
    expect(left).toEqual([])
    tmux('send-keys', '-t', 'term:shell1', 'C-c')
  }, 480_000)
})
