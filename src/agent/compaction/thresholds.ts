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

/**
 * A model the name rule knows: Anthropic's Claude models (an API id, or a Bedrock/Vertex id
 * holding `claude-`). For any other model (a compatible server's) the rule only guesses.
 */
function isKnownModel(model: string): boolean {
  return /(^|[./:])claude-/i.test(model.trim())
}

/**
 * The model's context window: what the API itself said (`learned`, from a 400 "prompt is too long:
 * N tokens > M maximum", kept in the member's state.json) wins; else 200k, 1M for names ending in
 * `[1m]`; SWARM_CONTEXT_WINDOW (tokens) sets it for a model the rule does not know (isKnownModel)
 * — a local model's window, or a small one in tests — and never overrides a Claude model's.
 */
export function contextWindowOf(model: string, env: NodeJS.ProcessEnv, learned?: number): number {
  if (learned !== undefined && Number.isInteger(learned) && learned > 0) return learned
  const override = Number(env.SWARM_CONTEXT_WINDOW)
  if (!isKnownModel(model) && Number.isInteger(override) && override > 0) return override
  return /\[1m\]$/i.test(model.trim()) ? 1_000_000 : 200_000
}

/**
 * A window so small that Claude Code's fixed reserves leave less than this share of it to compact
 * at (a local model's, or one a 400 named) compacts at SMALL_WINDOW_COMPACT_SHARE of it instead:
 * the share the reactive compaction after a prompt-too-long answer aims below (compactor.ts).
 */
const SMALL_WINDOW_SHARE = 0.25
const SMALL_WINDOW_COMPACT_SHARE = 0.8

export function compactionPolicy(model: string, maxOutputTokens: number, env: NodeJS.ProcessEnv, learned?: number): CompactionPolicy {
  const window = contextWindowOf(model, env, learned)
  const effectiveWindow = window - Math.min(maxOutputTokens, OUTPUT_RESERVE_CAP)
  let compactAt = effectiveWindow - AUTOCOMPACT_BUFFER
  let warnAt = compactAt - WARNING_BUFFER
  if (compactAt < window * SMALL_WINDOW_SHARE) {
    compactAt = Math.floor(window * SMALL_WINDOW_COMPACT_SHARE)
    warnAt = Math.floor(compactAt * 0.9)
  }
  const pct = Number(env.CLAUDE_AUTOCOMPACT_PCT_OVERRIDE)
  if (env.CLAUDE_AUTOCOMPACT_PCT_OVERRIDE && pct > 0 && pct <= 100) {
    compactAt = Math.min(compactAt, Math.floor((effectiveWindow * pct) / 100))
    warnAt = compactAt - WARNING_BUFFER
  }
  const disabled = env.DISABLE_AUTO_COMPACT !== undefined && env.DISABLE_AUTO_COMPACT !== '' && env.DISABLE_AUTO_COMPACT !== '0'
  return { window, effectiveWindow, compactAt, warnAt, auto: !disabled }
}
