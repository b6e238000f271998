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
})
