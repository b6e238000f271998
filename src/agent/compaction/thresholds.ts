/**
 * When a conversation is compacted, by Claude Code's rule: effective window = context window −
 * min(max output tokens, 20k); compact at effective − 13k; warn 20k before that.
 * CLAUDE_AUTOCOMPACT_PCT_OVERRIDE (1–100) compacts earlier, at that share of the effective
 * window; DISABLE_AUTO_COMPACT turns automatic compaction off (manual /compact still works).
 */

const OUTPUT_RESERVE_CAP = 20_000
const AUTOCOMPACT_BUFFER = 13_000
const WARNING_BUFFER = 20_000

export interface CompactionPolicy {
  /** The model's context window, in tokens. */
  window: number
  effectiveWindow: number
  /** Compact before a request estimated above this. */
  compactAt: number
  /** Tell the pane the conversation is getting close. */
  warnAt: number
  /** False with DISABLE_AUTO_COMPACT: neither the threshold nor a prompt-too-long answer compacts. */
  auto: boolean
}

/** 200k, 1M for names ending in `[1m]`; SWARM_CONTEXT_WINDOW (tokens) overrides it (small windows in tests). */
export function contextWindowOf(model: string, env: NodeJS.ProcessEnv): number {
  const override = Number(env.SWARM_CONTEXT_WINDOW)
  if (Number.isInteger(override) && override > 0) return override
  return /\[1m\]$/i.test(model.trim()) ? 1_000_000 : 200_000
}

export function compactionPolicy(model: string, maxOutputTokens: number, env: NodeJS.ProcessEnv): CompactionPolicy {
  const window = contextWindowOf(model, env)
  const effectiveWindow = window - Math.min(maxOutputTokens, OUTPUT_RESERVE_CAP)
  let compactAt = effectiveWindow - AUTOCOMPACT_BUFFER
  const pct = Number(env.CLAUDE_AUTOCOMPACT_PCT_OVERRIDE)
  if (env.CLAUDE_AUTOCOMPACT_PCT_OVERRIDE && pct > 0 && pct <= 100) compactAt = Math.min(compactAt, Math.floor((effectiveWindow * pct) / 100))
  const disabled = env.DISABLE_AUTO_COMPACT !== undefined && env.DISABLE_AUTO_COMPACT !== '' && env.DISABLE_AUTO_COMPACT !== '0'
  return { window, effectiveWindow, compactAt, warnAt: compactAt - WARNING_BUFFER, auto: !disabled }
}
