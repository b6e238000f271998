import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CorruptFileError, UsageError } from '../../../src/errors.js'
import { controlPlaneOptions } from '../../../src/permissions/rules/control-plane.js'
import { evaluatePermission } from '../../../src/permissions/rules/evaluate.js'
import { loadPermissionSettings } from '../../../src/permissions/rules/settings.js'
import { useTempDir } from '../../support/home.js'

let tmp: string
let root: string
let cwd: string
let env: NodeJS.ProcessEnv

useTempDir('swarm-perm-settings-', (d) => {
  tmp = d
  root = path.join(tmp, 'root')
  cwd = path.join(tmp, 'proj')
  fs.mkdirSync(root, { recursive: true })
  fs.mkdirSync(path.join(cwd, '.claude'), { recursive: true })
  env = { SWARM_HOME: root }
})

const write = (file: string, value: unknown) => fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value))
const userFile = () => path.join(root, 'settings.json')
const projectFile = () => path.join(cwd, '.claude', 'settings.json')
const localFile = () => path.join(cwd, '.claude', 'settings.local.json')

describe('loadPermissionSettings', () => {
  it('returns nothing when no file exists', async () => {
    const s = await loadPermissionSettings({ cwd, env })
    expect(s.rules).toEqual([])
    expect(s.defaultMode).toBeUndefined()
    expect(s.files.map((f) => [f.scope, f.exists])).toEqual([
      ['user', false],
      ['project', false],
      ['local', false],
    ])
  })

  it('merges user, project, local, then the command line, in that order', async () => {
    write(userFile(), { permissions: { allow: ['Bash(git:*)'], defaultMode: 'plan', additionalDirectories: ['~/shared'] } })
    write(projectFile(), {
      permissions: { ask: ['Bash(git push:*)'], deny: ['Read(.env)'], defaultMode: 'acceptEdits', additionalDirectories: ['../lib'] },
      model: 'kept',
    })
    write(localFile(), { permissions: { allow: ['Bash(git push origin dev)'] } })
    const s = await loadPermissionSettings({ cwd, env, cli: { deny: ['Bash(rm:*)'] } })
    expect(s.rules.map((r) => `${r.source}:${r.behavior}:${r.raw}`)).toEqual([
      'user:allow:Bash(git:*)',
      'project:ask:Bash(git push:*)',
      'project:deny:Read(.env)',
      'local:allow:Bash(git push origin dev)',
      'cli:deny:Bash(rm:*)',
    ])
    expect(s.defaultMode).toBe('acceptEdits')
    expect(s.additionalDirectories).toEqual([path.join(os.homedir(), 'shared'), path.join(tmp, 'lib')])
    expect(s.rules[1].baseDir).toBe(cwd)
    expect(s.rules[0].baseDir).toBe(root)

    const ev = (command: string) =>
      evaluatePermission({
        toolName: 'Bash',
        input: { command },
        kind: 'execute',
        mode: s.defaultMode!,
        rules: s.rules,
        cwd,
        ...controlPlaneOptions(cwd, env),
      }).behavior
    expect(ev('git status')).toBe('allow')
    expect(ev('git push origin main')).toBe('ask')
    expect(ev('git push origin dev')).toBe('allow') // the local file comes later
    expect(ev('rm -rf x')).toBe('deny')
  })

  it('lets the command line set the mode', async () => {
    write(projectFile(), { permissions: { defaultMode: 'plan' } })
    expect((await loadPermissionSettings({ cwd, env, cli: { mode: 'dontAsk' } })).defaultMode).toBe('dontAsk')
  })

  it('reports an unknown defaultMode without failing', async () => {
    write(projectFile(), { permissions: { defaultMode: 'yolo' } })
    const s = await loadPermissionSettings({ cwd, env })
    expect(s.defaultMode).toBeUndefined()
    expect(s.diagnostics[0]).toContain('yolo')
  })

  it('collects PermissionRequest command hooks with their source', async () => {
    write(userFile(), {
      hooks: { PermissionRequest: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo u', timeout: 5 }] }], PreToolUse: [] },
    })
    write(localFile(), {
      hooks: { PermissionRequest: [{ hooks: [{ type: 'command', command: 'echo l' }, { type: 'prompt', prompt: 'x' }, { type: 'command' }] }] },
    })
    const s = await loadPermissionSettings({ cwd, env })
    expect(s.permissionRequestHooks).toEqual([
      { matcher: 'Bash', command: 'echo u', timeout: 5, source: 'user', file: userFile() },
      { matcher: undefined, command: 'echo l', timeout: undefined, source: 'local', file: localFile() },
    ])
    expect(s.diagnostics).toHaveLength(1)
  })

  it.each([
    ['not JSON', '{"permissions": {', /not valid JSON/],
    ['the wrong shape', { permissions: { allow: 'Bash' } }, /permissions\.allow/],
    ['a bad rule', { permissions: { deny: ['Read(~/.ssh/**)', 'Bash(rm'] } }, /permissions\.deny\[1\].*Bash\(rm/],
  ])('refuses a settings file with %s, naming it and leaving it in place', async (_what, content, message) => {
    write(projectFile(), content)
    const before = fs.readFileSync(projectFile(), 'utf8')
    const err = await loadPermissionSettings({ cwd, env }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(CorruptFileError)
    expect((err as CorruptFileError).file).toBe(projectFile())
    expect((err as Error).message).toMatch(message)
    expect(fs.readFileSync(projectFile(), 'utf8')).toBe(before)
  })

  it('refuses a bad command-line rule with a usage error', async () => {
    await expect(loadPermissionSettings({ cwd, env, cli: { allow: ['Bash(npm'] } })).rejects.toThrow(UsageError)
  })
})
