import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { sandbox, type Sandbox } from './helpers.js'

/** `swarm demo --mixed` where no agent CLI is installed (the run with the CLIs is in test/agents/mixed.test.ts). */
describe('swarm demo --mixed without the agent CLIs', () => {
  let sb: Sandbox | undefined
  afterEach(async () => {
    await sb?.cleanup()
    sb = undefined
  })

  it('exits 7 with one line naming the CLIs and how to install them, and starts nothing', async () => {
    // Only node and the system directories: no codex, gemini or claude to find.
    sb = sandbox({ PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, SWARM_AGENT_BIN_DIR: '', SWARM_CLAUDE_BIN: '' })
    const tmp = path.join(sb.root, 'tmp')
    fs.mkdirSync(tmp)
    const r = await sb.swarm(['demo', '--mixed', '--yes'], { env: { ...sb.env, TMPDIR: tmp } })
    expect(r.code).toBe(7)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/^swarm: no agent CLI for the mixed demo is installed \(codex, gemini, claude\) — npm install -g @openai\/codex/)
    expect(r.stderr).toContain('SWARM_AGENT_BIN_DIR')
    expect(fs.readdirSync(tmp)).toEqual([])
  })

  it('refuses --backend and --watch with a usage error (exit 2)', async () => {
    sb = sandbox()
    const r = await sb.swarm(['demo', '--mixed', '--backend', 'in-process'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/^swarm: --mixed runs in tmux panes/)
  })
})
