import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isolatedHome, type IsolatedHome } from '../support/home.js'

/**
 * The package a user installs: `scripts/pack.mjs` makes the tarball, npm installs it into a temp
 * prefix (its dependencies from the registry, nothing built), and the installed `swarm` runs the
 * demo — under the package's own name, never the unrelated `swarm` on the registry.
 */
const run = promisify(execFile)
const root = path.resolve(import.meta.dirname, '../..')
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string; version: string; scripts: object }

let h: IsolatedHome
let tarball: string
let env: NodeJS.ProcessEnv

beforeAll(async () => {
  h = isolatedHome('swarm-pack-test-')
  // npm's cache and global prefix inside the test's directory: nothing of the user's ~/.npm.
  env = {
    ...h.env,
    npm_config_cache: path.join(h.base, 'npm-cache'),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  }
  const { stdout } = await run(process.execPath, [path.join(root, 'scripts/pack.mjs'), '--out', h.base], { env, cwd: root })
  tarball = stdout.trim()
}, 180_000)
afterAll(() => h?.cleanup())

describe('the packed package', () => {
  it('is named for swarm, carries no build scripts, and holds the docs a user needs', async () => {
    expect(pkg.name).not.toBe('swarm')
    expect(path.basename(tarball)).toBe(`${pkg.name}-${pkg.version}.tgz`)
    const { stdout } = await run('tar', ['-xzOf', tarball, 'package/package.json'])
    const packed = JSON.parse(stdout) as { name: string; scripts?: object; bin: Record<string, string> }
    expect(packed.name).toBe(pkg.name)
    expect(packed.scripts).toBeUndefined()
    expect(Object.keys(packed.bin)).toEqual(expect.arrayContaining(['swarm', pkg.name]))
    const { stdout: list } = await run('tar', ['-tzf', tarball])
    // The built-in adapters written as specs, which the bundle reads at run time.
    const specs = ['package/dist/adapters/builtin/gemini.yaml', 'package/dist/adapters/builtin/gemini.json']
    for (const f of [
      'package/LICENSE',
      'package/README.md',
      'package/CHANGELOG.md',
      'package/bin/swarm.js',
      'package/dist/bundle/main.cjs',
      ...specs,
    ])
      expect(list.split('\n')).toContain(f)
    expect(list).not.toMatch(/\.cache\n/)
  })

  it('installs globally into a temp prefix without warnings about install scripts and runs the demo', async () => {
    const prefix = path.join(h.base, 'prefix')
    const install = await run('npm', ['install', '--global', '--prefix', prefix, tarball], { env, cwd: h.base })
    expect(install.stderr).not.toMatch(/install-scripts|prepare/)
    const swarm = path.join(prefix, 'bin', 'swarm')
    const version = await run(swarm, ['--version'], { env, cwd: h.project })
    expect(version.stdout.trim()).toBe(pkg.version)
    // The installed CLI finds them: gemini is listed, and its adapter loads (doctor reads every adapter).
    const help = await run(swarm, ['spawn', '--help'], { env, cwd: h.project })
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('gemini')
    const doctor = await run(swarm, ['doctor', '--json'], { env, cwd: h.project }).catch((e: { stdout: string }) => e)
    expect((JSON.parse(doctor.stdout) as { agents: { agents: { kind: string }[] } }).agents.agents.map((a) => a.kind)).toContain('gemini')
    const demo = await run(swarm, ['demo', '--backend', 'in-process', '--yes'], { env, cwd: h.project, timeout: 120_000 })
    expect(demo.stdout).toMatch(/verdict\s+Review of src\/slug\.js: PASS/)
  }, 240_000)

  it(`runs as \`npx ${pkg.name} demo\` does once published: npx file:<tarball> demo`, async () => {
    const demo = await run('npx', ['--yes', `file:${tarball}`, 'demo', '--backend', 'in-process', '--yes'], { env, cwd: h.project, timeout: 180_000 })
    expect(demo.stdout).toMatch(/verdict\s+Review of src\/slug\.js: PASS/)
  }, 240_000)
})
