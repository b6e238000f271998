import { spawnSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ParsedFileCache } from '../../src/util/parsed-file-cache.js'
import { createTeam, readTeam, readTeamShared, updateTeam } from '../../src/teams/team-store.js'
import { teamConfigPath } from '../../src/home/paths.js'
import { isolatedHome, type IsolatedHome } from '../support/home.js'

/*
 * The parsed-file cache (util/parsed-file-cache.ts) behind readTeam: a file is parsed again only
 * when it changed, and every change is seen — written in place by another process (as Claude Code
 * writes config.json), renamed over, written through updateTeam — at once.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
let home: IsolatedHome
afterEach(() => home.cleanup())

/** Another process writes `text` into `file` in place (same inode: truncate and write), as Claude Code does. */
function writeInPlaceElsewhere(file: string, text: string): void {
  const r = spawnSync(process.execPath, ['-e', 'require("fs").writeFileSync(process.argv[1], process.argv[2])', file, text])
  expect(r.status).toBe(0)
}

function counted(): { parse: (text: string) => string; count: () => number } {
  let n = 0
  return {
    parse: (text) => {
      n++
      return text.trim()
    },
    count: () => n,
  }
}

describe('ParsedFileCache', () => {
  it('parses an unchanged file once, and sees an in-place write of the same size by another process', async () => {
    home = isolatedHome()
    const file = path.join(home.base, 'f.json')
    await fs.writeFile(file, 'aaaa\n')
    await sleep(100) // its ctime has settled: the cache may trust its identity
    const cache = new ParsedFileCache<string>()
    const { parse, count } = counted()
    const read = () => cache.read(file, () => fs.readFile(file, 'utf8'), parse)
    expect(await read()).toBe('aaaa')
    expect(await read()).toBe('aaaa')
    expect(count()).toBe(1)
    const before = (await fs.stat(file)).ino
    writeInPlaceElsewhere(file, 'bbbb\n')
    expect((await fs.stat(file)).ino).toBe(before)
    expect(await read()).toBe('bbbb')
    expect(count()).toBe(2)
  })

  it('sees a write made in the same instant as the read it follows (an identity not yet settled is not trusted)', async () => {
    home = isolatedHome()
    const file = path.join(home.base, 'f.json')
    const cache = new ParsedFileCache<string>()
    const { parse, count } = counted()
    const read = () => cache.read(file, () => fs.readFile(file, 'utf8'), parse)
    for (const text of ['cccc', 'dddd', 'cccc']) {
      await fs.writeFile(file, `${text}\n`) // in place, same size, within one timestamp tick of the read before
      expect(await read()).toBe(text)
    }
    expect(await read()).toBe('cccc') // unchanged: compared as text, not parsed again
    expect(count()).toBe(3)
  })

  it('sees a file renamed over it, a file removed, and keeps nothing that did not parse', async () => {
    home = isolatedHome()
    const file = path.join(home.base, 'f.json')
    const cache = new ParsedFileCache<string>()
    const later = new ParsedFileCache<string>({ now: () => Date.now() + 60_000 }) // everything looks settled
    let fail = false
    const parse = (text: string) => {
      if (fail) throw new Error('corrupt')
      return text.trim()
    }
    for (const c of [cache, later]) {
      await fs.writeFile(file, 'one\n')
      const read = () => c.read(file, () => fs.readFile(file, 'utf8').catch(() => undefined), parse)
      expect(await read()).toBe('one')
      await fs.writeFile(`${file}.tmp`, 'two\n')
      await fs.rename(`${file}.tmp`, file)
      expect(await read()).toBe('two')
      fail = true
      await fs.writeFile(`${file}.tmp`, 'bad\n')
      await fs.rename(`${file}.tmp`, file)
      await expect(read()).rejects.toThrow('corrupt')
      fail = false
      expect(await read()).toBe('bad')
      await fs.rm(file)
      expect(await read()).toBeUndefined()
    }
  })
})

describe('readTeam through the cache', () => {
  it('gives every caller its own copy, and sees updateTeam and an in-place rewrite at once', async () => {
    home = isolatedHome()
    await createTeam({ name: 'alpha', cwd: home.project, members: [{ name: 'alice' }] }, home.env)
    const first = await readTeam('alpha', home.env)
    first.members.push({ ...first.members[1]!, name: 'mallory' })
    first.members[1]!.isActive = true
    const second = await readTeam('alpha', home.env)
    expect(second.members.map((m) => [m.name, m.isActive])).toEqual([
      ['team-lead', undefined],
      ['alice', undefined],
    ])

    // The shared parse (readTeamShared) is frozen: a reader that changes it throws, the others never see it.
    const shared = await readTeamShared('alpha', home.env)
    expect(() => shared.members.push(shared.members[1]!)).toThrow(TypeError)
    expect(() => (shared.members[1]!.isActive = true)).toThrow(TypeError)
    expect((await readTeam('alpha', home.env)).members).toHaveLength(2)

    await updateTeam(
      'alpha',
      (t) => {
        t.members[1]!.isActive = false
      },
      home.env,
    )
    expect((await readTeam('alpha', home.env)).members[1]!.isActive).toBe(false)

    // Claude Code rewrites config.json in place: same inode, same size (true/false → fals/true pads).
    const file = teamConfigPath('alpha', home.env)
    const text = await fs.readFile(file, 'utf8')
    writeInPlaceElsewhere(file, text.replace('"isActive": false', '"isActive": true '))
    expect((await readTeam('alpha', home.env)).members[1]!.isActive).toBe(true)
  })
})
