import { describe, expect, it } from 'vitest'
import { controlPlaneOptions } from '../../src/permissions/rules/control-plane.js'
import { evaluatePermission } from '../../src/permissions/rules/evaluate.js'
import { parseRule } from '../../src/permissions/rules/rules.js'
import type { PermissionModeName, PermissionQuery } from '../../src/permissions/rules/types.js'

/** How the sandbox's state enters the decision on a Bash call (the pure evaluation). */

const cwd = '/nonexistent-swarm-eval/proj'
function ev(mode: PermissionModeName, sandbox: PermissionQuery['bashSandbox'], allow: string[] = [], autoAllow = false) {
  return evaluatePermission({
    toolName: 'Bash',
    input: { command: 'npm test' },
    kind: 'execute',
    mode,
    rules: allow.map((r) => parseRule(r, 'allow', { source: 'user', baseDir: cwd })),
    cwd,
    home: '/nonexistent-swarm-eval',
    ...controlPlaneOptions(cwd, { SWARM_HOME: '/nonexistent-swarm-eval/state' }),
    ...(sandbox ? { bashSandbox: sandbox } : {}),
    autoAllowSandboxedBash: autoAllow,
  })
}
const unavailable = { status: 'unavailable' as const, reason: 'bubblewrap (bwrap) is not installed' }
const sandboxed = { status: 'sandboxed' as const, reason: 'bwrap runs' }

describe('Bash and the sandbox', () => {
  it('sandbox unavailable: asked in every mode that can ask, whatever the allow rules; denied in dontAsk and plan', () => {
    for (const mode of ['default', 'acceptEdits', 'bypassPermissions', 'bubble'] as const) {
      for (const rules of [[], ['Bash'], ['Bash(npm test:*)']]) {
        const d = ev(mode, unavailable, rules)
        expect([mode, rules, d.behavior, d.source]).toEqual([mode, rules, 'ask', 'sandbox'])
        expect(d.reason).toContain('bubblewrap (bwrap) is not installed')
      }
    }
    expect(ev('dontAsk', unavailable, ['Bash']).behavior).toBe('deny')
    expect(ev('plan', unavailable, ['Bash']).behavior).toBe('deny')
  })

  it('sandboxed: rules and modes as before; autoAllowBashIfSandboxed allows what no rule decides', () => {
    expect(ev('default', sandboxed).behavior).toBe('ask')
    expect(ev('default', sandboxed, ['Bash(npm test:*)']).behavior).toBe('allow')
    expect(ev('bypassPermissions', sandboxed).behavior).toBe('allow')
    expect(ev('default', sandboxed, [], true)).toMatchObject({ behavior: 'allow', reason: 'sandboxed (sandbox.autoAllowBashIfSandboxed)' })
    expect(ev('plan', sandboxed, [], true).behavior).toBe('deny')
    const asked = evaluatePermission({
      ...{
        toolName: 'Bash',
        input: { command: 'npm test' },
        kind: 'execute' as const,
        mode: 'default' as const,
        cwd,
        home: '/nonexistent-swarm-eval',
      },
      rules: [parseRule('Bash(npm test:*)', 'ask', { source: 'user', baseDir: cwd })],
      ...controlPlaneOptions(cwd, { SWARM_HOME: '/nonexistent-swarm-eval/state' }),
      bashSandbox: sandboxed,
      autoAllowSandboxedBash: true,
    })
    expect(asked.behavior).toBe('ask')
  })

  it('unsandboxed (turned off, or an excluded command): the ordinary evaluation', () => {
    const off = { status: 'unsandboxed' as const, reason: 'the sandbox is turned off' }
    expect(ev('default', off).behavior).toBe('ask')
    expect(ev('default', off, ['Bash(npm test:*)']).behavior).toBe('allow')
    expect(ev('default', off, [], true).behavior).toBe('ask')
  })
})
