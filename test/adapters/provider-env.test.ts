import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { checkProviderEnv } from '../../src/adapters/provider-check.js'
import { loadAdapters } from '../../src/adapters/registry.js'
import { readTeam } from '../../src/teams/team-store.js'
import { BIN } from '../support/repo.js'
import { hasTmux, reapTmux } from '../support/tmux.js'
import { type IsolatedHome, isolatedHome } from '../support/home.js'

/** An agent CLI whose provider variables are all missing: named at spawn (warn), or refused before anything is written (refuse). */

const run = promisify(execFile)
let h: IsolatedHome

beforeEach(async () => {
  h = isolatedHome('swarm-provider-env-')
  for (const k of ['OPENAI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'NEEDY_KEY']) delete h.env[k]
  // A stand-in codex (the real one is not needed to see the warning): it waits, as at its sign-in screen.
  const bin = path.join(h.base, 'agent-bin')
  await fs.mkdir(bin)
  await fs.writeFile(path.join(bin, 'codex'), '#!/bin/sh\nexec sleep 600\n', { mode: 0o755 })
  h.env.SWARM_AGENT_BIN_DIR = bin
  await fs.mkdir(path.join(h.project, '.claude', 'swarm-agents'), { recursive: true })
  await fs.writeFile(
    path.join(h.project, '.claude', 'swarm-agents', 'needy.yaml'),
    "binary: sh\ncommand: [sh, -c, 'sleep 600']\nrequiredEnv: { anyOf: [NEEDY_KEY], without: refuse }\nhookEvents: { Submit: prompt-submit, Done: stop }\n",
  )
})
afterEach(async () => {
  await reapTmux(h.env)
  await h.cleanup()
})

async function swarm(args: string[], extra: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    return { code: 0, ...(await run(process.execPath, [BIN, ...args], { env: { ...h.env, ...extra }, cwd: h.project })) }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

describe('required provider variables, from the adapter declaration', () => {
  it('every built-in agent CLI that needs a key declares it; an empty value counts as unset', async () => {
    const { adapters } = await loadAdapters({ cwd: h.project, env: h.env })
    expect(adapters.get('codex')?.requiredEnv).toEqual({ anyOf: ['OPENAI_API_KEY'], without: 'warn' })
    expect(adapters.get('gemini')?.requiredEnv?.anyOf).toContain('GEMINI_API_KEY')
    expect(adapters.get('pi')?.requiredEnv?.without).toBe('warn')
    expect(adapters.get('needy')?.requiredEnv).toEqual({ anyOf: ['NEEDY_KEY'], without: 'refuse' })
    const codex = adapters.get('codex')!
    expect(checkProviderEnv(codex, { OPENAI_API_KEY: '' }, 'w')?.refuse).toBe(false)
    expect(checkProviderEnv(codex, { OPENAI_API_KEY: 'sk-x' }, 'w')).toBeUndefined()
  })

  it.skipIf(!hasTmux)('spawn --agent codex without OPENAI_API_KEY warns in one line naming it, and still spawns', async () => {
    expect((await swarm(['team', 'create', 'crew', '--no-start'])).code).toBe(0)
    const r = await swarm(['spawn', 'crew', 'w1', '--backend', 'tmux', '--agent', 'codex'])
    expect(r.code, r.stderr).toBe(0)
    const warnings = r.stderr.split('\n').filter((l) => l.includes('OPENAI_API_KEY'))
    expect(warnings).toEqual([
      'swarm: warning: OPENAI_API_KEY is not set: the codex teammate w1 will wait at its sign-in screen — export OPENAI_API_KEY before spawning, or sign in from its pane (swarm attach)',
    ])
    const keyed = await swarm(['spawn', 'crew', 'w2', '--backend', 'tmux', '--agent', 'codex'], { OPENAI_API_KEY: 'sk-test' })
    expect(keyed.code, keyed.stderr).toBe(0)
    expect(keyed.stderr).not.toContain('OPENAI_API_KEY')
  })

  it('an adapter that cannot start without its variable is refused (exit 2) before a member or a team is written', async () => {
    expect((await swarm(['team', 'create', 'crew', '--no-start'])).code).toBe(0)
    const r = await swarm(['spawn', 'crew', 'n1', '--backend', 'tmux', '--agent', 'needy'])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe('swarm: needy cannot start without NEEDY_KEY, and none is set — export NEEDY_KEY before spawning\n')
    expect((await readTeam('crew', h.env)).members.map((m) => m.name)).toEqual(['team-lead'])
    const created = await swarm(['team', 'create', 'other', '--agents', 'n2', '--agent', 'n2:needy', '--no-start'])
    expect(created.code).toBe(2)
    expect(created.stderr).toContain('needy cannot start without NEEDY_KEY')
    await expect(fs.stat(path.join(h.home, 'teams', 'other'))).rejects.toThrow()
  })
})
