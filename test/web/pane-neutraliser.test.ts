import { describe, expect, it } from 'vitest'
import { terminalSafe } from '../../src/terminal/neutralize.js'
import { PaneNeutraliser } from '../../src/web/pane-view.js'

describe('terminalSafe keepSgr: colours kept, every other sequence shown as data', () => {
  it('keeps SGR colour sequences, shows cursor moves, titles, clears and OSC as text', () => {
    const out = terminalSafe('\x1b[1;31mred\x1b[0m \x1b[2J\x1b[H \x1b]0;t\x07 \x1b]52;c;aGk=\x07 \x1b[38;5;8mgrey\x1b[m', { keepSgr: true })
    expect(out).toBe('\x1b[1;31mred\x1b[0m ␛[2J␛[H ␛]0;t␇ ␛]52;c;aGk=␇ \x1b[38;5;8mgrey\x1b[m')
  })
  it('drops conceal (8) so no text is hidden, keeping a colour whose index is 8', () => {
    expect(terminalSafe('\x1b[8msecret\x1b[0m', { keepSgr: true })).toBe('secret\x1b[0m')
    expect(terminalSafe('\x1b[1;8;48;2;8;8;8m', { keepSgr: true })).toBe('\x1b[1;48;2;8;8;8m')
  })
  it('is idempotent and without the option neutralises SGR too', () => {
    const once = terminalSafe('\x1b[32mok\x1b[0m\x1b[A', { keepSgr: true })
    expect(terminalSafe(once, { keepSgr: true })).toBe(once)
    expect(terminalSafe('\x1b[32mok')).toBe('␛[32mok')
  })
})

describe('PaneNeutraliser: pane bytes in chunks', () => {
  it('a colour or a CRLF split between chunks is joined, not shown as text; UTF-8 split too', () => {
    const n = new PaneNeutraliser()
    const euro = Buffer.from('€')
    const parts = [Buffer.from('a\r'), Buffer.from('\nb\x1b['), Buffer.from('31mred\x1b'), Buffer.from('[0m '), euro.subarray(0, 1), euro.subarray(1)]
    const out = parts.map((p) => n.push(p)).join('')
    expect(out).toBe('a\nb\x1b[31mred\x1b[0m €')
  })
  it('a lone CR and a non-SGR sequence are shown', () => {
    const n = new PaneNeutraliser()
    expect(n.push(Buffer.from('50%\r60%\x1b[K\r\n'))).toBe('50%␍60%␛[K\n')
  })
})
