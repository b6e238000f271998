import { layeredMounts } from './bwrap.js'
import type { SandboxPlan } from './types.js'

/**
 * The macOS sandbox: a `sandbox-exec` (Seatbelt) profile with the same view as the Linux one —
 * writes only to the writable directories, protected paths read-only, hidden paths unreadable.
 * UNTESTED: swarm's CI runs on Linux only; the profile is generated, never run there.
 */
export function seatbeltProfile(plan: SandboxPlan): string {
  const q = (p: string) => JSON.stringify(p)
  const lines = [
    '(version 1)',
    '(allow default)',
    '(deny file-write*)',
    '(allow file-write* (literal "/dev/null") (regex #"^/dev/tty") (regex #"^/dev/fd/"))',
  ]
  // The later rule wins, as the later mount does in bwrap: parents first, the deepest decides.
  for (const m of layeredMounts(plan)) lines.push(`(${m.writable ? 'allow' : 'deny'} file-write* (subpath ${q(m.path)}))`)
  if (plan.readOnly.length) lines.push(`(deny file-write* ${plan.readOnly.map((p) => `(subpath ${q(p)})`).join(' ')})`)
  if (plan.hidden.length) lines.push(`(deny file-read* file-write* ${plan.hidden.map((p) => `(subpath ${q(p)})`).join(' ')})`)
  if (!plan.network) lines.push('(deny network*)')
  return lines.join('\n') + '\n'
}

/** sandbox-exec's argv for `plan` (the environment is set by the caller). */
export function seatbeltArgs(plan: SandboxPlan): string[] {
  return ['-p', seatbeltProfile(plan), 'bash', '-c', plan.command]
}
