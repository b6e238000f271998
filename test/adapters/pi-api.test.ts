import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PI_ANTHROPIC_PROVIDER, PI_PROVIDER, piAdapter, piApi } from '../../src/adapters/pi.js'
import type { AdapterContext } from '../../src/adapters/types.js'

async function prepare(env: NodeJS.ProcessEnv) {
  const configDir = await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-pi-api-'))
  const ctx: AdapterContext = {
    team: 't',
    name: 'p',
    agentId: 'p@t',
    cwd: configDir,
    configDir,
    firstPrompt: 'hi',
    model: 'm1',
    resume: false,
    hookArgv: (e) => ['swarm', 'hook', e],
    hookCommand: (e) => `swarm hook ${e}`,
    mcpArgv: ['swarm', 'mcp'],
    env,
  }
  const plan = await piAdapter.prepare(ctx)
  const models = await fs.readFile(path.join(configDir, 'models.json'), 'utf8').then(JSON.parse, () => undefined)
  await fs.rm(configDir, { recursive: true, force: true })
  return { argv: plan.argv, models }
}

describe('pi adapter: which model API it configures', () => {
  it('Anthropic Messages when ANTHROPIC_BASE_URL is the provider, Chat Completions when OPENAI_BASE_URL is', async () => {
    const a = await prepare({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', ANTHROPIC_API_KEY: 'k' })
    expect(a.models.providers[PI_ANTHROPIC_PROVIDER]).toMatchObject({
      baseUrl: 'http://127.0.0.1:9',
      api: 'anthropic-messages',
      apiKey: 'ANTHROPIC_API_KEY',
      models: [{ id: 'm1' }],
    })
    expect(a.argv.slice(0, 5)).toEqual(['pi', '--provider', PI_ANTHROPIC_PROVIDER, '--model', 'm1'])
    const o = await prepare({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'k', ANTHROPIC_API_KEY: 'k2' })
    expect(o.models.providers[PI_PROVIDER]).toMatchObject({ api: 'openai-completions', baseUrl: 'http://127.0.0.1:9/v1' })
  })

  it('SWARM_PI_API chooses when both are set; only a key uses pi’s own anthropic provider; a bad value is a usage error', async () => {
    const both = { ANTHROPIC_BASE_URL: 'http://a', OPENAI_BASE_URL: 'http://o/v1' }
    expect(piApi(both)).toBe('openai-completions')
    expect(piApi({ ...both, SWARM_PI_API: 'anthropic-messages' })).toBe('anthropic-messages')
    expect(piApi({})).toBeUndefined()
    const k = await prepare({ ANTHROPIC_API_KEY: 'k' })
    expect(k.models).toBeUndefined()
    expect(k.argv.slice(0, 5)).toEqual(['pi', '--provider', 'anthropic', '--model', 'm1'])
    expect(() => piApi({ SWARM_PI_API: 'gemini' })).toThrow(/SWARM_PI_API=gemini is not an API pi speaks/)
  })
})
