import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN, sandbox, type Sandbox } from './helpers.js'
import { waitFor } from '../support/wait.js'
import { hasTmux } from '../support/tmux.js'

describe('viewers that run until stopped', () => {
  let sb: Sandbox
  beforeAll(async () => {
    sb = sandbox()
    expect((await sb.swarm(['team', 'create', 'view', '--agents', 'alice', '--no-start', '--cwd', sb.project])).code).toBe(0)
    // A member in tmux: status then runs tmux, which arms the process registry's signal handlers.
    if (hasTmux) expect((await sb.swarm(['spawn', 'view', 'pane', '--backend', 'tmux', '--command', 'sleep 60'])).code).toBe(0)
  })
  afterAll(async () => {
    await sb?.cleanup()
  })

  // proper-lockfile's signal-exit listens for SIGTERM and defers to any other listener; our process
  // registry did the same, so these once ignored SIGTERM for good.
  for (const args of [
    ['status', 'view', '--watch'],
    ['logs', 'view', 'alice', '--follow'],
    ['inbox', 'view', 'alice', '--follow'],
  ]) {
    it(`swarm ${args.join(' ')} prints and stops on SIGTERM`, async () => {
      const child = sb.start(process.execPath, [BIN, ...args])
      let out = ''
      child.stdout!.on('data', (d) => (out += String(d)))
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : null))))
      if (args[0] === 'status') await waitFor('the first table', () => out.includes('alice'))
      else if (args[0] === 'inbox') {
        await new Promise((r) => setTimeout(r, 500))
        expect((await sb.swarm(['send', 'view', 'alice', 'ping'])).code).toBe(0)
        await waitFor('the message followed', () => out.includes('ping'))
      } else await new Promise((r) => setTimeout(r, 500))
      child.kill('SIGTERM')
      const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), 5_000))])
      expect(code).not.toBe('still running')
    }, 20_000)
  }
})
