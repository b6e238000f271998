/**
 * How `team resume` answers for settings that changed since a member started: `--trust-settings`
 * trusts them; on a terminal the user is shown each change and asked; otherwise nothing is
 * trusted and the resume stops with exit 4 (SettingsChangedError names the changes).
 */
import readline from 'node:readline/promises'
import type { ChangedSettings } from '../supervisor/settings-pins.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { println } from '../terminal/output.js'

export function settingsTrust(opts: { trustSettings?: boolean; json?: boolean }): (changed: ChangedSettings[]) => Promise<boolean> {
  return async (changed) => {
    if (opts.trustSettings) return true
    if (opts.json || !process.stdin.isTTY || !process.stdout.isTTY) return false
    println('settings that run programs changed since these teammates started:')
    // Hook commands and paths are teammate-controlled text: one neutral line each.
    for (const c of changed) for (const line of c.changes) println(`  ${c.name}: ${terminalSafe(line, { singleLine: true })}`)
    const rl = readline.createInterface({ input: process.stdin, output: process.stdout })
    try {
      return /^y(es)?$/i.test((await rl.question('start them with these settings? [y/N] ')).trim())
    } finally {
      rl.close()
    }
  }
}
