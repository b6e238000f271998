import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { inboxPath, sentLogPath } from '../../src/home/paths.js'
import { readSent } from '../../src/mailbox/sent-log.js'
import { createTeam } from '../../src/teams/team-store.js'
import { isolatedHome, type IsolatedHome } from '../support/home.js'

/**
 * Claude Code removes the inbox entries it has consumed. swarm keeps its own record of what it
 * sent to such a reader, so `swarm inbox` shows those messages as `consumed`, not as missing.
 */
const run = promisify(execFile)
const BIN = path.resolve(import.meta.dirname, '../../bin/swarm.js')
let h: IsolatedHome
const swarm = async (...args: string[]) => {
  try {
    const r = await run(process.execPath, [BIN, ...args], { env: h.env })
    return { code: 0, stdout: r.stdout, stderr: r.stderr }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

beforeEach(async () => {
  h = isolatedHome('swarm-consumed-')
  await createTeam({ name: 'crew', members: [{ name: 'cc', agent: 'claude', ownsInbox: true }, { name: 'bob' }] }, h.env)
})
afterEach(async () => {
  await h.cleanup()
})

describe('swarm inbox and a reader that consumes its inbox', () => {
  it('a message Claude Code consumed is listed as consumed, in time order; a swarm agent gets no record', async () => {
    expect((await swarm('send', 'crew', 'cc', 'first')).code).toBe(0)
    expect((await swarm('send', 'crew', 'cc', 'second')).code).toBe(0)
    expect((await swarm('send', 'crew', 'bob', 'for bob')).code).toBe(0)
    // Claude Code takes the first message: it rewrites its inbox without it.
    const file = inboxPath('crew', 'cc', h.env)
    const inbox = JSON.parse(fs.readFileSync(file, 'utf8')) as Array<{ text: string }>
    fs.writeFileSync(file, JSON.stringify(inbox.filter((m) => m.text !== 'first')))

    const r = await swarm('inbox', 'crew', 'cc', '--json')
    expect(r.code, r.stderr).toBe(0)
    const rows = JSON.parse(r.stdout) as Array<{ text: string; state: string }>
    expect(rows.map((m) => [m.text, m.state])).toEqual([
      ['first', 'consumed'],
      ['second', 'sent'],
    ])
    expect((await swarm('inbox', 'crew', 'cc')).stdout).toMatch(/first\s+\[consumed\]/)
    expect(fs.existsSync(sentLogPath('crew', 'bob', h.env))).toBe(false)
    expect((await readSent(sentLogPath('crew', 'cc', h.env))).map((s) => s.text)).toEqual(['first', 'second'])
    // Removed with the team.
    expect((await swarm('team', 'delete', 'crew', '--force')).code).toBe(0)
    expect(fs.existsSync(path.dirname(sentLogPath('crew', 'cc', h.env)))).toBe(false)
  })

  it('the record lives outside the team directory, skips a torn line and is never followed through a link', async () => {
    const log = sentLogPath('crew', 'cc', h.env)
    expect(log.startsWith(path.join(h.home, 'teams'))).toBe(false)
    expect((await swarm('send', 'crew', 'cc', 'one')).code).toBe(0)
    fs.appendFileSync(log, '{"msg_id":"torn", "fr')
    expect((await readSent(log)).map((s) => s.text)).toEqual(['one'])
    const outside = path.join(h.base, 'outside.txt')
    fs.writeFileSync(outside, '')
    fs.rmSync(log)
    fs.symlinkSync(outside, log)
    const r = await swarm('send', 'crew', 'cc', 'two')
    expect(r.code).toBe(5)
    expect(r.stderr).toContain('not followed')
    expect(fs.readFileSync(outside, 'utf8')).toBe('')
    // Refused before anything was sent: the inbox did not get it.
    expect(fs.readFileSync(inboxPath('crew', 'cc', h.env), 'utf8')).not.toContain('"two"')
  })
})
