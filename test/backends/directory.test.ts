import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { teamStoreDirectory } from '../../src/backends/directory.js'
import { teamDir } from '../../src/home/paths.js'
import { createTeam, readTeam } from '../../src/teams/team-store.js'
import { isolatedEnv, useTempDir } from '../support/home.js'

describe('the panes recorded in config.json (teamStoreDirectory)', () => {
  let dir: string
  useTempDir('swarm-directory-', (d) => (dir = d))

  it('answers for the team file it is given without reading it again, and for other teams from their files', async () => {
    const env = isolatedEnv(dir)
    await createTeam({ name: 'red', cwd: dir, members: [{ name: 'w1', backendType: 'tmux', tmuxPaneId: '%7' }] }, env)
    await createTeam({ name: 'blue', cwd: dir, members: [{ name: 'w1', backendType: 'tmux', tmuxPaneId: '%9' }] }, env)
    const known = await readTeam('red', env)
    // Gone since it was read: only the team file given can answer for red.
    fs.rmSync(path.join(teamDir('red', env), 'config.json'))
    const directory = teamStoreDirectory(env, known)
    const refs = await directory.lookup(['w1@red', 'w1@blue'])
    expect(refs.get('w1@red')).toMatchObject({ agentId: 'w1@red', paneId: '%7' })
    expect(refs.get('w1@blue')).toMatchObject({ agentId: 'w1@blue', paneId: '%9' })
    expect((await directory.teamPanes('red', 'tmux')).map((r) => r.paneId)).toEqual(['%7'])
    // Without it, red is read from its file, which is gone: no pane recorded.
    expect((await teamStoreDirectory(env).lookup(['w1@red'])).size).toBe(0)
  })
})
