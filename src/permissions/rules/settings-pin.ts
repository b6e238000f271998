/**
 * Executable settings are pinned when a member starts: each PermissionRequest hook's command
 * and the files it names (by sha256, util/pin.ts as adapter files are), and the merged `sandbox`
 * settings. A running member runs a hook only as pinned; `team resume` names what changed since.
 */
import os from 'node:os'
import path from 'node:path'
import { z } from 'zod'
import { FilePin, pinDrift, pinFile, sha256Hex } from '../../util/pin.js'
import { type LoadedSettings, loadPermissionSettings } from './settings.js'
import type { PermissionHook } from './types.js'

/** The member entry's field holding its settings pin (Claude Code ignores unknown fields). */
export const SETTINGS_PIN_FIELD = 'swarmSettingsPin'

export const HookPin = z.object({ command: z.string(), file: z.string(), files: z.array(FilePin) })
export type HookPin = z.infer<typeof HookPin>

export const SettingsPin = z.object({
  hooks: z.array(HookPin),
  /** sha256 of the merged sandbox settings. */
  sandbox: z.string(),
})
export type SettingsPin = z.infer<typeof SettingsPin>

/**
 * The files a hook command names: every word with a `/` (after `$CLAUDE_PROJECT_DIR` and `~`),
 * and a bare word that is a file of the project (`sh policy.sh`). Words holding another variable
 * or a glob cannot be resolved and are skipped.
 */
export function hookNamedFiles(command: string, projectDir: string, home = os.homedir()): string[] {
  const words = command
    .split(/[\s;&|<>()]+/)
    .map((w) => w.replace(/^['"]+|['"]+$/g, '').replace(/["']/g, ''))
    .map((w) => w.replace(/\$\{?CLAUDE_PROJECT_DIR\}?/g, projectDir).replace(/^~(?=\/|$)/, home))
    .filter((w) => w !== '' && !w.startsWith('-') && !/[$*?`]/.test(w))
  const out = new Set<string>()
  for (const w of words) {
    if (w.includes('/')) out.add(path.resolve(projectDir, w))
    else if (pinFile(path.join(projectDir, w)).sha256 !== null) out.add(path.join(projectDir, w))
  }
  return [...out]
}

/** The pin of `settings` (loaded for `projectDir`), as the files are now. */
export function pinSettings(settings: Pick<LoadedSettings, 'permissionRequestHooks' | 'sandbox'>, projectDir: string, home?: string): SettingsPin {
  return {
    hooks: settings.permissionRequestHooks.map((h) => ({
      command: h.command,
      file: h.file,
      files: hookNamedFiles(h.command, projectDir, home).map(pinFile),
    })),
    sandbox: sha256Hex(JSON.stringify(settings.sandbox)),
  }
}

/** The settings a member in `cwd` would start with now, pinned. */
export async function currentSettingsPin(cwd: string, env: NodeJS.ProcessEnv): Promise<SettingsPin> {
  return pinSettings(await loadPermissionSettings({ cwd, env }), cwd, env.HOME || undefined)
}

/** Every file a pinned hook names: read-only in the sandbox, asked in every mode. */
export function pinnedHookFiles(pin: SettingsPin): string[] {
  return [...new Set(pin.hooks.flatMap((h) => h.files.map((f) => f.file)))]
}

/**
 * Why `hook` may not run as pinned in `pin` — its command is not one pinned at start, or a file
 * it names changed since — or undefined when it may.
 */
export function hookDrift(pin: SettingsPin, hook: PermissionHook): string | undefined {
  const pinned = pin.hooks.find((h) => h.command === hook.command && h.file === hook.file)
  if (!pinned) return `hook ${JSON.stringify(hook.command)} (${hook.file}) was not there when the member started`
  const drift = pinned.files.map(pinDrift).filter((d): d is string => d !== undefined)
  return drift.length ? `hook ${JSON.stringify(hook.command)}: ${drift.join(', ')} since the member started` : undefined
}

/** What differs between the settings pinned (at spawn) and now, one line each; empty when nothing does. */
export function settingsPinChanges(pinned: SettingsPin, now: SettingsPin): string[] {
  const key = (h: HookPin) => `${h.file}\0${h.command}`
  const before = new Map(pinned.hooks.map((h) => [key(h), h]))
  const out: string[] = []
  for (const h of now.hooks) {
    const old = before.get(key(h))
    if (!old) {
      out.push(`new PermissionRequest hook ${JSON.stringify(h.command)} in ${h.file}`)
      continue
    }
    const drift = old.files.map(pinDrift).filter((d): d is string => d !== undefined)
    if (drift.length) out.push(`hook ${JSON.stringify(h.command)} (${h.file}): ${drift.join(', ')}`)
  }
  const nowKeys = new Set(now.hooks.map(key))
  for (const h of pinned.hooks) if (!nowKeys.has(key(h))) out.push(`PermissionRequest hook ${JSON.stringify(h.command)} removed from ${h.file}`)
  if (pinned.sandbox !== now.sandbox) out.push('the sandbox settings changed')
  return out
}
