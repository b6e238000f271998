import fs from 'node:fs'
import path from 'node:path'
import { errorMessage } from '../errors.js'
import { runCommand } from '../process/launch.js'
import { seccompArgs, seccompProgram } from './seccomp.js'
import type { SandboxPlan } from './types.js'
import { isDirectorySync } from '../util/fs.js'

/**
 * The Linux sandbox: a bubblewrap argv for one Bash call, and a probe that actually runs bwrap.
 * The root is mounted read-only; the plan's writable and shadowed directories are bound in path
 * order (read-write, read-only), its read-only paths over them all, and hidden paths get an empty
 * read-only tmpfs.
 */

/** Where to get bwrap when it is missing (Debian and Ubuntu). */
export const BWRAP_INSTALL = 'apt-get install -y bubblewrap'

/**
 * Run as root (a container), bwrap keeps every capability: without `--cap-drop ALL` a command
 * could simply `umount` the tmpfs over the control plane. Without a pid namespace it could
 * ptrace the agent that started it (same uid) and run unsandboxed code there; inside one it sees
 * only its own processes, and all of them die with the namespace (`setsid` ones too).
 */
const ISOLATION = ['--die-with-parent', '--cap-drop', 'ALL', '--unshare-pid', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc']

/**
 * bwrap's argv for `plan`. The process group stays the agent's, so the Bash tool's group kill
 * reaches it, and `--die-with-parent` ends it with the agent. No `--new-session`: the Bash tool
 * already starts it as a session leader without a terminal.
 */
export function bwrapArgs(plan: SandboxPlan): string[] {
  return [...bwrapViewArgs(plan), '--', 'bash', '-c', plan.command]
}

/**
 * bwrap's argv for `plan` up to the program: isolation, the mounts (by depth, a masked directory's
 * tmpfs before what is bound again beneath it), the network, the environment
 * and the working directory.
 */
export function bwrapViewArgs(plan: Omit<SandboxPlan, 'command'>): string[] {
  const args = [...ISOLATION]
  for (const m of maskedThenLayered(plan)) args.push(m.kind, m.path, ...(m.kind === '--tmpfs' ? [] : [m.path]))
  for (const p of plan.readOnly) args.push('--ro-bind', p, p)
  for (const p of plan.hidden) {
    if (isDirectorySync(p)) args.push('--tmpfs', p, '--remount-ro', p)
    else args.push('--ro-bind', '/dev/null', p)
  }
  for (const dir of plan.masked ?? []) args.push('--remount-ro', dir)
  if (!plan.network) args.push('--unshare-net')
  for (const [k, v] of Object.entries(plan.setenv)) args.push('--setenv', k, v)
  args.push(...seccompArgs(plan))
  args.push('--chdir', plan.cwd)
  return args
}

/**
 * The writable and shadowed directories in mount order: a parent before what lies beneath it (a
 * later mount covers an earlier one below it), a shadowed directory after a writable one of the
 * same path. So the deepest entry decides: `<repo>` writable, `<repo>/.claude` read-only, the
 * member's own `<repo>/.claude/worktrees/<slug>` writable again.
 */
export function layeredMounts(plan: Pick<SandboxPlan, 'writable' | 'shadowed'>): Array<{ path: string; writable: boolean }> {
  const all = [...plan.writable.map((p) => ({ path: p, writable: true })), ...(plan.shadowed ?? []).map((p) => ({ path: p, writable: false }))]
  const depth = (p: string) => p.split(path.sep).filter(Boolean).length
  return all.sort((a, b) => depth(a.path) - depth(b.path) || Number(a.writable === false) - Number(b.writable === false))
}

/**
 * The masked directories' tmpfs and the layered binds in one order by depth, a tmpfs first at its
 * depth: a writable parent (Claude Code's config dir over `teams/`) is bound before the tmpfs
 * that masks its child, which it would otherwise cover (and `--remount-ro` of it then fails).
 */
function maskedThenLayered(plan: Omit<SandboxPlan, 'command'>): Array<{ path: string; kind: '--tmpfs' | '--bind' | '--ro-bind' }> {
  const depth = (p: string) => p.split(path.sep).filter(Boolean).length
  const masked = (plan.masked ?? []).map((p) => ({ path: p, kind: '--tmpfs' as const }))
  const layered = layeredMounts(plan).map((m) => ({ path: m.path, kind: m.writable ? ('--bind' as const) : ('--ro-bind' as const) }))
  // Stable: at one depth the tmpfs first, then the layered binds in their own order.
  return [...masked, ...layered].sort((a, b) => depth(a.path) - depth(b.path))
}

/** The bwrap to use: `configured` (settings' `sandbox.bwrapPath`) or the first `bwrap` on env's PATH. */
export function findBwrap(env: NodeJS.ProcessEnv, configured?: string): string | undefined {
  const candidates = configured
    ? [configured]
    : (env.PATH ?? '')
        .split(path.delimiter)
        .filter(Boolean)
        .map((d) => path.join(d, 'bwrap'))
  return candidates.find((c) => {
    try {
      fs.accessSync(c, fs.constants.X_OK)
      return fs.statSync(c).isFile()
    } catch {
      return false
    }
  })
}

export interface ProbeResult {
  ok: boolean
  /** What was run and what happened, for `swarm doctor` and warnings. */
  detail: string
}

const probes = new Map<string, Promise<ProbeResult>>()

/**
 * Runs `bwrap … true` once per binary and process, loading the seccomp filter as every call does:
 * bwrap can be installed and still fail (no user namespaces in a container, a setuid bit missing,
 * no seccomp). Cached: the answer does not change.
 */
export function probeBwrap(bwrap: string): Promise<ProbeResult> {
  let p = probes.get(bwrap)
  if (!p) {
    p = runProbe(bwrap)
    probes.set(bwrap, p)
  }
  return p
}

async function runProbe(bwrap: string): Promise<ProbeResult> {
  const seccomp = seccompProgram({ blockUnixSockets: true })
  const args = [...ISOLATION, ...seccompArgs({ seccomp }), '--', 'true']
  try {
    const r = await runCommand(bwrap, args, { timeoutMs: PROBE_TIMEOUT_MS, fd3: seccomp })
    if (r.code === 0) return { ok: true, detail: `${bwrap} runs${seccomp ? ' with the seccomp filter' : ''}` }
    return { ok: false, detail: `${bwrap} failed (exit ${r.code}): ${r.stderr.trim().split('\n').at(-1) ?? ''}` }
  } catch (err) {
    return { ok: false, detail: `${bwrap} could not be run: ${errorMessage(err)}` }
  }
}

const PROBE_TIMEOUT_MS = 5_000
