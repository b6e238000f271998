import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createExecutor } from '../../src/backends/registry.js'
import type { PaneExecutor } from '../../src/backends/types.js'
import { createTeam } from '../../src/teams/team-store.js'
import { waitFor } from '../support/wait.js'
import { hasTmux, reapTmux } from '../support/tmux.js'
import { isolatedEnv, tempDir } from './harness.js'

/**
 * A teammate's output against what swarm sets on its pane, on a real isolated tmux server whose
 * tmux.conf turns everything on (passthrough, renames): a hidden teammate (its pane broken out into
 * a window of its own) passes no escape through either; and titles or window names it sets change
 * none of the pane options swarm finds panes by.
 */
describe.skipIf(!hasTmux)("tmux: a teammate's escapes, hidden or renaming", () => {
  let root: string
  let env: NodeJS.ProcessEnv
  let tmux: PaneExecutor
  const t = (...args: string[]) => execFileSync('tmux', ['-L', 'swarm', ...args], { env, encoding: 'utf8' })

  beforeEach(async () => {
    root = tempDir('swarm-tmux-adv3-')
    env = isolatedEnv(root)
    fs.writeFileSync(path.join(env.HOME!, '.tmux.conf'), 'set -g allow-passthrough on\nset -g allow-rename on\nset -g automatic-rename on\n')
    tmux = createExecutor('tmux', { env })
    await createTeam({ name: 'crew', cwd: root }, env)
  })
  afterEach(async () => {
    await reapTmux(env)
    fs.rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
  })

  const printing = (text: string) => [process.execPath, '-e', `process.stdout.write(${JSON.stringify(text)}); setTimeout(() => {}, 60000)`]

  it('a hidden teammate still has no passthrough', async () => {
    await tmux.ensureSession('crew', { argv: ['sleep', '600'], cwd: root })
    const mate = await tmux.spawn({ team: 'crew', name: 'm', argv: ['sleep', '600'], cwd: root })
    expect(t('display', '-p', '-t', mate.paneId, '#{allow-passthrough}').trim()).toBe('0')
    await tmux.hide('m@crew')
    expect(t('display', '-p', '-t', mate.paneId, '#{window_name}').trim()).toBe('hidden:m')
    expect(t('display', '-p', '-t', mate.paneId, '#{allow-passthrough}').trim()).toBe('0')
    await tmux.show('m@crew')
    expect(t('display', '-p', '-t', mate.paneId, '#{allow-passthrough}').trim()).toBe('0')
  })

  it("a title and a window name set by its output change nothing swarm finds panes by; kill takes the teammate's pane", async () => {
    const leader = await tmux.ensureSession('crew', { argv: ['sleep', '600'], cwd: root })
    const fake = `\x1b]2;team-lead\x07\x1bkswarm-crew\x1b\\\x1b]0;team-lead@crew\x07renamed\n`
    const mate = await tmux.spawn({ team: 'crew', name: 'm', argv: printing(fake), cwd: root })
    await waitFor('its output parsed', () => t('capture-pane', '-p', '-t', mate.paneId).includes('renamed') || undefined, 5_000)
    const rows = () => t('list-panes', '-a', '-F', '#{pane_id} #{@swarm_agent} #{@agent_name}').trim().split('\n').sort()
    expect(rows()).toEqual([`${leader.paneId} team-lead@crew team-lead`, `${mate.paneId} m@crew m`].sort())
    const states = await tmux.status(['team-lead@crew', 'm@crew'])
    expect([...states.values()].every((s) => s.state === 'alive')).toBe(true)
    await tmux.kill('m@crew')
    expect(rows()).toEqual([`${leader.paneId} team-lead@crew team-lead`])
  })
})
