import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { compare, describeDifference, HOME_WATCHED, snapshot } from './home-guard.js'
import { isolateRun } from './run-isolation.js'

/**
 * The home guard on a fake user's home and a fake /tmp: every kind of change it must see (a file
 * gained, changed in size or only in mtime, removed, anywhere under ~/.claude), none when nothing
 * changed; and the run around it — its own TMPDIR/HOME exported, leftovers and /tmp entries named.
 */

let dir: string
let home: string
let tmp: string
const write = (p: string, text: string) => {
  fs.mkdirSync(path.dirname(p), { recursive: true })
  fs.writeFileSync(p, text)
}

beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-guard-')))
  home = path.join(dir, 'home')
  tmp = path.join(dir, 'tmp')
  fs.mkdirSync(tmp)
  write(path.join(home, '.gitconfig'), '[user]\n\tname = me\n')
  write(path.join(home, '.bash_history'), 'ls\n')
  write(path.join(home, '.claude', 'projects', 'p', 'session.jsonl'), '{}\n')
  write(path.join(home, '.claude', 'settings.json'), '{}\n')
  write(path.join(home, 'notes.txt'), 'not watched\n')
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

describe('home guard: snapshot and compare', () => {
  it('sees nothing when nothing changed, and ignores what it does not watch', () => {
    const before = snapshot(home, HOME_WATCHED)
    expect(before.has('.claude/projects/p/session.jsonl')).toBe(true)
    write(path.join(home, 'notes.txt'), 'changed, but not watched\n')
    expect(compare(before, snapshot(home, HOME_WATCHED))).toEqual({ gained: [], changed: [], removed: [] })
  })

  it('names a file gained, one changed, one removed — deep in ~/.claude too', () => {
    const before = snapshot(home, HOME_WATCHED)
    write(path.join(home, '.tmux.conf'), 'set -g allow-passthrough on\n')
    write(path.join(home, '.claude', 'teams', 'crew', 'config.json'), '{}\n')
    fs.appendFileSync(path.join(home, '.bash_history'), 'rm -rf x\n')
    fs.rmSync(path.join(home, '.claude', 'settings.json'))
    const d = compare(before, snapshot(home, HOME_WATCHED))
    expect(d).toEqual({
      gained: ['.claude/teams', '.claude/teams/crew', '.claude/teams/crew/config.json', '.tmux.conf'],
      changed: ['.bash_history'],
      removed: ['.claude/settings.json'],
    })
    expect(describeDifference(home, d)).toContain(`  gained   ${path.join(home, '.tmux.conf')}`)
  })

  it('sees a rewrite of the same size by its mtime, and a file replaced by a symlink (never followed)', () => {
    const before = snapshot(home, HOME_WATCHED)
    const gitconfig = path.join(home, '.gitconfig')
    fs.writeFileSync(gitconfig, '[user]\n\tname = it\n')
    fs.utimesSync(gitconfig, new Date(), new Date(Date.now() + 5_000))
    fs.rmSync(path.join(home, '.bash_history'))
    fs.symlinkSync(path.join(home, 'notes.txt'), path.join(home, '.bash_history'))
    expect(compare(before, snapshot(home, HOME_WATCHED)).changed).toEqual(['.bash_history', '.gitconfig'])
  })
})

describe('home guard: the run', () => {
  it("exports the run's TMPDIR, HOME, XDG dirs, git identity and TMUX_TMPDIR; a clean run finds nothing and leaves nothing", () => {
    const env: NodeJS.ProcessEnv = {}
    const run = isolateRun({ env, home, tmp, otherRuns: () => [] })
    expect(path.dirname(run.root)).toBe(tmp)
    expect(env).toMatchObject({
      TMPDIR: path.join(run.root, 'tmp'),
      HOME: path.join(run.root, 'user-home'),
      XDG_CONFIG_HOME: path.join(run.root, 'user-home', '.config'),
      TMUX_TMPDIR: path.join(run.root, 'tmux'),
      GIT_CONFIG_GLOBAL: path.join(run.root, 'user-home', '.gitconfig'),
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'Swarm Test',
      npm_config_cache: path.join(home, '.npm'),
    })
    expect(run.finish()).toEqual([])
    expect(fs.existsSync(run.root)).toBe(false)
  })

  it("fails naming each file: the user's home changed, the run's HOME written, a leftover in its TMPDIR, a swarm dir in /tmp", () => {
    const env: NodeJS.ProcessEnv = {}
    const run = isolateRun({ env, home, tmp, otherRuns: () => [] })
    write(path.join(home, '.tmux.conf'), 'set -g allow-passthrough on\n')
    fs.rmSync(path.join(home, '.claude', 'settings.json'))
    write(path.join(env.HOME!, '.bash_history'), 'ls\n')
    fs.mkdirSync(path.join(env.TMPDIR!, 'swarm-watch-abc'))
    fs.mkdirSync(path.join(env.TMUX_TMPDIR!, `tmux-${process.getuid?.() ?? 0}`))
    fs.writeFileSync(path.join(env.TMUX_TMPDIR!, `tmux-${process.getuid?.() ?? 0}`, 'default'), '')
    fs.mkdirSync(path.join(tmp, 'swarm-e2e-xyz'))
    fs.mkdirSync(path.join(tmp, 'unrelated-tool-dir'))
    const problems = run.finish().join('\n')
    expect(problems).toContain(`gained   ${path.join(home, '.tmux.conf')}`)
    expect(problems).toContain(`removed  ${path.join(home, '.claude', 'settings.json')}`)
    expect(problems).toContain(`gained   ${path.join(run.root, 'user-home', '.bash_history')}`)
    expect(problems).toContain(`leaked   ${path.join(run.root, 'tmp', 'swarm-watch-abc')}`)
    expect(problems).toContain(`gained   ${path.join(tmp, 'swarm-e2e-xyz')}`)
    expect(problems).toContain(`leaked   ${path.join(run.root, 'tmux', `tmux-${process.getuid?.() ?? 0}`, 'default')}`)
    expect(problems).not.toContain('unrelated-tool-dir')
  })

  it('leaves out only the paths SWARM_HOME_GUARD_IGNORE names (a live session of your own)', () => {
    const run = isolateRun({ env: { SWARM_HOME_GUARD_IGNORE: '.claude/projects:.nothing' }, home, tmp, otherRuns: () => [] })
    fs.appendFileSync(path.join(home, '.claude', 'projects', 'p', 'session.jsonl'), '{}\n')
    write(path.join(home, '.claude', 'projects', 'q', 'other.jsonl'), '{}\n')
    write(path.join(home, '.claude', 'projects-not', 'x'), '{}\n')
    const problems = run.finish().join('\n')
    expect(problems).not.toContain('session.jsonl')
    expect(problems).not.toContain('other.jsonl')
    expect(problems).toContain(`gained   ${path.join(home, '.claude', 'projects-not', 'x')}`)
  })

  it("does not blame the user's home or /tmp on this run while another test run is active: it says what changed instead", () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    try {
      let seen: number[] = []
      const run = isolateRun({ env: {}, home, tmp, otherRuns: () => seen })
      seen = [4242] // seen only at the end: it counts all the same
      fs.mkdirSync(path.join(tmp, 'swarm-test-other'))
      write(path.join(home, '.tmux.conf'), 'set -g allow-passthrough on\n')
      expect(run.finish()).toEqual([])
      const said = stderr.mock.calls.map((c) => String(c[0])).join('')
      expect(said).toMatch(/another test run was active \(pid 4242\)[\s\S]*\.tmux\.conf/)
      expect(said).toContain(path.join(tmp, 'swarm-test-other'))
    } finally {
      stderr.mockRestore()
    }
  })
})
