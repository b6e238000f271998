import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { inboxPath, teamConfigPath } from '../../src/home/paths.js'
import { Transcript, transcriptPath } from '../../src/agent/transcript.js'
import { prepareLogFile } from '../../src/backends/spawn-config.js'
import { CorruptFileError } from '../../src/errors.js'
import { archivePath } from '../../src/mailbox/archive.js'
import { bellPath } from '../../src/mailbox/bell.js'
import { appendMessage } from '../../src/mailbox/inbox.js'
import { readTeam } from '../../src/teams/team-store.js'
import { assertBuilt, swarm, tempHome, type TempHome } from '../teams/helpers.js'

/*
 * Finding 7 of issue 12, the smaller items: bad input on disk or on the command line is one line
 * with the README's exit code, before anything is started, and nothing is ever written through a
 * symbolic link or rewritten with U+FFFD. Real CLI processes on a real SWARM_HOME.
 */

let home: TempHome
beforeAll(assertBuilt)
beforeEach(async () => {
  home = await tempHome()
  // An isolated tmux socket directory: a spawn that got as far as tmux would start a server there.
  home.env.TMUX_TMPDIR = path.join(home.home, 'tmux')
  delete home.env.TMUX
  fs.mkdirSync(home.env.TMUX_TMPDIR)
  expect((await swarm(home, ['team', 'create', 'crew', '--no-start', '--agents', 'bob'])).exitCode).toBe(0)
})
afterEach(async () => {
  try {
    execFileSync('tmux', ['-L', 'swarm', 'kill-server'], { env: home.env, stdio: 'ignore' })
  } catch {
    // no server was started (what these tests expect)
  }
  await home.cleanup()
})

/** One line on stderr, `swarm: … — …`, no stack. */
function oneLine(stderr: string): string {
  const lines = stderr.trimEnd().split('\n')
  expect(lines, stderr).toHaveLength(1)
  expect(lines[0]).toMatch(/^swarm: .+ — .+/)
  return lines[0]
}

const inbox = (name: string) => inboxPath('crew', name, home.env)
const tmuxServerRuns = () => fs.existsSync(home.env.TMUX_TMPDIR!) && fs.readdirSync(home.env.TMUX_TMPDIR!).length > 0

describe('unknown agent types are refused before anything starts (exit 3)', () => {
  it('spawn --agent-type NoSuchType: exit 3 naming the known types; no member, no pane, no tmux server', async () => {
    for (const backend of ['tmux', 'in-process']) {
      const r = await swarm(home, ['spawn', 'crew', 'alice', '--backend', backend, '--agent-type', 'NoSuchType'])
      expect(r.exitCode, r.stderr).toBe(3)
      expect(oneLine(r.stderr)).toBe('swarm: unknown agent type "NoSuchType" — known types: general-purpose, Explore, Plan, Verification')
      expect(r.stdout).not.toContain('spawned')
    }
    expect((await readTeam('crew', home.env)).members.map((m) => m.name)).toEqual(['team-lead', 'bob'])
    expect(fs.existsSync(path.join(home.home, 'teams', 'crew', 'agents', 'alice'))).toBe(false)
    expect(tmuxServerRuns()).toBe(false)
  })

  it('team create with an unknown type writes no team; a project-defined type is known', async () => {
    const r = await swarm(home, ['team', 'create', 'crew2', '--no-start', '--agents', 'bob', '--agent-type', 'bob:Nope'])
    expect(r.exitCode, r.stderr).toBe(3)
    expect(oneLine(r.stderr)).toContain('unknown agent type "Nope" — known types: general-purpose, Explore')
    expect(fs.existsSync(teamConfigPath('crew2', home.env))).toBe(false)
    // A definition of the project (its .claude/agents/) is one of the known types.
    const project = path.join(home.home, 'project')
    fs.mkdirSync(path.join(project, '.claude', 'agents'), { recursive: true })
    fs.writeFileSync(path.join(project, '.claude', 'agents', 'reviewer.md'), '---\nname: Reviewer\ndescription: reviews\n---\nReview the change.\n')
    const ok = await swarm(home, ['team', 'create', 'crew3', '--no-start', '--cwd', project, '--agents', 'bob', '--agent-type', 'bob:Reviewer'])
    expect(ok.exitCode, ok.stderr).toBe(0)
  })
})

describe('files that are not what swarm keeps there (exit 5, one line)', () => {
  it('an inbox that is a directory: send and inbox exit 5 naming it; the directory is left alone', async () => {
    fs.mkdirSync(inbox('bob'))
    fs.writeFileSync(path.join(inbox('bob'), 'inside'), 'x')
    for (const args of [
      ['send', 'crew', 'bob', 'hi'],
      ['inbox', 'crew', 'bob'],
    ]) {
      const r = await swarm(home, args)
      expect(r.exitCode, r.stderr).toBe(5)
      expect(oneLine(r.stderr)).toBe(
        `swarm: corrupt file ${inbox('bob')} (a directory where swarm keeps a file) — move the directory aside; swarm will not touch it`,
      )
    }
    expect(fs.readdirSync(inbox('bob'))).toEqual(['inside'])
  })

  it('a config.json nested 200,000 levels deep: exit 5, no stack, the file untouched', async () => {
    const file = teamConfigPath('crew', home.env)
    const good = fs.readFileSync(file, 'utf8').trimEnd()
    const deep = `${good.slice(0, -1)}, "deep": ${'['.repeat(200_000)}${']'.repeat(200_000)}}`
    fs.writeFileSync(file, deep)
    for (const args of [
      ['status', 'crew'],
      ['team', 'show', 'crew'],
      ['send', 'crew', 'bob', 'hi'],
      ['tasks', 'crew', 'list'],
    ]) {
      const r = await swarm(home, args)
      expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(5)
      expect(oneLine(r.stderr)).toContain(`corrupt file ${file} (nested deeper than 1000 levels)`)
    }
    expect(fs.readFileSync(file, 'utf8')).toBe(deep)
  })

  it('non-UTF-8 bytes in an inbox are never rewritten as U+FFFD: a reader exits 5, a writer sets the file aside byte for byte and keeps the clean entries', async () => {
    expect((await swarm(home, ['send', 'crew', 'bob', 'first'])).exitCode).toBe(0)
    expect((await swarm(home, ['send', 'crew', 'bob', 'second'])).exitCode).toBe(0)
    const bytes = Buffer.from(fs.readFileSync(inbox('bob')).toString('latin1').replace('"second"', '"sec\xff\xfeond"'), 'latin1')
    fs.writeFileSync(inbox('bob'), bytes)
    const read = await swarm(home, ['inbox', 'crew', 'bob'])
    expect(read.exitCode, read.stderr).toBe(5)
    expect(oneLine(read.stderr)).toContain(`corrupt file ${inbox('bob')} (not valid UTF-8)`)
    expect(fs.readFileSync(inbox('bob')).equals(bytes)).toBe(true)

    const sent = await swarm(home, ['send', 'crew', 'bob', 'third'])
    expect(sent.exitCode, sent.stderr).toBe(0)
    expect(sent.stderr).toContain('not valid UTF-8; the entries holding those bytes were set aside, 1 kept')
    const aside = fs.readdirSync(path.dirname(inbox('bob'))).filter((n) => n.startsWith('bob.json.corrupt-'))
    expect(aside).toHaveLength(1)
    expect(fs.readFileSync(path.join(path.dirname(inbox('bob')), aside[0])).equals(bytes)).toBe(true)
    const now = fs.readFileSync(inbox('bob'))
    expect(now.includes(Buffer.from('\uFFFD'))).toBe(false)
    expect((JSON.parse(now.toString('utf8')) as Array<{ text: string }>).map((m) => m.text)).toEqual(['first', 'third'])
  })
})

describe('no file is written through a symbolic link (O_NOFOLLOW, exit 5)', () => {
  it('a link in place of <agent>.archive.jsonl: the archiving send exits 5 and the file outside is untouched', async () => {
    const outside = path.join(home.home, 'outside.txt')
    fs.writeFileSync(outside, 'precious\n')
    fs.symlinkSync(outside, archivePath(inbox('bob')))
    // 101 read entries: the next write archives them.
    const read = Array.from({ length: 101 }, (_, i) => ({ from: 'x', text: `m${i}`, timestamp: new Date().toISOString(), read: true }))
    fs.writeFileSync(inbox('bob'), JSON.stringify(read, null, 2))
    const r = await swarm(home, ['send', 'crew', 'bob', 'trigger'])
    expect(r.exitCode, r.stderr).toBe(5)
    expect(oneLine(r.stderr)).toBe(
      `swarm: corrupt file ${archivePath(inbox('bob'))} (a symbolic link where swarm keeps a file; not followed) — remove the link`,
    )
    expect(fs.readFileSync(outside, 'utf8')).toBe('precious\n')
    expect(fs.lstatSync(archivePath(inbox('bob'))).isSymbolicLink()).toBe(true)
    expect(JSON.parse(fs.readFileSync(inbox('bob'), 'utf8'))).toHaveLength(101) // nothing half-written
  })

  it('links in place of the transcript, the pane log and the spool bell are refused, never appended through', async () => {
    const outside = path.join(home.home, 'outside.txt')
    fs.writeFileSync(outside, 'precious\n')
    const transcript = transcriptPath('crew', 'bob', home.env)
    fs.mkdirSync(path.dirname(transcript), { recursive: true })
    fs.symlinkSync(outside, transcript)
    await expect(new Transcript(transcript).append({ kind: 'state', state: 'idle' })).rejects.toThrow(CorruptFileError)

    const paneLog = path.join(path.dirname(transcript), 'pane.log')
    fs.symlinkSync(outside, paneLog)
    await expect(prepareLogFile({ team: 'crew', name: 'bob', cwd: home.home, argv: ['true'] }, home.env)).rejects.toThrow(
      /symbolic link where swarm keeps a file/,
    )

    fs.mkdirSync(`${inbox('bob')}.spool`)
    fs.symlinkSync(outside, bellPath(inbox('bob')))
    await expect(appendMessage(inbox('bob'), { from: 'x', text: 'y' })).rejects.toThrow(/symbolic link where swarm keeps a file/)
    expect(fs.readFileSync(outside, 'utf8')).toBe('precious\n')
  })
})

describe('inbox, task and config.json links are refused, read or written, and left as they are (exit 5)', () => {
  const refused = (file: string) => `swarm: corrupt file ${file} (a symbolic link where swarm keeps a file; not followed) — remove the link`
  /** A file outside with valid content, so that following the link would have worked. */
  function linkTo(link: string, content: string): string {
    const outside = path.join(home.home, `outside-${path.basename(link)}`)
    fs.writeFileSync(outside, content)
    fs.rmSync(link, { force: true })
    fs.symlinkSync(outside, link)
    return outside
  }
  const intact = (link: string, outside: string, content: string) => {
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true)
    expect(fs.readlinkSync(link)).toBe(outside)
    expect(fs.readFileSync(outside, 'utf8')).toBe(content)
    expect(fs.readdirSync(path.dirname(link)).filter((n) => n.includes('.corrupt-'))).toEqual([])
  }

  it('inboxes/bob.json: send and inbox exit 5 naming the link; it is neither replaced nor followed', async () => {
    const content = JSON.stringify([{ from: 'x', text: 'outside', timestamp: new Date().toISOString(), read: false }])
    const outside = linkTo(inbox('bob'), content)
    const sent = await swarm(home, ['send', 'crew', 'bob', 'hello'])
    expect(sent.exitCode, sent.stderr).toBe(5)
    expect(oneLine(sent.stderr)).toBe(refused(inbox('bob')))
    intact(inbox('bob'), outside, content)
    const read = await swarm(home, ['inbox', 'crew', 'bob'])
    expect(read.exitCode, read.stderr).toBe(5)
    expect(oneLine(read.stderr)).toBe(refused(inbox('bob')))
    expect(read.stdout).not.toContain('outside')
  })

  it('tasks/<team>/2.json: show, update and list exit 5 naming the link, whose target is never read', async () => {
    for (const s of ['one', 'two']) expect((await swarm(home, ['tasks', 'crew', 'add', s])).exitCode).toBe(0)
    const file = path.join(home.home, 'tasks', 'crew', '2.json')
    const content = fs.readFileSync(file, 'utf8').replace('"two"', '"from the target"')
    const outside = linkTo(file, content)
    for (const args of [
      ['show', '2'],
      ['update', '2', '--status', 'completed'],
      ['claim', '2', '--as', 'bob'],
    ]) {
      const r = await swarm(home, ['tasks', 'crew', ...args])
      expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(5)
      expect(oneLine(r.stderr)).toBe(refused(file))
      expect(r.stdout).not.toContain('from the target')
    }
    const list = await swarm(home, ['tasks', 'crew', 'list'])
    expect(list.exitCode).toBe(5)
    expect(list.stderr).toContain(refused(file))
    intact(file, outside, content)
  })

  it('teams/<team>/config.json: readers and writers exit 5 naming the link; it stays a link', async () => {
    const config = teamConfigPath('crew', home.env)
    const content = fs.readFileSync(config, 'utf8')
    const outside = linkTo(config, content)
    const status = await swarm(home, ['status', 'crew'])
    expect(status.exitCode, status.stderr).toBe(5)
    expect(oneLine(status.stderr)).toBe(refused(config))
    const { updateTeam } = await import('../../src/teams/team-store.js')
    await expect(
      updateTeam(
        'crew',
        (t) => {
          t.description = 'changed'
        },
        home.env,
      ),
    ).rejects.toThrow(refused(config).slice('swarm: '.length, -' — remove the link'.length))
    intact(config, outside, content)
  })
})
