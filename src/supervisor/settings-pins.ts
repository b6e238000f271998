/**
 * Each member's settings pin (permissions/rules/settings-pin.ts) in its team entry: written when
 * it is spawned, compared by `team resume` before the member starts again with what is there now
 * — a hook another teammate planted meanwhile is named and asked about, never trusted silently.
 */
import { ConflictError, errorMessage } from '../errors.js'
import { SETTINGS_PIN_FIELD, SettingsPin, currentSettingsPin, settingsPinChanges } from '../permissions/rules/settings-pin.js'
import { updateTeam } from '../teams/team-store.js'
import type { TeamFile, TeamMember } from '../teams/types.js'
import type { Env } from '../home/env.js'

/** Asked when members about to start have changed settings: true trusts them (they are pinned anew). */
export type TrustSettings = (changed: ChangedSettings[]) => Promise<boolean> | boolean

/** One member whose executable settings differ from its pin, with what differs. */
export interface ChangedSettings {
  name: string
  changes: string[]
}

/** `team resume` found changed settings and nobody trusted them (exit 4). */
export class SettingsChangedError extends ConflictError {
  constructor(team: string, changed: ChangedSettings[]) {
    const what = changed.map((c) => `${c.name}: ${c.changes.join('; ')}`).join(' | ')
    super(
      'SWARM_SETTINGS_CHANGED',
      `the settings of ${changed.map((c) => c.name).join(', ')} changed since they started (${what}); nothing was started`,
      {
        hint: `check the files named, then run: swarm team resume ${team} --trust-settings`,
      },
    )
  }
}

/** Records the pin of each member as its settings are now (at spawn, or once a resume trusted them). */
export async function recordSettingsPins(team: string, members: ReadonlyArray<{ name: string; cwd: string }>, env: Env): Promise<void> {
  const pins = await currentSettingsPins(members, env)
  await updateTeam(team, (t) => pinSettings(t, pins), env)
}

/** The pins to record: each member's settings as they are now (undefined: they do not parse). */
export async function currentSettingsPins(
  members: ReadonlyArray<{ name: string; cwd: string }>,
  env: Env,
): Promise<Map<string, SettingsPin | undefined>> {
  const pins = new Map<string, SettingsPin | undefined>()
  for (const m of members) {
    // A settings file that does not parse stops the member itself, with its name: no pin for it.
    pins.set(m.name, await currentSettingsPin(m.cwd, env).catch(() => undefined))
  }
  return pins
}

/** Writes `pins` into a config draft (updateTeam's): the write of recordSettingsPins, for a caller that changes more in the same write. */
export function pinSettings(t: TeamFile, pins: ReadonlyMap<string, SettingsPin | undefined>): void {
  for (const m of t.members) {
    if (!pins.has(m.name)) continue
    const pin = pins.get(m.name)
    if (pin) m[SETTINGS_PIN_FIELD] = pin
    else delete m[SETTINGS_PIN_FIELD]
  }
}

/**
 * The members among `members` whose settings differ from their pin now. A member with no pin
 * (spawned by an older swarm) has nothing to compare with and is not listed; settings that no
 * longer parse are a change.
 */
export async function changedSettings(members: readonly TeamMember[], env: Env): Promise<ChangedSettings[]> {
  const out: ChangedSettings[] = []
  for (const m of members) {
    const pinned = SettingsPin.safeParse(m[SETTINGS_PIN_FIELD])
    if (!pinned.success) continue
    const changes = await currentSettingsPin(m.cwd, env).then(
      (now) => settingsPinChanges(pinned.data, now),
      (err: unknown) => [`its settings cannot be read: ${errorMessage(err)}`],
    )
    if (changes.length) out.push({ name: m.name, changes })
  }
  return out
}

/**
 * The one check before members start again (`team resume` on every backend, an in-process leader
 * restarting its roster): their changed settings are trusted — and pinned anew — or nothing starts
 * (SettingsChangedError, exit 4). Without `trust` nothing changed is trusted.
 */
export async function checkSettingsPins(team: string, members: readonly TeamMember[], env: Env, trust?: TrustSettings): Promise<void> {
  const changed = await changedSettings(members, env)
  if (!changed.length) return
  if (!(await trust?.(changed))) throw new SettingsChangedError(team, changed)
  await recordSettingsPins(team, members, env)
}
