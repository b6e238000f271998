import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { teamContext } from '../../src/agent/compaction/restore.js'
import { writePending } from '../../src/asks/store.js'
import { pendingPermissionsDir } from '../../src/home/paths.js'
import { isolatedHome, type IsolatedHome } from '../support/home.js'

/** Compaction's team context reads the open requests through the one request store (asks/store), not the directory itself. */

let h: IsolatedHome
afterEach(() => h?.cleanup())

const request = (agent: string, id: string, description: string) => ({
  id,
  kind: 'permission' as const,
  agent,
  agentId: `${agent}@t`,
  toolName: 'Bash',
  toolUseId: `toolu_${id}`,
  input: { command: description },
  description,
  createdAt: Date.now(),
})

describe('teamContext', () => {
  it("lists this agent's open requests only; a corrupt request file is kept aside by the store, never deleted", async () => {
    h = isolatedHome('swarm-team-context-')
    await writePending('t', request('alice', 'permission-1-aaaaaa', 'npm test'), h.env)
    await writePending('t', request('bob', 'permission-2-bbbbbb', 'rm -rf build'), h.env)
    const dir = pendingPermissionsDir('t', h.env)
    await fs.writeFile(path.join(dir, 'permission-3-cccccc.json'), '{"agent": "alice", "toolName"')
    const text = await teamContext('t', 'alice', h.env)
    expect(text).toContain('Your open permission requests:\n- Bash: npm test')
    expect(text).not.toContain('rm -rf build')
    const left = await fs.readdir(dir)
    expect(left.some((f) => f.startsWith('permission-3-cccccc.json') && f !== 'permission-3-cccccc.json')).toBe(true)
  })
})
