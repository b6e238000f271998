import { describe, expect, it } from 'vitest'
import { pastePieces } from '../../src/backends/pane-io.js'

/** A courier pasting in pieces (Qwen Code folds a paste over 1000 characters or 10 lines into a placeholder). */

const QWEN = { chars: 1000, lines: 10 }
const within = (piece: string) => [...piece].length <= QWEN.chars && piece.split('\n').length <= QWEN.lines

describe('pastePieces', () => {
  it('keeps text within the limits whole, and cuts at exactly the limits', () => {
    expect(pastePieces('a'.repeat(1000), QWEN)).toEqual(['a'.repeat(1000)])
    expect(pastePieces('a'.repeat(1001), QWEN)).toEqual(['a'.repeat(1000), 'a'])
    const ten = Array.from({ length: 10 }, (_, k) => `l${k}`).join('\n')
    expect(pastePieces(ten, QWEN)).toEqual([ten])
    expect(pastePieces(`${ten}\nl10`, QWEN)).toEqual([ten, '\nl10'])
    expect(pastePieces('', QWEN)).toEqual([])
  })

  it('joined back, the pieces are the text: 10 kB, blank lines, unicode never cut inside a code point', () => {
    const text = `/m0 starts with a slash\n\n${'lorem ipsum dolor sit amet '.repeat(380)}\n${'😀日本語—∑ü'.repeat(300)}\n${'x\n'.repeat(40)}end`
    const pieces = pastePieces(text, QWEN)
    expect(pieces.join('')).toBe(text)
    expect(pieces.length).toBeGreaterThan(10)
    for (const p of pieces) {
      expect(within(p), JSON.stringify(p.slice(0, 40))).toBe(true)
      expect(p).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/)
    }
  })
})
