/**
 * Context windows by model name, as the API enforces them: 200k tokens, 1M for a `[1m]` variant.
 * A prompt above the window is refused with 400 invalid_request_error in the API's own words.
 */

export const DEFAULT_CONTEXT_WINDOW = 200_000
export const EXTENDED_CONTEXT_WINDOW = 1_000_000

/** The window of `model`: 1M for names ending in `[1m]`, else 200k; `override` (tests, small windows) wins. */
export function contextWindowFor(model: string, override?: number): number {
  if (override !== undefined) return override
  return /\[1m\]$/i.test(model.trim()) ? EXTENDED_CONTEXT_WINDOW : DEFAULT_CONTEXT_WINDOW
}

/** The API's message for a prompt above the window. */
export function promptTooLongMessage(tokens: number, maximum: number): string {
  return `prompt is too long: ${tokens} tokens > ${maximum} maximum`
}

/** Reads the N and M back out of a prompt-too-long message (undefined for any other message). */
export function parsePromptTooLong(message: string): { tokens: number; maximum: number } | undefined {
  const m = /prompt is too long: (\d+) tokens > (\d+) maximum/.exec(message)
  return m ? { tokens: Number(m[1]), maximum: Number(m[2]) } : undefined
}
