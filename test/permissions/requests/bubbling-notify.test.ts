import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { notificationText, notifyHuman, notifyTmuxClients } from '../../../src/asks/notify.js'

let dir: string
let log: string

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-notify-'))
  log = path.join(dir, 'tmux.log')
  // A fake tmux: records its argv (one JSON array per line), has one attached client showing
  // window @1, and the panes that $FAKE_PANES lists (the leader's, alice's).
  const fake = path.join(dir, 'bin', 'tmux')
  await fs.mkdir(path.dirname(fake))
  await fs.writeFile(
    fake,
    `#!/usr/bin/env node
require('fs').appendFileSync(${JSON.stringify(log)}, JSON.stringify(process.argv.slice(2)) + '\\n')
if (process.argv.includes('list-clients')) console.log('client\\t/dev/pts/7\\t@1\\n' + (process.env.FAKE_PANES ?? ''))
`,
    { mode: 0o755 },
  )
})
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
})

const request = { agent: 'alice', toolName: 'Bash', summary: 'echo #1 done' }

async function calls(): Promise<string[][]> {
  const text = await fs.readFile(log, 'utf8').catch(() => '')
  await fs.rm(log, { force: true })
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
}

describe('notifyHuman', () => {
  it('rings the bell and sends an OSC 9 notification', () => {
    let out = ''
    notifyHuman(request, { write: (s: string) => (out += s) }, { env: {} })
    expect(out).toBe('\x07\x1b]9;swarm: alice asks to use Bash: echo #1 done\x07')
  })

  it('wraps the OSC in tmux passthrough inside tmux', () => {
    let out = ''
    notifyHuman({ ...request, kind: 'plan' }, { write: (s: string) => (out += s) }, { env: { TMUX: '/tmp/tmux-0/default,1,0' } })
    expect(out).toBe('\x07\x1bPtmux;\x1b\x1b]9;swarm: alice asks team-lead to approve a plan\x07\x1b\\')
  })

  it("never passes the model's escape sequences to the terminal", () => {
    const text = notificationText({ agent: 'alice', toolName: 'Bash', summary: 'x\x1b]0;pwned\x07\nrm -rf /' })
    expect([...text].some((ch) => ch.charCodeAt(0) < 0x20)).toBe(false)
    expect(text).toBe('alice asks to use Bash: x␛]0;pwned␇⏎rm -rf /') // shown as data, on one line; the newline visible
  })

  it('a long input is cut saying so, with how much is left and the /show that prints it', () => {
    const command = `npm test -- ${'--x=1 '.repeat(50)}--setupFiles=./.cache/x.js`
    const text = notificationText({ id: 'perm-lq2x3k-7a2a0f', agent: 'alice', toolName: 'Bash', summary: command })
    expect(text).toMatch(/^\[7a2a0f\] alice asks to use Bash: npm test -- --x=1 .* … \(\+\d+ chars: \/show 7a2a0f\)$/)
    const kept = text.slice(text.indexOf('npm test'), text.indexOf(' … ('))
    expect(Number(/\+(\d+) chars/.exec(text)?.[1])).toBe(command.length - kept.length)
  })
})

describe('notifyTmuxClients', () => {
  const env = (extra: NodeJS.ProcessEnv) => ({ PATH: `${path.join(dir, 'bin')}:${process.env.PATH}`, ...extra })

  it("outside tmux: swarm's server and the team's session, # escaped", async () => {
    const n = await notifyTmuxClients({ ...request, team: 'crew' }, { env: env({ SWARM_TMUX_SOCKET: 'sock' }) })
    expect(n).toBe(1)
    expect(await calls()).toEqual([
      [
        ...['-L', 'sock', 'list-clients', '-t', 'swarm-crew', '-F', 'client\t#{client_name}\t#{window_id}', ';'],
        ...['list-panes', '-s', '-t', 'swarm-crew', '-F', 'pane\t#{window_id}\t#{window_zoomed_flag}\t#{pane_active}\t#{@swarm_agent}'],
      ],
      ['-L', 'sock', 'display-message', '-c', '/dev/pts/7', '-d', '5000', 'swarm: alice asks to use Bash: echo ##1 done — swarm perms crew'],
    ])
  })

  it("no message on a client that shows the leader's pane (tmux would freeze the screen the prompt is drawn on)", async () => {
    const panes = (leader: string) => `pane\t@1\t${leader}\tteam-lead@crew\npane\t@2\t0\t1\talice@crew`
    expect(await notifyTmuxClients({ ...request, team: 'crew' }, { env: env({ FAKE_PANES: panes('0\t0') }) })).toBe(0)
    expect((await calls()).map((c) => c.find((a) => /^(list-clients|display-message)$/.test(a)))).toEqual(['list-clients'])
    // Another pane of that window zoomed over it: the leader's pane is hidden, the message is shown.
    expect(await notifyTmuxClients({ ...request, team: 'crew' }, { env: env({ FAKE_PANES: panes('1\t0') }) })).toBe(1)
    // The leader of another team in the client's window does not count.
    expect(await notifyTmuxClients({ ...request, team: 'other' }, { env: env({ FAKE_PANES: panes('0\t0') }) })).toBe(1)
    await calls()
  })

  it('inside tmux: the server from $TMUX and the session of $TMUX_PANE', async () => {
    await notifyTmuxClients({ ...request, team: 'crew' }, { env: env({ TMUX: '/tmp/x/default,1,0', TMUX_PANE: '%3' }) })
    const [list] = await calls()
    expect(list.slice(0, 3)).toEqual(['list-clients', '-t', '%3'])
    expect(list.slice(list.indexOf('list-panes'), list.indexOf('list-panes') + 4)).toEqual(['list-panes', '-s', '-t', '%3'])
  })

  it('without tmux it quietly does nothing', async () => {
    expect(await notifyTmuxClients({ ...request, team: 'crew' }, { env: { PATH: path.join(dir, 'empty') } })).toBe(0)
  })
})
