import fs from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, it } from 'vitest'
import { useTempDir } from '../support/home.js'
import { BIN, REPO, requireBuilt } from '../support/repo.js'

const PLUMBING = ['agent', 'hook', 'mcp', 'agent-cli', 'relay', 'remote']
const version = (JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version
const swarm = (bin: string, ...args: string[]) =>
  execa(process.execPath, [bin, ...args], { reject: false, stdin: 'ignore', env: { ...process.env, NO_COLOR: '1' } })
/** The command names of one heading of `swarm --help`. */
const section = (help: string, heading: string) =>
  [...(help.split(`\n${heading}\n`)[1] ?? '').split('\n\n')[0].matchAll(/^ {2}([a-z][\w-]*)/gm)].map((m) => m[1])

describe('swarm --help and --version', () => {
  let dir: string
  useTempDir('swarm-help-', (d) => (dir = d))

  it('--help lists the user commands, and plumbing apart under its own heading; it is the whole program’s help', async () => {
    requireBuilt('dist/bundle/main.cjs')
    const help = await swarm(BIN, '--help')
    expect(help.exitCode).toBe(0)
    const commands = section(help.stdout, 'Commands:')
    expect(commands).toEqual(expect.arrayContaining(['team', 'send', 'perms', 'status', 'completion']))
    for (const p of PLUMBING) expect(commands).not.toContain(p)
    expect(section(help.stdout, 'Plumbing (run by swarm itself):')).toEqual(PLUMBING)
    // Rendered at build time from the registered program: the same text `swarm help` prints from every group.
    expect((await swarm(BIN, 'help')).stdout).toBe(help.stdout)
    const bare = await swarm(BIN)
    expect(bare.exitCode).toBe(2)
    expect(bare.stderr).toBe(help.stdout)
    // Plumbing still works.
    expect((await swarm(BIN, 'hook', '--help')).exitCode).toBe(0)
  })

  it('--version is package.json’s; neither loads any command code (bin/swarm.js answers them from the build)', async () => {
    requireBuilt('dist/bundle/_root.json')
    expect((await swarm(BIN, '--version')).stdout).toBe(version)
    expect(fs.readFileSync(path.join(REPO, 'src/cli/main.ts'), 'utf8')).not.toMatch(/\.version\('\d/)
    // A tree with bin/ and the build's root answers only: no bundle, no tsc output.
    fs.mkdirSync(path.join(dir, 'bin'))
    fs.mkdirSync(path.join(dir, 'dist/bundle'), { recursive: true })
    for (const f of ['swarm.js', 'package.json']) fs.copyFileSync(path.join(path.dirname(BIN), f), path.join(dir, 'bin', f))
    fs.copyFileSync(path.join(REPO, 'dist/bundle/_root.json'), path.join(dir, 'dist/bundle/_root.json'))
    const bin = path.join(dir, 'bin/swarm.js')
    for (const flag of ['--version', '-V']) expect((await swarm(bin, flag)).stdout).toBe(version)
    for (const flag of ['--help', '-h']) expect((await swarm(bin, flag)).stdout).toBe((await swarm(BIN, '--help')).stdout)
    expect((await swarm(bin, 'team', 'list')).exitCode).toBe(70) // the commands are not there: only the root answered
  })
})
