import { describe, expect, it } from 'vitest'
import { runCommand, MissingSandboxError } from '../../src/agent/tools/command-runner.js'
import { bashTool } from '../../src/agent/tools/bash.js'
import { allowAll, runTool, type ToolContext } from '../../src/agent/tool.js'
import { unsandboxed } from '../../src/sandbox/unsandboxed.js'
import { evaluatePermission } from '../../src/permissions/rules/evaluate.js'
import { bashSandboxQuery } from '../../src/permissions/rules/sandbox-query.js'
import { type RunHookOptions, runPermissionHook, type PermissionHookInput } from '../../src/permissions/requests/hooks.js'
import { pinSettings } from '../../src/permissions/rules/settings-pin.js'
import { defaultSandboxConfig } from '../../src/sandbox/sandbox-settings.js'
import { tempDir } from '../agent/helpers.js'
import fs from 'node:fs/promises'
import path from 'node:path'

/**
 * Issue 23, the construction rule: a tool context — and a settings hook's run — cannot be built
 * without a sandbox value (the type says so — `npm run lint`'s tsc checks the @ts-expect-error
 * below), the one runner both go through throws before anything runs when given none, and the
 * explicit `unsandboxed(why)` makes every "sandboxed" decision fail closed: a Bash call is asked,
 * a hook is not run (team-lead is asked).
 */

describe('one command runner', () => {
  it('a tool context without a sandbox does not compile', () => {
    // @ts-expect-error — `sandbox` is required: the member's sandbox, or unsandboxed(why)
    const ctx: ToolContext = { cwd: '/', signal: new AbortController().signal, agentName: 'a', teamName: 't', checkPermission: allowAll }
    expect(ctx.sandbox).toBeUndefined()
  })

  it('the runner throws before anything runs when it is given no sandbox value', async () => {
    const dir = await tempDir('swarm-runner-')
    try {
      const marker = path.join(dir, 'ran')
      const options = { cwd: dir, signal: new AbortController().signal, timeoutMs: 5_000, maxOutputChars: 1_000 }
      await expect(runCommand(undefined, `touch ${marker}`, options)).rejects.toBeInstanceOf(MissingSandboxError)
      // A JavaScript caller (or a cast) that leaves it out gets the same from the Bash tool: a failed result, nothing run.
      const ctx = {
        cwd: dir,
        signal: new AbortController().signal,
        agentName: 'a',
        teamName: 't',
        checkPermission: allowAll,
      } as unknown as ToolContext
      const r = await runTool(bashTool, { command: `touch ${marker}` }, ctx)
      expect(r.isError).toBe(true)
      expect(r.content).toMatch(/no sandbox value/)
      await expect(fs.stat(marker)).rejects.toThrow(/ENOENT/)
      // The explicit value runs it.
      await runCommand(unsandboxed('a test'), `touch ${marker}`, options)
      await fs.stat(marker)
    } finally {
      await fs.rm(dir, { recursive: true, force: true })
    }
  })

  it('unsandboxed(why) is never auto-allowed: its Bash is asked in every mode (dontAsk denies), with the reason', async () => {
    for (const mode of ['default', 'acceptEdits', 'bypassPermissions', 'dontAsk'] as const) {
      const d = evaluatePermission({
        toolName: 'Bash',
        input: { command: 'ls' },
        kind: 'execute',
        mode,
        rules: [],
        cwd: '/p',
        allowedPaths: [],
        controlPlaneDirs: ['/r/teams'],
        rootDir: '/r',
        ...(await bashSandboxQuery(unsandboxed('a subagent test'), { command: 'ls' })),
      })
      expect(d.behavior, mode).toBe(mode === 'dontAsk' ? 'deny' : 'ask')
      expect(d.reason).toMatch(/no sandbox: a subagent test/)
    }
    // No value at all reads the same way.
    expect((await bashSandboxQuery(undefined, {})).bashSandbox?.status).toBe('unavailable')
  })

  it('a hook run without a sandbox does not compile, and throws before anything runs; unsandboxed(why) does not run it', async () => {
    const dir = await tempDir('swarm-runner-hook-')
    try {
      const marker = path.join(dir, 'ran')
      const hook = { command: `touch ${marker}; echo '{"behavior":"allow"}'`, source: 'project' as const, file: `${dir}/.claude/settings.json` }
      const pin = pinSettings({ permissionRequestHooks: [hook], sandbox: defaultSandboxConfig() }, dir)
      const input: PermissionHookInput = {
        hook_event_name: 'PermissionRequest',
        tool_name: 'Bash',
        tool_input: { command: 'ls' },
        cwd: dir,
        permission_mode: 'default',
      }
      // @ts-expect-error — `sandbox` is required: a hook never runs outside the member's sandbox
      const options: RunHookOptions = { cwd: dir, pin }
      await expect(runPermissionHook(hook, input, options)).rejects.toBeInstanceOf(MissingSandboxError)
      await expect(fs.stat(marker)).rejects.toThrow(/ENOENT/)
      // Without a sandbox that can run (bwrap absent, or the explicit value), the hook is not run: team-lead is asked, as for Bash.
      const d = await runPermissionHook(hook, input, { cwd: dir, pin, sandbox: unsandboxed('a test') })
      expect(d.behavior).toBe('ask')
      expect(d.diagnostics.join('\n')).toMatch(/not run: it would run unconfined/)
      await expect(fs.stat(marker)).rejects.toThrow(/ENOENT/)
    } finally {
      await fs.rm(dir, { recursive: true, force: true })
    }
  })
})
