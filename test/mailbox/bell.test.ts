import fs from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { bellPath, handRaised, raiseHand, ringBell } from '../../src/mailbox/bell.js'
import { appendMessage, readInbox } from '../../src/mailbox/inbox.js'
import { appendContended, type TempHome, useInbox } from './helpers.js'

let home: TempHome
let file: string
useInbox('lead', (t) => ({ home, file } = t))

describe("the spool's bell", () => {
  it('does nothing before any writer made a spool (no bell to ring or raise a hand on)', () => {
    ringBell(file)
    raiseHand(file)
    expect(handRaised(bellPath(file))).toBe(false)
  })

  it('holds a raised hand for a short while, until the raiser rings it down', async () => {
    await appendContended(file, 'makes the spool and its bell')
    const bell = bellPath(file)
    expect(handRaised(bell)).toBe(false)
    raiseHand(file)
    expect(handRaised(bell)).toBe(true)
    ringBell(file) // a plain ring (a merge) leaves the hand up
    expect(handRaised(bell)).toBe(true)
    ringBell(file, true)
    expect(handRaised(bell)).toBe(false)
  })

  it('an abandoned raised hand (its process died) stops counting: appends go on', async () => {
    await appendContended(file, 'one')
    raiseHand(file) // and never lowered
    await appendMessage(file, { from: 'alice', text: 'two' })
    expect((await readInbox(file)).map((m) => m.text)).toEqual(['one', 'two'])
    expect((await fs.readdir(`${file}.spool`)).includes('bell')).toBe(true)
  })
})
