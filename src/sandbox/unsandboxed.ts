import type { BashSandbox } from './types.js'

/**
 * The explicit "no sandbox" value: a member whose Bash has no OS sandbox says so, and why. Its
 * calls run as plain `bash -c`, and every decision that relies on "sandboxed" fails closed: the
 * status is `unavailable`, so each call is asked (denied where nobody answers), never auto-allowed.
 */
export function unsandboxed(why: string): BashSandbox {
  const reason = `no sandbox: ${why}`
  return {
    statusFor: async () => ({ status: 'unavailable', reason }),
    autoAllow: false,
    launch: async (command) => ({ file: 'bash', args: ['-c', command] }),
    close: async () => {},
  }
}
