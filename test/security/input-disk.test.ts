import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ExitCode } from '../../src/errors.js'
import { explainErrno } from '../../src/util/fs-errors.js'
import { assertBuilt, listTree, swarm, type TempHome } from '../teams/helpers.js'

/*
 * Finding 7 of issue 12: a full disk or a read-only home is one line naming the path with exit 10,
 * never a raw ENOSPC / EROFS with exit 1, nor the ENOENT that a recursive mkdir reports when it
 * cannot make a parent. Real filesystems: a small tmpfs and a read-only bind mount (root only;
 * skipped where mounting is not allowed). The errno mapping itself is checked everywhere.
 */

const mounts: string[] = []
const dirs: string[] = []

/** Whether this process may mount (root in a namespace that allows it). */
const canMount = (() => {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-mount-probe-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' })
    execFileSync('umount', [probe], { stdio: 'ignore' })
    return true
  } catch {
    return false
  } finally {
    fs.rmSync(probe, { recursive: true, force: true })
  }
})()

beforeAll(assertBuilt)
afterEach(() => {
  for (const m of mounts.splice(0).reverse()) execFileSync('umount', [m], { stdio: 'ignore' })
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-disk-'))
  dirs.push(dir)
  return dir
}

function mount(args: string[], target: string): void {
  execFileSync('mount', [...args, target], { stdio: 'ignore' })
  mounts.push(target)
}

/** A tmpfs of `size` with all but `free` bytes taken by a filler file (or few inodes). */
function smallDisk(options: string, fillTo?: number): string {
  const dir = tempDir()
  mount(['-t', 'tmpfs', '-o', options, 'tmpfs'], dir)
  if (fillTo !== undefined) fs.writeFileSync(path.join(dir, 'filler'), Buffer.alloc(fillTo))
  return dir
}

function homeAt(dir: string): TempHome {
  const home = path.join(dir, 'home')
  return {
    home,
    env: { ...process.env, SWARM_HOME: home, CLAUDE_CONFIG_DIR: '', NO_COLOR: '1', ANTHROPIC_API_KEY: '', ANTHROPIC_AUTH_TOKEN: '' },
    cleanup: async () => undefined,
  }
}

function oneLine(stderr: string): string {
  const lines = stderr.trimEnd().split('\n')
  expect(lines, stderr).toHaveLength(1)
  expect(lines[0]).not.toMatch(/ENOENT|ENOSPC|EROFS|SWARM_DEBUG/)
  return lines[0]
}

const tmpFiles = async (dir: string) => (fs.existsSync(dir) ? (await listTree(dir)).filter((p) => p.endsWith('.tmp')) : [])

describe('the errno mapping (fs-errors.ts)', () => {
  it('names the path (or the state root when the error names none) and gives the documented exit code', () => {
    const errno = (code: string, p?: string) => Object.assign(new Error(code), { code, ...(p ? { path: p } : {}) })
    expect(explainErrno(errno('ENOSPC'), '/state')).toMatchObject({ message: 'disk full: cannot write /state', exitCode: ExitCode.filesystem })
    expect(explainErrno(errno('EDQUOT', '/x'), '/state')).toMatchObject({ message: 'disk full: cannot write /x', exitCode: 10 })
    expect(explainErrno(errno('EROFS', '/x'), '/state')).toMatchObject({ message: 'read-only file system: cannot write /x', exitCode: 10 })
    expect(explainErrno(errno('EISDIR', '/x'), '/state')?.exitCode).toBe(ExitCode.corrupt)
    expect(explainErrno(errno('ELOOP', '/x'), '/state')?.exitCode).toBe(ExitCode.corrupt)
    expect(explainErrno(errno('EPIPE'), '/state')).toBeUndefined()
    expect(explainErrno(new Error('plain'), '/state')).toBeUndefined()
  })
})

describe.skipIf(!canMount)('a full disk (real tmpfs)', () => {
  it('team create: exit 10 "disk full" naming the path, and no half-made team or temp file stays', async () => {
    for (const fill of [15_000, 13_000, 11_000]) {
      const disk = smallDisk('size=16k', fill)
      const home = homeAt(disk)
      const r = await swarm(home, ['team', 'create', 'crew', '--no-start', '--agents', 'bob'])
      expect(r.exitCode, `fill ${fill}: ${r.stderr}`).toBe(10)
      expect(oneLine(r.stderr)).toMatch(new RegExp(`^swarm: disk full: cannot write ${home.home}\\S* — free space on that disk`))
      expect(fs.existsSync(path.join(home.home, 'teams', 'crew')), `fill ${fill}`).toBe(false)
      expect(fs.existsSync(path.join(home.home, 'tasks', 'crew'))).toBe(false)
      expect(await tmpFiles(disk)).toEqual([])
    }
  })

  it('no inodes left: the real reason, not the ENOENT that a recursive mkdir reports', async () => {
    for (const inodes of [2, 3, 6]) {
      const disk = smallDisk(`size=1m,nr_inodes=${inodes}`)
      const home = homeAt(disk)
      const r = await swarm(home, ['team', 'create', 'crew', '--no-start'])
      expect(r.exitCode, `nr_inodes ${inodes}: ${r.stderr}`).toBe(10)
      expect(oneLine(r.stderr)).toContain(`disk full: cannot write ${home.home}`)
    }
  })

  it('send on a full disk: exit 10, the inbox as it was, no temp file', async () => {
    const disk = smallDisk('size=256k')
    const home = homeAt(disk)
    expect((await swarm(home, ['team', 'create', 'crew', '--no-start', '--agents', 'bob'])).exitCode).toBe(0)
    expect((await swarm(home, ['send', 'crew', 'bob', 'before'])).exitCode).toBe(0)
    const inbox = path.join(home.home, 'teams', 'crew', 'inboxes', 'bob.json')
    const before = fs.readFileSync(inbox, 'utf8')
    const free = fs.statfsSync(disk).bavail * fs.statfsSync(disk).bsize
    fs.writeFileSync(path.join(disk, 'filler'), Buffer.alloc(free - 4096))
    const r = await swarm(home, ['send', 'crew', 'bob', 'x'.repeat(64 * 1024)])
    expect(r.exitCode, r.stderr).toBe(10)
    expect(oneLine(r.stderr)).toMatch(/^swarm: disk full: cannot write \S+ — /)
    expect(fs.readFileSync(inbox, 'utf8')).toBe(before)
    expect(await tmpFiles(disk)).toEqual([])
  })
})

describe.skipIf(!canMount)('a read-only home (real read-only bind mount)', () => {
  it('send and team create: exit 10 "read-only file system" naming the path', async () => {
    const dir = tempDir()
    const home = homeAt(dir)
    expect((await swarm(home, ['team', 'create', 'crew', '--no-start', '--agents', 'bob'])).exitCode).toBe(0)
    mount(['--bind', '-o', 'ro', dir], dir)
    const sent = await swarm(home, ['send', 'crew', 'bob', 'hi'])
    expect(sent.exitCode, sent.stderr).toBe(10)
    expect(oneLine(sent.stderr)).toMatch(
      new RegExp(`^swarm: read-only file system: cannot write ${home.home}/teams/crew/\\S+ — point SWARM_HOME at a writable directory`),
    )
    const created = await swarm(home, ['team', 'create', 'other', '--no-start'])
    expect(created.exitCode, created.stderr).toBe(10)
    expect(oneLine(created.stderr)).toContain(`read-only file system: cannot write ${home.home}/teams/other`)
    // A home that does not exist yet below the read-only mount: the real reason, not ENOENT.
    const below = homeAt(path.join(dir, 'sub'))
    const r = await swarm(below, ['team', 'create', 'crew', '--no-start'])
    expect(r.exitCode, r.stderr).toBe(10)
    expect(oneLine(r.stderr)).toContain(`read-only file system: cannot write ${path.join(dir, 'sub')}`)
  })
})
