import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { projectAgentsDir } from '../../src/agent/definitions/load.js'
import { spawnTeammates } from '../../src/supervisor/teammates.js'
import { createTeam, readTeam } from '../../src/teams/team-store.js'
import { isolatedHome, type IsolatedHome } from '../support/home.js'

/**
 * An agent definition's `host:` places its type's members on that machine: the spawn goes to the
 * host's connection (here one that cannot resolve, so the real ssh fails fast, naming it) and the
 * member is recorded with its host — never started on this machine.
 */

let h: IsolatedHome
beforeEach(async () => {
  h = isolatedHome()
  await createTeam({ name: 'placed', cwd: h.project }, h.env)
  const dir = projectAgentsDir(h.project)
  await fs.mkdir(dir, { recursive: true })
  await fs.writeFile(path.join(dir, 'trainer.md'), '---\nname: trainer\ndescription: trains models\nhost: ci@gpu-box.invalid\n---\nYou train.\n')
})
afterEach(() => h.cleanup())

describe("a definition's host:", () => {
  it('sends a member of that type to its host, and records the host', async () => {
    await expect(
      spawnTeammates('placed', [{ name: 'tina', agentType: 'trainer' }], { env: { ...h.env, SWARM_REMOTE_TIMEOUT_MS: '5000' } }),
    ).rejects.toThrow(/gpu-box\.invalid/)
    const tina = (await readTeam('placed', h.env)).members.find((m) => m.name === 'tina')
    expect(tina?.host).toBe('ci@gpu-box.invalid')
    expect(tina?.isActive).not.toBe(true)
  })

  it('an explicit host of the spawn wins over the definition', async () => {
    await expect(
      spawnTeammates('placed', [{ name: 'tom', agentType: 'trainer', host: 'other.invalid' }], {
        env: { ...h.env, SWARM_REMOTE_TIMEOUT_MS: '5000' },
      }),
    ).rejects.toThrow(/other\.invalid/)
    expect((await readTeam('placed', h.env)).members.find((m) => m.name === 'tom')?.host).toBe('other.invalid')
  })
})
