import pc from 'picocolors'
import { describe, expect, it } from 'vitest'
import { CONTINUATION, SPLIT_MARK, visibleWidth, withoutColors, wrapLines } from '../../src/terminal/wrap.js'

const PROMPT =
  '? [7a2a0f] worker wants to use Bash: npm run build && npm test -- --reporter=verbose --coverage src/a/very/long/path/that/goes/on/and/on/forever/file.ts ok'
const words = (s: string) => withoutColors(s).split(/\s+/).filter(Boolean)

describe('wrapLines', () => {
  it('breaks only at spaces, every line within the width, every word kept, continuations indented', () => {
    for (const width of [30, 41, 60, 65]) {
      const out = wrapLines(PROMPT, width).split('\n')
      for (const l of out) expect(visibleWidth(l)).toBeLessThanOrEqual(width)
      for (const l of out.slice(1)) expect(l.startsWith(CONTINUATION)).toBe(true)
      const longWord = 'src/a/very/long/path/that/goes/on/and/on/forever/file.ts'
      if (width > longWord.length + CONTINUATION.length) expect(words(out.join('\n'))).toEqual(words(PROMPT))
      else expect(out.join('').replaceAll(SPLIT_MARK, '').replace(/\s+/g, '')).toBe(PROMPT.replace(/\s+/g, ''))
    }
  })

  it('marks each piece of a word split for being wider than the line', () => {
    const word = 'x'.repeat(70)
    const out = wrapLines(`run ${word}`, 30).split('\n')
    for (const l of out) expect(visibleWidth(l)).toBeLessThanOrEqual(30)
    expect(out[0]).toBe('run') // the long word starts on a line of its own
    expect(out.slice(1, -1).every((l) => l.endsWith(SPLIT_MARK))).toBe(true)
    expect(out.at(-1)!.endsWith(SPLIT_MARK)).toBe(false)
    expect(out.join('').replaceAll(SPLIT_MARK, '').replace(/\s+/g, '')).toBe(`run${word}`)
  })

  it('does not count colour codes, and keeps them', () => {
    const c = pc.createColors(true)
    const line = c.magenta(`${c.bold('worker')} wants to use ${c.bold('Bash')}: ${'word '.repeat(20).trim()}`)
    const out = wrapLines(line, 30)
    expect(out.replace(/\n */g, ' ')).toBe(line)
    for (const l of out.split('\n')) expect(visibleWidth(l)).toBeLessThanOrEqual(30)
  })

  it('leaves short lines, and lines without a width, as they are', () => {
    expect(wrapLines('short line', 80)).toBe('short line')
    expect(wrapLines(PROMPT, undefined)).toBe(PROMPT)
    expect(wrapLines('a\nb', 10)).toBe('a\nb')
  })

  it("indents a wrapped line's continuations deeper than its own indent", () => {
    const out = wrapLines('  [y] approve once  [a] approve always  [n <feedback>] deny — request 7a2a0f of worker', 40).split('\n')
    expect(out[0].startsWith('  [y] approve once')).toBe(true)
    for (const l of out.slice(1)) expect(l.startsWith(CONTINUATION)).toBe(true)
  })
})
