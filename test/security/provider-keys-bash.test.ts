import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { memberSandbox } from '../../src/agent/member-sandbox.js'
import { runCommand } from '../../src/agent/tools/command-runner.js'
import { PROVIDER_KEY_VARS, defaultSandboxConfig, type SandboxConfig } from '../../src/sandbox/sandbox-settings.js'
import type { BashSandbox, SandboxStatus } from '../../src/sandbox/types.js'
import { unsandboxed } from '../../src/sandbox/unsandboxed.js'
import { isolatedHome, type IsolatedHome } from '../support/home.js'
import { pathWithoutBwrap } from './sandbox-helpers.js'

/**
 * Issue 23 finding 11 (keys): a Bash call carried the provider's API key in its environment, with
 * the network open. Now the keys of the one list (PROVIDER_KEY_VARS) are removed from every call —
 * sandboxed, and also unsandboxed: the sandbox off, bwrap absent, an excluded command, the explicit
 * `unsandboxed(why)` — unless `sandbox.keepEnv` names one; other variables stay.
 */

let h: IsolatedHome
afterEach(() => h?.cleanup())

interface Way {
  status: SandboxStatus
  config?: Partial<SandboxConfig>
  noBwrap?: boolean
  command?: string
  explicit?: boolean
}
const WAYS: [string, Way][] = [
  ['sandboxed', { status: 'sandboxed' }],
  ['the sandbox turned off', { status: 'unsandboxed', config: { enabled: false } }],
  ['an excluded command', { status: 'unsandboxed', config: { excludedCommands: ['env'] } }],
  ['bwrap absent', { status: 'unavailable', noBwrap: true }],
  ['unsandboxed(why)', { status: 'unavailable', explicit: true }],
]

async function envOfCall(way: Way, keepEnv: string[]): Promise<string> {
  h = isolatedHome('swarm-keys-', {
    ANTHROPIC_API_KEY: 'sk-ant-SECRET',
    OPENAI_API_KEY: 'sk-oai-SECRET',
    GEMINI_API_KEY: 'g-SECRET',
    KEEP_ME: 'kept',
  })
  const env = way.noBwrap ? { ...h.env, PATH: pathWithoutBwrap(path.join(h.base, 'nobwrap')) } : h.env
  const sandbox: BashSandbox = way.explicit
    ? unsandboxed('a test')
    : memberSandbox({
        config: { ...defaultSandboxConfig(), keepEnv, ...way.config },
        cwd: h.project,
        env,
        label: 'keys',
        writableDirs: () => [h.project],
      })
  try {
    expect((await sandbox.statusFor('env')).status).toBe(way.status)
    const r = await runCommand(sandbox, 'env', {
      cwd: h.project,
      env,
      signal: new AbortController().signal,
      timeoutMs: 20_000,
      maxOutputChars: 100_000,
    })
    expect(r.exitCode, r.output).toBe(0)
    return r.output
  } finally {
    await sandbox.close()
  }
}

describe.skipIf(process.platform !== 'linux').each(WAYS)("provider keys are not in Bash's environment: %s", (_name, way) => {
  it('ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY are removed; the rest of the environment stays', async () => {
    const out = await envOfCall(way, [])
    expect(out).not.toContain('SECRET')
    expect(out).toContain('KEEP_ME=kept')
    expect(PROVIDER_KEY_VARS).toEqual(expect.arrayContaining(['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY']))
  })

  it.skipIf(way.explicit)('sandbox.keepEnv keeps the keys it names, and only those', async () => {
    const out = await envOfCall(way, ['OPENAI_API_KEY'])
    expect(out).toContain('OPENAI_API_KEY=sk-oai-SECRET')
    expect(out).not.toContain('sk-ant-SECRET')
    expect(out).not.toContain('g-SECRET')
  })
})
