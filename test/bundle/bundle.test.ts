import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { swarmArgv } from '../../src/backends/teammate-launch.js'
import { isolatedEnv } from '../support/home.js'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const BIN = path.join(ROOT, 'bin/swarm.js')
const BUNDLE = path.join(ROOT, 'dist/bundle')
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-bundle-'))
const env = isolatedEnv(home, { SWARM_HOME: home })

const swarm = (...args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env, timeout: 20_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    )
  })

afterAll(() => fs.rmSync(home, { recursive: true, force: true }))

describe('the CLI bundle (npm run build)', () => {
  const commands = fs.existsSync(BUNDLE)
    ? fs.readdirSync(BUNDLE).flatMap((f) => (f.endsWith('.cjs') && f !== 'main.cjs' && !f.startsWith('_') ? [f.slice(0, -4)] : [])) // _root.cjs: swarm, --help, --version
    : []

  it('has one bundle per command group of src/cli/main.ts, and main.cjs', () => {
    const mainTs = fs.readFileSync(path.join(ROOT, 'src/cli/main.ts'), 'utf8')
    for (const c of ['status', 'team', 'agent', 'leader', 'kill']) expect(mainTs).toContain(`${c}: () => import(`)
    expect(commands).toEqual(expect.arrayContaining(['status', 'team', 'agent', 'leader', 'kill']))
    expect(fs.existsSync(path.join(BUNDLE, 'main.cjs'))).toBe(true)
  })

  it('runs every command from its own bundle', async () => {
    const runs = await Promise.all(commands.map(async (c) => [c, await swarm(c, '--help')] as const))
    for (const [c, r] of runs) {
      expect(r.code, `${c}: ${r.stderr}`).toBe(0)
      expect(r.stdout).toContain(`Usage: swarm ${c}`)
    }
  })

  it('reports errors with their exit code, with or without the code cache', async () => {
    for (const cache of ['1', '']) {
      env.NODE_DISABLE_COMPILE_CACHE = cache
      const r = await swarm('status', 'nosuchteam', '--json')
      expect(r.code).toBe(3)
      expect(r.stderr).toContain('no team named "nosuchteam"')
    }
    const version = await swarm('--version')
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
  })
})

describe('swarmArgv', () => {
  it("is this package's bin/swarm.js, absolute, run by this node", () => {
    expect(swarmArgv()).toEqual([process.execPath, BIN])
  })
})
