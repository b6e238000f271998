import { PROVIDER_KEY_VARS } from './sandbox-settings.js'
import type { BashSandbox } from './types.js'

/**
 * The explicit "no sandbox" value: a member whose Bash has no OS sandbox says so, and why. Its
 * calls run as plain `bash -c`, and every decision that relies on "sandboxed" fails closed: the
 * status is `unavailable`, so each call is asked (denied where nobody answers), never auto-allowed.
 * No provider key of PROVIDER_KEY_VARS reaches them (no settings here could keep one).
 */
export function unsandboxed(why: string): BashSandbox {
  const reason = `no sandbox: ${why}`
  return {
    statusFor: async () => ({ status: 'unavailable', reason }),
    autoAllow: false,
    launch: async (command) => ({ file: 'bash', args: ['-c', command], unsetEnv: PROVIDER_KEY_VARS }),
    close: async () => {},
  }
}
