import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { sandbox, type Sandbox } from '../e2e/helpers.js'
import { hasTmux } from '../support/tmux.js'

/** An agent CLI that is not installed is refused before its pane opens, not left to die with 127. */
describe.skipIf(!hasTmux)('spawn --agent of a CLI that is not installed', () => {
  let sb: Sandbox | undefined
  afterEach(async () => {
    await sb?.cleanup()
    sb = undefined
  })

  it('exits 7 with one line naming the CLI and where it was looked for; nothing runs for it', async () => {
    sb = sandbox({ PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, SWARM_AGENT_BIN_DIR: '' })
    expect((await sb.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
    const r = await sb.swarm(['spawn', 't', 'p', '--agent', 'pi', '--backend', 'tmux'])
    expect(r.code).toBe(7)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/^swarm: pi: `pi` is not installed \(not on PATH or in SWARM_AGENT_BIN_DIR\) — install it, or point SWARM_AGENT_BIN_DIR/)
    const status = JSON.parse((await sb.swarm(['status', 't', '--json'])).stdout) as {
      members: Array<{ name: string; state: string; pane?: string }>
    }
    expect(status.members.find((m) => m.name === 'p')?.state).not.toBe('alive')
  })
})
