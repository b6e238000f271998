import { z } from 'zod'

/**
 * The permission modes (Claude Code's names, plus `bubble`: ask the parent). Pure data, below the
 * team file that records a member's mode and every layer that evaluates one.
 */
export const PermissionModeName = z.enum(['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk', 'bubble'])
export type PermissionModeName = z.infer<typeof PermissionModeName>
