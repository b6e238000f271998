import { describe, expect, it } from 'vitest'
import { readMemberState } from '../../src/store/member-state.js'
import { LEAD_NAME } from '../../src/home/paths.js'
import { BIN, useModelSandbox, type Sandbox } from './helpers.js'
import { waitFor } from '../support/wait.js'

/**
 * `swarm leader` of an in-process team stops on SIGTERM however early it comes. Sent the moment
 * its teammate goes idle — the lead agent still being assembled — it used to hang about two runs
 * in three: the lead's loop never saw a signal that fired before it existed, and the teammate's
 * inbox and tasks watches kept the process alive.
 */
describe('swarm leader of an in-process team, SIGTERM as its teammate goes idle', () => {
  let sb: Sandbox
  useModelSandbox({ fallback: { text: 'Noted.' } }, (t) => ({ sb } = t))
  const RUNS = 10
  const STILL_RUNNING = 'still running 8 s after SIGTERM'

  it(`exits every time (${RUNS} runs), the teammate and the lead recorded exited`, async () => {
    for (let i = 0; i < RUNS; i++) {
      const team = `stop${i}`
      const created = await sb.swarm(['team', 'create', team, '--agents', 'a', '--backend', 'in-process', '--cwd', sb.project, '--no-start'])
      expect(created.code, created.stderr).toBe(0)
      const leader = sb.start(process.execPath, [BIN, 'leader', team])
      let out = ''
      leader.stdout?.on('data', (d) => (out += String(d)))
      leader.stderr?.on('data', (d) => (out += String(d)))
      const exited = new Promise<number | null>((resolve) => leader.once('exit', (code) => resolve(code)))
      await waitFor('a idle inside the leader', async () => (await readMemberState(team, 'a', sb.env))?.status === 'idle', 15_000, {
        output: () => out,
      })
      leader.kill('SIGTERM')
      const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r(STILL_RUNNING), 8_000))])
      expect(code, `run ${i + 1} of ${RUNS}:\n${out}`).toBe(0)
      expect((await readMemberState(team, 'a', sb.env))?.status).toBe('exited')
      expect((await readMemberState(team, LEAD_NAME, sb.env))?.status).toBe('exited')
    }
  }, 150_000)
})
