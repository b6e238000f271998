import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { currentSettingsPin, hookDrift, hookNamedFiles, pinnedHookFiles, settingsPinChanges } from '../../../src/permissions/rules/settings-pin.js'
import { pinDrift, pinFile } from '../../../src/util/pin.js'

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-settings-pin-')))
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))
const proj = path.join(tmp, 'proj')
const env = { HOME: path.join(tmp, 'home'), SWARM_HOME: path.join(tmp, 'home', '.claude') }
const settingsFile = path.join(proj, '.claude', 'settings.json')
const policy = path.join(proj, '.claude', 'hooks', 'policy.sh')
const HOOK = 'sh "$CLAUDE_PROJECT_DIR/.claude/hooks/policy.sh" --strict'

function writeSettings(hooks: string[], sandbox: Record<string, unknown> = {}): void {
  fs.mkdirSync(path.dirname(policy), { recursive: true })
  const PermissionRequest = [{ hooks: hooks.map((command) => ({ type: 'command', command })) }]
  fs.writeFileSync(settingsFile, JSON.stringify({ hooks: { PermissionRequest }, sandbox }))
}

describe('util/pin', () => {
  it('pins bytes; names a change, a creation and a removal', () => {
    const f = path.join(tmp, 'f')
    const missing = pinFile(f)
    expect(missing.sha256).toBeNull()
    fs.writeFileSync(f, 'a')
    expect(pinDrift(missing)).toBe(`${f} was created`)
    const pinned = pinFile(f)
    expect(pinDrift(pinned)).toBeUndefined()
    fs.writeFileSync(f, 'b')
    expect(pinDrift(pinned)).toBe(`${f} changed`)
    fs.rmSync(f)
    expect(pinDrift(pinned)).toBe(`${f} was removed`)
  })
})

describe('settings pin', () => {
  it('hookNamedFiles: $CLAUDE_PROJECT_DIR and ~ expanded, words with a slash, bare project files; not flags or variables', () => {
    fs.mkdirSync(proj, { recursive: true })
    fs.writeFileSync(path.join(proj, 'check.py'), '')
    expect(hookNamedFiles(HOOK, proj, env.HOME)).toEqual([policy])
    const braced = '$' + '{CLAUDE_PROJECT_DIR}'
    expect(hookNamedFiles(`python3 check.py; ~/bin/x | node ${braced}/a.js $OTHER/b`, proj, env.HOME)).toEqual([
      path.join(proj, 'check.py'),
      path.join(env.HOME, 'bin', 'x'),
      path.join(proj, 'a.js'),
    ])
  })

  it('names a changed program, a new hook, a removed one and changed sandbox settings; nothing when all is as pinned', async () => {
    writeSettings([HOOK])
    fs.writeFileSync(policy, 'exit 0\n')
    const pinned = await currentSettingsPin(proj, env)
    expect(pinnedHookFiles(pinned)).toEqual([policy])
    expect(settingsPinChanges(pinned, await currentSettingsPin(proj, env))).toEqual([])
    fs.writeFileSync(policy, 'echo allow\n')
    expect(settingsPinChanges(pinned, await currentSettingsPin(proj, env))).toEqual([
      `hook ${JSON.stringify(HOOK)} (${settingsFile}): ${policy} changed`,
    ])
    writeSettings(['echo hi'], { enabled: false })
    expect(settingsPinChanges(pinned, await currentSettingsPin(proj, env))).toEqual([
      `new PermissionRequest hook "echo hi" in ${settingsFile}`,
      `PermissionRequest hook ${JSON.stringify(HOOK)} removed from ${settingsFile}`,
      'the sandbox settings changed',
    ])
  })

  it('hookDrift: a hook as pinned may run; one not pinned, or whose file changed, may not', async () => {
    writeSettings([HOOK])
    fs.writeFileSync(policy, 'exit 0\n')
    const pin = await currentSettingsPin(proj, env)
    const hook = { command: HOOK, source: 'project' as const, file: settingsFile }
    expect(hookDrift(pin, hook)).toBeUndefined()
    expect(hookDrift(pin, { ...hook, command: 'echo other' })).toContain('was not there when the member started')
    fs.writeFileSync(policy, 'echo allow\n')
    expect(hookDrift(pin, hook)).toContain(`${policy} changed since the member started`)
  })
})
