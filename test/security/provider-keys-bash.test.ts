import { afterEach, describe, expect, it } from 'vitest'
import { memberSandbox } from '../../src/agent/member-sandbox.js'
import { runCommand } from '../../src/agent/tools/command-runner.js'
import { PROVIDER_KEY_VARS, defaultSandboxConfig } from '../../src/sandbox/sandbox-settings.js'
import { isolatedHome, type IsolatedHome } from '../support/home.js'

/**
 * Issue 23 finding 11 (keys): a sandboxed Bash call carried the provider's API key in its
 * environment, with the network open. Now the keys of the one list (PROVIDER_KEY_VARS) are
 * removed from every sandboxed call unless `sandbox.keepEnv` names one; other variables stay.
 */

let h: IsolatedHome
afterEach(() => h?.cleanup())

async function envOfSandboxedCall(keepEnv: string[]): Promise<string> {
  h = isolatedHome('swarm-keys-', {
    ANTHROPIC_API_KEY: 'sk-ant-SECRET',
    OPENAI_API_KEY: 'sk-oai-SECRET',
    GEMINI_API_KEY: 'g-SECRET',
    KEEP_ME: 'kept',
  })
  const sandbox = memberSandbox({
    config: { ...defaultSandboxConfig(), keepEnv },
    cwd: h.project,
    env: h.env,
    label: 'keys',
    writableDirs: () => [h.project],
  })
  try {
    expect((await sandbox.statusFor('env')).status).toBe('sandboxed')
    const r = await runCommand(sandbox, 'env', {
      cwd: h.project,
      env: h.env,
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

describe.skipIf(process.platform !== 'linux')("provider keys are not in sandboxed Bash's environment", () => {
  it('ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY are removed; the rest of the environment stays', async () => {
    const out = await envOfSandboxedCall([])
    expect(out).not.toContain('SECRET')
    expect(out).toContain('KEEP_ME=kept')
    expect(PROVIDER_KEY_VARS).toEqual(expect.arrayContaining(['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY']))
  })

  it('sandbox.keepEnv keeps the keys it names, and only those', async () => {
    const out = await envOfSandboxedCall(['OPENAI_API_KEY'])
    expect(out).toContain('OPENAI_API_KEY=sk-oai-SECRET')
    expect(out).not.toContain('sk-ant-SECRET')
    expect(out).not.toContain('g-SECRET')
  })
})
