import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { TeammateViews, screenLogPath } from '../../src/leader/teammate-views.js'
import { isolatedEnv, tempDir } from '../backends/harness.js'

describe('a hosted teammate’s screen.log', () => {
  let root: string
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }))

  it('is never written through a link planted in its place, and gets no view that would tail the link', async () => {
    root = tempDir('swarm-views-')
    const env = { ...isolatedEnv(root), TMUX: '', TMUX_PANE: '' }
    const target = path.join(root, 'elsewhere.txt')
    fs.writeFileSync(target, 'not swarm’s\n')
    const file = screenLogPath('crew', 'ann', env)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.symlinkSync(target, file)
    const warnings: string[] = []
    const views = new TeammateViews('crew', 'tmux', env, (line) => warnings.push(line))
    views.stream('ann').write('ann’s output\n')
    await views.close()
    expect(fs.readFileSync(target, 'utf8')).toBe('not swarm’s\n')
    expect(warnings.join('\n')).toMatch(/ann's output cannot be written/)
    expect(warnings.join('\n')).not.toMatch(/could not open the pane/)
  })
  it('ends a teammate’s view with a last line in its file; one ended before its view opened gets none; started again, it asks for a new one', async () => {
    root = tempDir('swarm-views-')
    const env = { ...isolatedEnv(root), TMUX: '', TMUX_PANE: '' }
    const warnings: string[] = []
    const views = new TeammateViews('crew', 'tmux', env, (line) => warnings.push(line))
    const first = views.stream('ann')
    first.write('ann’s output\n')
    views.end('ann', 'killed')
    views.end('ann', 'killed') // once
    await views.settled()
    // Its view was still queued: never opened (no tmux here would say it could not be).
    expect(warnings).toEqual([])
    const again = views.stream('ann')
    expect(again).toBe(first)
    again.write('ann again\n')
    await views.settled()
    expect(warnings.join('\n')).toMatch(/could not open the pane of ann/)
    await views.close()
    expect(fs.readFileSync(screenLogPath('crew', 'ann', env), 'utf8')).toBe('ann’s output\n\n— ann ended (killed) —\nann again\n')
  })
})
