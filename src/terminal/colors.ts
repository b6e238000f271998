import type { Colors } from 'picocolors/types.js'

/** Claude Code's agent colours that picocolors has no function for. */
const ALIASES: Record<string, keyof Colors> = { purple: 'magenta', orange: 'yellow', pink: 'magenta' }

/** Paints `text` in an agent colour name (blue, green, purple, orange…); unknown names leave it plain. */
export function paintAgent(c: Colors, color: string | undefined, text: string): string {
  if (!color) return text
  const key = (ALIASES[color] ?? color) as keyof Colors
  const fn = (c as unknown as Record<string, unknown>)[key]
  return typeof fn === 'function' && key !== 'isColorSupported' ? (fn as (s: string) => string)(text) : text
}
