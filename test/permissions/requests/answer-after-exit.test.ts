import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readResolved, resolveRequest, writePending } from '../../../src/asks/store.js'
import { answerRequest } from '../../../src/permissions/requests/broker.js'
import { createTeam } from '../../../src/teams/team-store.js'
import { pendingPermissionsDir } from '../../../src/home/paths.js'
import { type IsolatedHome, isolatedHome } from '../../support/home.js'

/**
 * Two answers race; the requester gets the first and exits. The second answer, having read the
 * request while it was still pending, finds the requester gone: it must be told who answered —
 * not that the request was cancelled (found by the web page racing the leader console).
 */
let h: IsolatedHome
beforeEach(async () => {
  h = isolatedHome('swarm-answer-after-exit-')
  await createTeam({ name: 't', cwd: h.project, members: [{ name: 'bob' }] }, h.env)
})
afterEach(() => h.cleanup())

async function deadPid(): Promise<number> {
  const child = spawn('true', { stdio: 'ignore' })
  await new Promise((r) => child.once('exit', r))
  return child.pid!
}

describe('an answer that loses to one its requester already took', () => {
  it('is a conflict naming the first answer, and the record keeps the first answer', async () => {
    const request = {
      id: 'perm-1-abcdef',
      kind: 'permission' as const,
      agent: 'bob',
      agentId: 'bob@t',
      toolName: 'Bash',
      toolUseId: 'tu-1',
      input: { command: 'make' },
      description: 'make',
      createdAt: Date.now(),
      pid: await deadPid(),
    }
    await writePending('t', request, h.env)
    const file = path.join(pendingPermissionsDir('t', h.env), `${request.id}.json`)
    const onFile = fs.readFileSync(file)
    await resolveRequest('t', request.id, { decision: 'deny', feedback: 'no', resolvedBy: 'team-lead console' }, h.env)
    // The moment the loser read it: still pending (the winner has not removed the file yet).
    fs.writeFileSync(file, onFile)
    await expect(answerRequest('t', request.id, { kind: 'approve', by: 'carol from the web' }, { env: h.env })).rejects.toThrow(
      /already answered: denied \("no"\) by team-lead console/,
    )
    expect(await readResolved('t', request.id, h.env)).toMatchObject({ decision: 'deny', resolvedBy: 'team-lead console' })
  })
})
