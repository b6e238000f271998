import type { BashSandbox } from '../../sandbox/types.js'
import type { PermissionQuery } from './types.js'

/**
 * What a Bash call's permission query says about its sandbox: the status of the sandbox the call
 * will run in. No sandbox value reads as `unavailable` — the call is asked, never auto-allowed.
 */
export async function bashSandboxQuery(
  sandbox: BashSandbox | undefined,
  input: Record<string, unknown>,
): Promise<Pick<PermissionQuery, 'bashSandbox' | 'autoAllowSandboxedBash'>> {
  if (!sandbox) return { bashSandbox: { status: 'unavailable', reason: 'this call has no sandbox value' }, autoAllowSandboxedBash: false }
  return { bashSandbox: await sandbox.statusFor(String(input.command ?? '')), autoAllowSandboxedBash: sandbox.autoAllow }
}
