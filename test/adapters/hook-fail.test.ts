import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

// `swarm hook permission-request|pre-tool` fails closed: every failure is the CLI's own deny.
const BIN = path.resolve(import.meta.dirname, '../../bin/swarm.js')
let dir: string
let env: NodeJS.ProcessEnv

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-hook-fail-'))
  env = { PATH: process.env.PATH, HOME: dir, SWARM_HOME: path.join(dir, 'home'), NO_COLOR: '1' }
})
afterEach(() => fs.rm(dir, { recursive: true, force: true }))

function hook(args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'hook', ...args], { env, cwd: dir })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(input)
  })
}

const PAYLOAD = JSON.stringify({ tool_name: 'run_shell_command', tool_input: { command: 'touch x' } })

describe('swarm hook fails closed on the permission path', () => {
  it('no such team: Gemini gets its deny JSON with the reason', async () => {
    const r = await hook(['permission-request', '--team', 'nosuch', '--name', 'm', '--agent', 'gemini'], PAYLOAD)
    expect(r.code).toBe(0)
    const out = JSON.parse(r.stdout) as { decision: string; reason: string }
    expect(out.decision).toBe('deny')
    expect(out.reason).toContain('swarm could not ask the team lead')
    expect(out.reason).toContain('nosuch')
  })

  it('Codex: PermissionRequest and PreToolUse denies in its own form', async () => {
    const req = JSON.parse((await hook(['permission-request', '--team', 'nosuch', '--name', 'm', '--agent', 'codex'], PAYLOAD)).stdout)
    expect(req.hookSpecificOutput).toMatchObject({ hookEventName: 'PermissionRequest', decision: { behavior: 'deny' } })
    const pre = JSON.parse((await hook(['pre-tool', '--team', 'nosuch', '--name', 'm', '--agent', 'codex'], PAYLOAD)).stdout)
    expect(pre.hookSpecificOutput).toMatchObject({ hookEventName: 'PreToolUse', permissionDecision: 'deny' })
  })

  it('missing --team, or an adapter that cannot be found: a blocking exit 2 with the reason on stderr', async () => {
    const noTeam = await hook(['permission-request', '--agent', 'claude'], PAYLOAD)
    expect(JSON.parse(noTeam.stdout).hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' })
    const unknown = await hook(['permission-request', '--team', 't', '--name', 'm', '--agent', 'nosuch'], PAYLOAD)
    expect(unknown.code).toBe(2)
    expect(unknown.stdout).toBe('')
    expect(unknown.stderr).toContain('swarm could not ask the team lead')
  })

  it('a failing non-gating hook still exits 1 (a non-blocking error)', async () => {
    const r = await hook(['stop', '--team', 'nosuch', '--name', 'm', '--agent', 'gemini'], '{}')
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
  })
})
