import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { hooksFor, runPermissionHook, runPermissionRequestHooks, type PermissionHookInput } from '../../../src/permissions/requests/hooks.js'
import type { PermissionHook } from '../../../src/permissions/rules/types.js'
import { pinSettings } from '../../../src/permissions/rules/settings-pin.js'
import { defaultSandboxConfig } from '../../../src/sandbox/sandbox-settings.js'
import { createBashSandbox } from '../../../src/sandbox/sandbox.js'
import { unsandboxed } from '../../../src/sandbox/unsandboxed.js'
import { waitFor } from '../../support/wait.js'

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-perm-hooks-'))
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }))

const input: PermissionHookInput = {
  hook_event_name: 'PermissionRequest',
  tool_name: 'Bash',
  tool_input: { command: 'npm test' },
  cwd: tmp,
  permission_mode: 'default',
  team: 't',
  agent: 'alice',
  request_id: 'r1',
}
const hook = (command: string, over: Partial<PermissionHook> = {}): PermissionHook => ({
  command,
  source: 'project',
  file: '/p/.claude/settings.json',
  ...over,
})
/** The sandbox turned off in the settings: hooks run as plain `bash -c` (the sandboxed run is test/security's). */
const off = createBashSandbox({
  config: { ...defaultSandboxConfig(), enabled: false },
  env: process.env,
  label: 'hooks-test',
  hidden: [],
  readOnly: [],
  writableDirs: () => [tmp],
})
/** Options that run `hooks` as pinned now, with the sandbox off. */
const opts = (hooks: PermissionHook[], extra: { signal?: AbortSignal } = {}) => ({
  cwd: tmp,
  sandbox: off,
  pin: pinSettings({ permissionRequestHooks: hooks, sandbox: defaultSandboxConfig() }, tmp),
  ...extra,
})
const run = (command: string, over: Partial<PermissionHook> = {}) => runPermissionHook(hook(command, over), input, opts([hook(command, over)]))

describe('runPermissionHook', () => {
  it.each([
    ['flat allow', `echo '{"behavior":"allow"}'`, { behavior: 'allow' }],
    ['flat deny with message', `echo '{"behavior":"deny","message":"no tests on Fridays"}'`, { behavior: 'deny', message: 'no tests on Fridays' }],
    ['explicit ask', `echo '{"behavior":"ask"}'`, { behavior: 'ask' }],
    [
      "Claude Code's shape",
      `echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"npm test -- --run"}}}}'`,
      { behavior: 'allow', updatedInput: { command: 'npm test -- --run' } },
    ],
    ['legacy approve', `echo '{"decision":"approve"}'`, { behavior: 'allow' }],
    ['legacy block', `echo '{"decision":"block","reason":"nope"}'`, { behavior: 'deny', message: 'nope' }],
    ['exit 0 and no output', 'true', { behavior: 'ask', diagnostics: [] }],
    ['exit 2 denies with stderr', 'echo "rm is not allowed" >&2; exit 2', { behavior: 'deny', message: 'rm is not allowed' }],
  ])('%s', async (_name, command, expected) => {
    expect(await run(command)).toMatchObject(expected)
  })

  it.each([
    ['exit 1', 'echo oops >&2; exit 1', /exited with code 1: oops/],
    ['garbage output', 'echo hello world', /not JSON/],
    ['an unknown behavior', `echo '{"behavior":"maybe"}'`, /unknown behavior/],
    ['a non-object updatedInput', `echo '{"behavior":"allow","updatedInput":"x"}'`, /updatedInput/],
    ['a missing program', 'definitely-not-a-command-xyz', /exited with code 127/],
  ])('falls back to ask on %s, with a diagnostic', async (_name, command, diag) => {
    const d = await run(command)
    expect(d.behavior).toBe('ask')
    expect(d.diagnostics.join('\n')).toMatch(diag)
    expect(d.diagnostics[0]).toContain('/p/.claude/settings.json')
  })

  it('gets the request as JSON on stdin and runs in the cwd', async () => {
    const out = path.join(tmp, 'stdin.json')
    const d = await run(`cat > ${out}; pwd >> ${out}.cwd; echo '{"behavior":"allow"}'`)
    expect(d.behavior).toBe('allow')
    expect(JSON.parse(fs.readFileSync(out, 'utf8'))).toEqual(input)
    expect(fs.realpathSync(fs.readFileSync(`${out}.cwd`, 'utf8').trim())).toBe(fs.realpathSync(tmp))
  })

  it('answers even when the hook never reads its input', async () => {
    const big = { ...input, tool_input: { command: 'x'.repeat(1024 * 1024) } }
    const d = await runPermissionHook(hook(`echo '{"behavior":"deny"}'`), big, opts([hook(`echo '{"behavior":"deny"}'`)]))
    expect(d.behavior).toBe('deny')
  })

  it('kills the whole process group on timeout and asks', async () => {
    const pidFile = path.join(tmp, 'child.pid')
    // Long enough for a loaded machine to start the sh and write the pid before the timeout.
    const d = await run(`sleep 30 & echo $! > ${pidFile}; wait`, { timeout: 1.5 })
    expect(d.behavior).toBe('ask')
    expect(d.diagnostics[0]).toMatch(/no answer within 1500 ms, killed/)
    const pid = Number(fs.readFileSync(pidFile, 'utf8'))
    await waitFor('the killed sleep to be gone', () => !alive(pid), 15_000)
  })

  it('uses the answer of a hook that exited while a background job holds stdout', async () => {
    const pidFile = path.join(tmp, 'bg.pid')
    // Waiting for the sleep's end of stdout would run into the timeout (an `ask`), however long it is.
    const d = await run(`sleep 30 & echo $! > ${pidFile}; echo '{"behavior":"allow"}'`, { timeout: 10 })
    expect(d.behavior).toBe('allow')
    await waitFor('the background sleep to be gone', () => !alive(Number(fs.readFileSync(pidFile, 'utf8'))), 15_000)
  })

  it('does not run where the sandbox is on but cannot run (as Bash is then asked): asks team-lead', async () => {
    const marker = path.join(tmp, 'unconfined-ran')
    const h = hook(`touch ${marker}; echo '{"behavior":"allow"}'`)
    const d = await runPermissionHook(h, input, { ...opts([h]), sandbox: unsandboxed('bwrap is not installed') })
    expect(d.behavior).toBe('ask')
    expect(d.diagnostics[0]).toMatch(/not run: it would run unconfined \(no sandbox: bwrap is not installed\); asking team-lead instead/)
    expect(fs.existsSync(marker)).toBe(false)
  })

  it('stops on abort', async () => {
    const ac = new AbortController()
    const p = runPermissionHook(hook('sleep 30'), input, opts([hook('sleep 30')], { signal: ac.signal }))
    setTimeout(() => ac.abort(), 50)
    const d = await p
    expect(d.behavior).toBe('ask')
    expect(d.diagnostics[0]).toMatch(/aborted/)
  })
})

describe('runPermissionRequestHooks', () => {
  it('selects hooks by tool-name regex', () => {
    const hooks = [
      hook('a', { matcher: 'Bash' }),
      hook('b', { matcher: 'Edit|Write' }),
      hook('c'),
      hook('d', { matcher: '*' }),
      hook('e', { matcher: 'Bas' }),
      hook('f', { matcher: '(' }),
    ]
    expect(hooksFor(hooks, 'Bash').map((h) => h.command)).toEqual(['a', 'c', 'd'])
    expect(hooksFor(hooks, 'Write').map((h) => h.command)).toEqual(['b', 'c', 'd'])
    expect(hooksFor(hooks, '(').map((h) => h.command)).toEqual(['c', 'd', 'f'])
  })

  it('combines answers: deny over allow over ask; no hook → ask', async () => {
    const allow = hook(`echo '{"behavior":"allow"}'`)
    const deny = hook('echo no >&2; exit 2')
    const broken = hook('exit 1')
    expect(await runPermissionRequestHooks([allow, broken], input, opts([allow, broken]))).toMatchObject({ behavior: 'allow', hook: allow })
    const d = await runPermissionRequestHooks([allow, deny, broken], input, opts([allow, deny, broken]))
    expect(d).toMatchObject({ behavior: 'deny', message: 'no', hook: deny })
    expect(d.diagnostics).toHaveLength(1)
    expect(await runPermissionRequestHooks([hook('exit 2', { matcher: 'Edit' })], input, opts([]))).toEqual({ behavior: 'ask', diagnostics: [] })
  })

  it('runs no hook when one that matches was not pinned, or a file it names changed: asks instead', async () => {
    const script = path.join(tmp, 'policy.sh')
    fs.writeFileSync(script, `echo '{"behavior":"allow"}'\n`)
    const policy = hook(`sh "$CLAUDE_PROJECT_DIR/policy.sh"`)
    const pinned = opts([policy])
    expect(await runPermissionRequestHooks([policy], input, pinned)).toMatchObject({ behavior: 'allow' })
    fs.writeFileSync(script, `touch ${tmp}/ran; echo '{"behavior":"allow"}'\n`)
    const d = await runPermissionRequestHooks([policy], input, pinned)
    expect(d.behavior).toBe('ask')
    expect(d.diagnostics[0]).toContain(`${script} changed since the member started: not run`)
    expect(fs.existsSync(path.join(tmp, 'ran'))).toBe(false)
    const other = hook(`echo '{"behavior":"allow"}'`)
    expect((await runPermissionRequestHooks([other], input, opts([]))).diagnostics[0]).toContain('was not there when the member started')
  })

  it('gives the hook a minimal environment: no provider keys, no SWARM_*', async () => {
    const env = { PATH: process.env.PATH, HOME: tmp, ANTHROPIC_API_KEY: 'sk-secret', SWARM_HOME: '/x', OPENAI_API_KEY: 'o' }
    const envHook = hook(`env > ${tmp}/env.out`)
    await runPermissionHook(envHook, input, { ...opts([envHook]), env })
    const seen = fs.readFileSync(path.join(tmp, 'env.out'), 'utf8')
    expect(seen).toContain(`CLAUDE_PROJECT_DIR=${tmp}`)
    expect(seen).not.toMatch(/API_KEY|SWARM_HOME/)
  })
})

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
