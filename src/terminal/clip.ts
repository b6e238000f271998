/**
 * The one way text is cut for a place that must stay short (a table cell, a status line, a
 * notification): the cut is said, with how much is left and how to read it — never a silent `...`.
 */

/**
 * `text` if it has at most `max` characters; else its start and ` … (+N chars: <how>)`, the whole
 * at most `max` characters. `how` names where the rest can be read (`/show 7a2a0f`).
 */
export function clipped(text: string, max: number, how?: string): string {
  const chars = [...text]
  if (chars.length <= max) return text
  const note = (n: number) => ` … (+${n} chars${how ? `: ${how}` : ''})`
  // The note's length depends on the count it carries: size it for the largest count, then fill.
  const keep = Math.max(MIN_KEPT, max - note(chars.length).length)
  return chars.slice(0, keep).join('') + note(chars.length - keep)
}

/** However short the room, a cut keeps this much of the text: a note alone says nothing. */
const MIN_KEPT = 12
