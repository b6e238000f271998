import { createHash } from 'node:crypto'

/**
 * The digests that bind a lead's answer to the request it answers, computed exactly as Claude
 * Code 2.1.332 computes them (read off its binary; docs/claude-code.md pins the code and
 * test/interop/claude-binding.test.ts re-reads it): a teammate holding `--lead-verify-key` refuses
 * an approval whose digest differs from the one it kept when it asked. Pure.
 */

/** How deep Claude Code sorts object keys before hashing (deeper values are hashed as they are). */
const SORT_DEPTH = 32

/** Object keys sorted by UTF-16 code units, recursively up to SORT_DEPTH levels (Claude Code's `g`). */
function sortedKeys(value: unknown, depth = 0): unknown {
  if (depth > SORT_DEPTH) return value
  if (Array.isArray(value)) return value.map((v) => sortedKeys(v, depth + 1))
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, sortedKeys(v, depth + 1)]),
    )
  }
  return value
}

/**
 * `input_digest` of a permission request: sha256 hex over the tool's name, a NUL, then the JSON of
 * its input (round-tripped through JSON, keys sorted).
 */
export function claudeInputDigest(toolName: string, input: unknown): string {
  const wire: unknown = JSON.parse(JSON.stringify(input ?? null))
  return createHash('sha256')
    .update(toolName)
    .update('\x00')
    .update(JSON.stringify(sortedKeys(wire)))
    .digest('hex')
}

/** `planDigest` of a plan approval request: sha256 hex of its `planContent`, as sent. */
export function claudePlanDigest(planContent: string): string {
  return createHash('sha256').update(planContent).digest('hex')
}

/** The `approved_request` of a permission_response (approval or denial): which call it answers. */
export function approvedRequest(r: { toolUseId: string; toolName: string; input: unknown }): {
  tool_use_id: string
  tool_name: string
  input_digest: string
} {
  return { tool_use_id: r.toolUseId, tool_name: r.toolName, input_digest: claudeInputDigest(r.toolName, r.input) }
}
