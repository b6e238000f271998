/**
 * The colours Claude Code gives teammates, in the order it hands them out. The names are shared
 * with tmux (pane titles) and the CLI (picocolors, where a missing name falls back to plain text).
 */
export const AGENT_COLORS = ['blue', 'green', 'yellow', 'purple', 'orange', 'pink', 'cyan', 'red'] as const
export type AgentColor = (typeof AGENT_COLORS)[number]

/**
 * The first palette colour nobody in `used` has; once every colour is taken, colours repeat in
 * palette order so that neighbours still differ.
 */
export function pickColor(used: ReadonlyArray<string | undefined>): AgentColor {
  const taken = new Set(used.filter((c): c is string => typeof c === 'string'))
  const free = AGENT_COLORS.find((c) => !taken.has(c))
  if (free) return free
  const assigned = used.filter((c) => c !== undefined).length
  return AGENT_COLORS[assigned % AGENT_COLORS.length]
}
