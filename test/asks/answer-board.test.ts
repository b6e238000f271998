import { describe, expect, it } from 'vitest'
import { AnswerBoard, RESOLVED_SAFETY_POLL_MS } from '../../src/asks/answer-board.js'
import { readResolved, resolveRequest, writePending } from '../../src/asks/store.js'
import { useTempDir } from '../support/home.js'

/**
 * The one waiter of the ask flow, on real files: the resolved file is the one truth, and every
 * way a wait ends without an answer — the abort, the timeout, the asker orphaned — is recorded
 * there as `cancelled`, so no request is left pending.
 */
let env: NodeJS.ProcessEnv
useTempDir('swarm-answer-board-', (d) => (env = { SWARM_HOME: d }))

const pending = (id: string) =>
  writePending(
    't',
    { id, kind: 'permission', agent: 'gem', agentId: 'gem@t', toolName: 'Bash', toolUseId: `call-${id}`, input: {}, description: '', createdAt: 1 },
    env,
  )
const board = (orphaned?: () => boolean) => new AnswerBoard({ team: 't', agent: 'gem', env, warn: () => undefined, ...(orphaned && { orphaned }) })

describe('AnswerBoard', () => {
  it('an answer in the resolved file ends the wait with that answer', async () => {
    const b = board()
    const wait = b.expect('r1', 'permission')
    await pending('r1')
    await resolveRequest('t', 'r1', { decision: 'deny', feedback: 'no', resolvedBy: 'lead' }, env)
    expect(await wait).toEqual({ kind: 'deny', by: 'lead', feedback: 'no' })
  })

  it('an abort withdraws the request: recorded as cancelled by the asker', async () => {
    await pending('r2')
    const abort = new AbortController()
    const wait = board().expect('r2', 'permission', { signal: abort.signal })
    abort.abort()
    expect(await wait).toMatchObject({ kind: 'cancelled', by: 'gem' })
    expect(await readResolved('t', 'r2', env)).toMatchObject({ decision: 'cancelled', resolvedBy: 'gem' })
  })

  it('an orphaned asker (its CLI gone) withdraws at the next safety poll', async () => {
    await pending('r3')
    let gone = false
    const wait = board(() => gone).expect('r3', 'permission')
    gone = true
    const started = Date.now()
    expect(await wait).toMatchObject({ kind: 'cancelled', by: 'gem', reason: 'the member that asked is gone' })
    expect(Date.now() - started).toBeLessThan(RESOLVED_SAFETY_POLL_MS * 3)
    expect(await readResolved('t', 'r3', env)).toMatchObject({ decision: 'cancelled' })
  })

  it('a timeout that loses to an answer already on file takes that answer', async () => {
    await pending('r4')
    await resolveRequest('t', 'r4', { decision: 'approve', resolvedBy: 'lead' }, env)
    expect(await board().expect('r4', 'permission', { timeoutMs: 10 })).toMatchObject({ kind: 'approve', by: 'lead' })
  })
})
