import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { notifyTmuxClients } from '../../src/asks/notify.js'
import { isolatedHome, type IsolatedHome } from '../support/home.js'
import { hasTmux, reapTmux } from '../support/tmux.js'

/*
 * tmux freezes a client's whole screen while a message is on its status line (status_message_set
 * sets TTY_FREEZE until the message times out or a key is pressed). A teammate's notification
 * that reaches tmux before the leader console has drawn the prompt therefore hid that prompt for
 * TMUX_MESSAGE_MS — the flake of test/e2e/console-layout.test.ts. Here the race is forced: the
 * notification first, then the leader pane's output, on a real client of a real server.
 */

let h: IsolatedHome
beforeEach(() => {
  h = isolatedHome('swarm-notify-freeze-')
})
afterEach(async () => {
  await reapTmux(h.env, 'outer')
  await reapTmux(h.env)
  await h.cleanup()
})

const request = { team: 'crew', agent: 'alice', toolName: 'Bash', summary: 'npm test' }

function tmux(socket: string, ...args: string[]): string {
  return execFileSync('tmux', ['-u', '-L', socket, '-f', '/dev/null', ...args], { env: h.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

/**
 * swarm's server with session swarm-crew: the leader's pane (tagged team-lead@crew, printing
 * what `print` is given) in one window and alice's in another, with a terminal of 80×24
 * (a pane of a private outer server) attached to it. Resolves once the client is attached.
 */
async function team(): Promise<{ print: (text: string) => void; screen: () => string }> {
  const out = path.join(h.base, 'leader.out')
  const lead = `while [ ! -f ${out} ]; do sleep 0.02; done; cat ${out}; sleep 600`
  tmux('swarm', 'new-session', '-d', '-x', '80', '-y', '24', '-s', 'swarm-crew', '-n', 'lead', lead)
  tmux('swarm', 'set', '-p', '-t', 'swarm-crew:lead', '@swarm_agent', 'team-lead@crew')
  tmux('swarm', 'new-window', '-d', '-t', 'swarm-crew', '-n', 'mates', 'sleep 600')
  tmux('swarm', 'set', '-p', '-t', 'swarm-crew:mates', '@swarm_agent', 'alice@crew')
  tmux('outer', 'new-session', '-d', '-x', '80', '-y', '24', '-s', 'terminal', 'env -u TMUX tmux -L swarm attach -t swarm-crew')
  tmux('outer', 'set', '-g', 'status', 'off')
  const screen = () => tmux('outer', 'capture-pane', '-p', '-t', 'terminal')
  const attached = await until(() => tmux('swarm', 'list-clients').trim() !== '' && /0:lead\*/.test(screen()), 10_000)
  if (!attached) throw new Error(`the terminal did not attach:\n${screen()}`)
  // The console's output: the pane prints it as soon as the file is there (renamed into place whole).
  const print = (text: string) => {
    fs.writeFileSync(`${out}.tmp`, text)
    fs.renameSync(`${out}.tmp`, out)
  }
  return { print, screen }
}

async function until(ok: () => boolean, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) if (ok()) return true
  return ok()
}

describe.skipIf(!hasTmux)('notifyTmuxClients on a real tmux client', () => {
  it("a client showing the leader's pane gets no status message: the prompt drawn after the notification is on screen at once", async () => {
    const { print, screen } = await team()
    const env = { ...h.env, SWARM_TMUX_SOCKET: 'swarm' }
    expect(await notifyTmuxClients(request, { env })).toBe(0)
    // The console draws its prompt only now (the race, forced): a frozen client would show it after 5 s.
    print('? [c0ffee] alice wants to use Bash: npm test\n')
    expect(await until(() => /wants to use Bash/.test(screen()), 3_000), screen()).toBe(true)
    expect(screen()).not.toMatch(/alice asks to use Bash/)
  }, 30_000)

  it('a client looking at another window still gets the message on its status line', async () => {
    const { screen } = await team()
    tmux('swarm', 'select-window', '-t', 'swarm-crew:mates')
    expect(await until(() => /1:mates\*/.test(screen()), 5_000), screen()).toBe(true)
    const env = { ...h.env, SWARM_TMUX_SOCKET: 'swarm' }
    expect(await notifyTmuxClients(request, { env })).toBe(1)
    expect(await until(() => /swarm: alice asks to use Bash: npm test/.test(screen()), 3_000), screen()).toBe(true)
  }, 30_000)
})
