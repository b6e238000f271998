import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runHook } from '../../src/adapters/hook.js'
import { listPending } from '../../src/asks/store.js'
import { readMemberState } from '../../src/store/member-state.js'
import { createTeam } from '../../src/teams/team-store.js'
import { type IsolatedHome, isolatedHome } from '../support/home.js'
import { BIN } from '../support/repo.js'
import { waitFor } from '../support/wait.js'

const run = promisify(execFile)

/**
 * Gemini CLI runs one event's hooks side by side: a call's BeforeTool (`pre-tool`, "working") and
 * its permission hook (`permission-request`, "waiting") race. Whatever their order, a member whose
 * request is on file is `waiting` until it is answered.
 */
let iso: IsolatedHome
beforeEach(() => {
  iso = isolatedHome('swarm-hook-state-')
})
afterEach(() => iso.cleanup())

const call = { tool_name: 'run_shell_command', tool_input: { command: 'touch x' } }
const hook = (event: 'pre-tool' | 'permission-request', payload: unknown = call) =>
  runHook({ event, team: 'hs', name: 'g', agent: 'gemini', payload, env: iso.env })

describe('swarm hook: the state of a member asking the lead', () => {
  it('side-by-side pre-tool hooks of the same call never overwrite `waiting`; another tool is `working`', async () => {
    await createTeam({ name: 'hs', cwd: iso.project, members: [{ name: 'g', agent: 'gemini' }] }, iso.env)
    const early = Array.from({ length: 12 }, () => hook('pre-tool'))
    const asked = hook('permission-request')
    const late = Array.from({ length: 12 }, () => hook('pre-tool'))
    const pending = await waitFor('the request on file', async () => (await listPending('hs', { env: iso.env })).requests[0], 15_000)
    await Promise.all([...early, ...late])
    const state = await readMemberState('hs', 'g', iso.env)
    expect(state?.status).toBe('waiting')
    expect(state?.detail).toContain('touch x')

    await run(process.execPath, [BIN, 'perms', 'deny', 'hs', pending.id], { env: iso.env, cwd: iso.project })
    expect((await asked).stdout).toContain('deny')
    await hook('pre-tool', { tool_name: 'read_file', tool_input: { file_path: 'a.txt' } })
    expect((await readMemberState('hs', 'g', iso.env))?.status).toBe('working')
  })
})
