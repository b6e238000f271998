import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { swarmArgv } from '../../src/backends/teammate-launch.js'
import { createTeam } from '../../src/teams/team-store.js'
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

describe('what the lean bundles load (bench:cli)', () => {
  const loaded = async (...args: string[]) => {
    const out = path.join(home, `loaded-${args[0]}.json`)
    const hook = path.join(home, 'module-list.cjs')
    fs.writeFileSync(
      hook,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.moduleLoadList)))`,
    )
    const r = await new Promise<{ code: number; stderr: string }>((resolve) =>
      execFile(process.execPath, ['-r', hook, BIN, ...args], { env, timeout: 20_000 }, (err, _stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr }),
      ),
    )
    expect(r.code, r.stderr).toBe(0)
    return JSON.parse(fs.readFileSync(out, 'utf8')) as string[]
  }

  it('swarm send starts no process, so it loads neither node:child_process nor node:net', async () => {
    await createTeam({ name: 'lean', cwd: home, members: [{ name: 'w1', backendType: 'tmux', tmuxPaneId: '%1' }] }, env)
    const modules = await loaded('send', 'lean', 'w1', 'hello')
    expect(modules).toContain('NativeModule crypto') // it seals the lead's message
    expect(modules).not.toContain('NativeModule child_process')
    expect(modules).not.toContain('NativeModule net')
  })

  it('requires each builtin its ES modules import from one module of the bundle, not from each of them', () => {
    const status = fs.readFileSync(path.join(BUNDLE, 'status.cjs'), 'utf8')
    // Before: 32 requires of node:path, 19 of node:fs (one namespace copy each). CommonJS dependencies keep their own.
    for (const name of ['node:path', 'node:fs']) expect(status.split(`require("${name}")`).length - 1, name).toBeLessThanOrEqual(5)
  })
})

describe("bin/swarm.js's code cache", () => {
  // A package of its own: bin/swarm.js as shipped and one bundle, `wait`, that exits as it is told.
  const pkg = path.join(home, 'pkg')
  fs.mkdirSync(path.join(pkg, 'bin'), { recursive: true })
  fs.mkdirSync(path.join(pkg, 'dist/bundle'), { recursive: true })
  for (const f of ['swarm.js', 'package.json']) fs.copyFileSync(path.join(ROOT, 'bin', f), path.join(pkg, 'bin', f))
  fs.writeFileSync(
    path.join(pkg, 'dist/bundle/wait.cjs'),
    `exports.main = async (argv) => {
      if (argv[3] === 'fail') process.exit(1)
      process.on('SIGTERM', () => process.exit(143)) // as src/process/handlers.ts ends a stopped command
      process.stdout.write('ready\\n')
      await new Promise(() => setInterval(() => {}, 1000)) // running until stopped
    }`,
  )
  const caches = () => fs.readdirSync(path.join(pkg, 'dist/bundle')).filter((f) => f.startsWith('wait.cjs.') && f.endsWith('.cache'))
  const run = (arg: string) =>
    new Promise<number | null>((resolve) => {
      const child = execFile(process.execPath, [path.join(pkg, 'bin/swarm.js'), 'wait', arg], { env: { ...env, NODE_DISABLE_COMPILE_CACHE: '' } })
      child.stdout?.on('data', () => child.kill('SIGTERM'))
      child.on('exit', (code) => resolve(code))
    })

  it('is not written by a run that failed, and is by one stopped by a signal (the leader console, ended with its session)', async () => {
    expect(await run('fail')).toBe(1)
    expect(caches()).toEqual([])
    expect(await run('stop')).toBe(143)
    expect(caches()).toHaveLength(1)
  })
})

describe("swarm agent's V8 flags (bin/swarm.js MEMBER_V8_FLAGS)", () => {
  /** V8's code cache tag of a process running `swarm <args>`, read at its exit: it hashes the V8 flags in effect. */
  const tagOf = async (...args: string[]) => {
    const out = path.join(home, `tag-${args[0]}.txt`)
    const hook = path.join(home, 'v8-tag.cjs')
    fs.writeFileSync(
      hook,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, String(require('node:v8').cachedDataVersionTag())))`,
    )
    const r = await new Promise<{ code: number; stderr: string }>((resolve) =>
      execFile(process.execPath, ['-r', hook, BIN, ...args], { env, timeout: 20_000 }, (err, _stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr }),
      ),
    )
    expect(r.code, r.stderr).toBe(0)
    return fs.readFileSync(out, 'utf8')
  }
  const nodeTag = (...flags: string[]) =>
    new Promise<string>((resolve, reject) =>
      execFile(process.execPath, [...flags, '-p', "require('node:v8').cachedDataVersionTag()"], (err, stdout) =>
        err ? reject(err) : resolve(stdout.trim()),
      ),
    )

  it('a teammate process runs with one memory-reducing GC; other commands with V8 as it comes', async () => {
    expect(await tagOf('agent', '--help')).toBe(await nodeTag('--memory-reducer-single-gc'))
    expect(await tagOf('status', '--help')).toBe(await nodeTag())
  })

  it("keeps swarm agent's code cache: made with its flags, the next swarm agent accepts it instead of rewriting it", async () => {
    await swarm('agent', '--help') // writes the cache if there is none for these flags yet
    const caches = () =>
      fs
        .readdirSync(BUNDLE)
        .filter((f) => f.startsWith('agent.cjs.') && f.endsWith('.cache'))
        .map((f) => [f, fs.statSync(path.join(BUNDLE, f)).ino] as const)
    const before = caches()
    expect(before.length).toBeGreaterThan(0)
    expect((await swarm('agent', '--help')).code).toBe(0)
    expect(caches()).toEqual(before) // a rejected cache is rewritten by a rename: a new inode
  })
})

describe('swarmArgv', () => {
  it("is this package's bin/swarm.js, absolute, run by this node", () => {
    expect(swarmArgv()).toEqual([process.execPath, BIN])
  })
})
