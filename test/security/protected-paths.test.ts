import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { controlPlaneOptions } from '../../src/permissions/rules/control-plane.js'
import { evaluatePermission } from '../../src/permissions/rules/evaluate.js'
import { parseRule } from '../../src/permissions/rules/rules.js'
import { teamPathRule } from '../../src/permissions/rules/updates.js'
import type { PermissionModeName, PermissionRule, RuleSource } from '../../src/permissions/rules/types.js'
import { bwrapArgs } from '../../src/sandbox/bwrap.js'
import { existingProtectedPaths, protectedPart } from '../../src/sandbox/protected.js'
import { seatbeltProfile } from '../../src/sandbox/seatbelt.js'
import { defaultSandboxConfig, isExcludedCommand, mergeSandboxSettings } from '../../src/sandbox/sandbox-settings.js'

/**
 * Protected paths: a write through which code would run later (git, editors, MCP, shells) is
 * asked in every mode — acceptEdits and bypassPermissions included — unless the user's own allow
 * rule names that path. Checked on the pure evaluation, for every path and every mode.
 */

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-protected-')))
const cwd = path.join(tmp, 'proj')
fs.mkdirSync(path.join(cwd, 'sub'), { recursive: true })
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

const PROTECTED = [
  '.git',
  '.git/config',
  '.git/hooks/post-checkout',
  'sub/.git/config',
  '.gitmodules',
  '.gitconfig',
  '.claude/settings.json',
  '.claude/settings.local.json',
  '.claude/agents/x.md',
  '.claude/commands/deploy.md',
  '.mcp.json',
  '.vscode/tasks.json',
  '.idea/workspace.xml',
  '.bashrc',
  '.bash_profile',
  '.zshrc',
  '.zprofile',
  '.profile',
  '.ripgreprc',
  '.GIT/CONFIG',
]
const MODES: PermissionModeName[] = ['default', 'acceptEdits', 'bypassPermissions', 'dontAsk', 'bubble']

function ev(toolName: string, file: string, mode: PermissionModeName, rules: PermissionRule[] = []) {
  return evaluatePermission({
    toolName,
    input: { file_path: path.join(cwd, file), content: 'x', old_string: 'a', new_string: 'b' },
    kind: 'edit',
    mode,
    rules,
    cwd,
    home: tmp,
    allowedPaths: [cwd],
    ...controlPlaneOptions(cwd, { SWARM_HOME: path.join(tmp, 'state') }),
  })
}
const rule = (raw: string, source: RuleSource = 'project') => parseRule(raw, 'allow', { source, baseDir: cwd })

describe('a write to a protected path', () => {
  for (const mode of MODES) {
    it(`${mode}: asked (denied in dontAsk) for every protected path, by Write and Edit`, () => {
      for (const file of PROTECTED) {
        for (const tool of ['Write', 'Edit']) {
          const d = ev(tool, file, mode)
          expect([file, tool, d.behavior]).toEqual([file, tool, mode === 'dontAsk' ? 'deny' : 'ask'])
          expect(d.reason).toMatch(/protected|permission settings/)
        }
      }
    })
  }

  it('plan mode denies it like any write', () => {
    expect(ev('Write', '.git/config', 'plan').behavior).toBe('deny')
  })

  it('ordinary files next to them still pass in acceptEdits and bypassPermissions', () => {
    for (const file of ['src.ts', '.gitignore', '.github/workflows/ci.yml', '.claude/worktrees/x/a.ts', 'git/config', 'a.bashrc']) {
      expect([file, ev('Write', file, 'acceptEdits').behavior]).toEqual([file, 'allow'])
      expect([file, ev('Write', file, 'bypassPermissions').behavior]).toEqual([file, 'allow'])
    }
  })

  it('passes only with an allow rule of the user that names the path itself', () => {
    expect(ev('Edit', '.git/config', 'bypassPermissions', [rule('Edit(.git/config)')]).behavior).toBe('allow')
    expect(ev('Edit', '.vscode/tasks.json', 'default', [rule('Edit(/.vscode/**)', 'user')]).behavior).toBe('allow')
    // A broad grant does not: a whole-tool rule, a directory-wide rule, a teamAllowedPaths entry.
    expect(ev('Edit', '.git/config', 'bypassPermissions', [rule('Edit')]).behavior).toBe('ask')
    expect(ev('Edit', '.git/config', 'acceptEdits', [rule('Edit(/**)')]).behavior).toBe('ask')
    const team = parseRule(`Edit(${teamPathRule({ path: cwd, toolName: 'Edit' }).ruleContent})`, 'allow', { source: 'team', baseDir: cwd })
    expect(ev('Edit', '.git/config', 'acceptEdits', [team]).behavior).toBe('ask')
    // Settings files stay never-auto-allowed, even with a rule naming them.
    expect(ev('Edit', '.claude/settings.json', 'bypassPermissions', [rule('Edit(.claude/settings.json)')]).behavior).toBe('ask')
  })
})

describe('the sandbox pieces', () => {
  it('protectedPart names the protected component; the scan finds the ones that exist', () => {
    expect(protectedPart('/r/.git/hooks/x')).toBe('/r/.git')
    expect(protectedPart('/r/.claude/agents/a.md')).toBe('/r/.claude/agents')
    expect(protectedPart('/r/.claude/worktrees/a')).toBeUndefined()
    const root = path.join(tmp, 'scan')
    for (const d of ['.git/hooks', 'a/.vscode', 'a/b/.claude/commands', 'node_modules/x/.git', 'a/b/c/d/.git'])
      fs.mkdirSync(path.join(root, d), { recursive: true })
    fs.writeFileSync(path.join(root, '.mcp.json'), '{}')
    const found = existingProtectedPaths(root)
      .map((p) => path.relative(root, p))
      .sort()
    expect(found).toEqual(['.git', '.mcp.json', 'a/.vscode', 'a/b/.claude/commands'])
  })

  it('bwrapArgs: root read-only, writable dirs bound, protected re-bound read-only, hidden dirs an empty read-only tmpfs', () => {
    const hidden = path.join(tmp, 'teams')
    fs.mkdirSync(hidden, { recursive: true })
    const args = bwrapArgs({
      command: 'echo hi',
      cwd,
      writable: [cwd],
      readOnly: [path.join(cwd, '.git')],
      hidden: [hidden],
      network: false,
      setenv: { TMPDIR: '/t' },
    })
    expect(args.join(' ')).toBe(
      `--die-with-parent --cap-drop ALL --unshare-pid --ro-bind / / --dev /dev --proc /proc --bind ${cwd} ${cwd} --ro-bind ${cwd}/.git ${cwd}/.git --tmpfs ${hidden} --remount-ro ${hidden} --unshare-net --setenv TMPDIR /t --chdir ${cwd} -- bash -c echo hi`,
    )
  })

  it('the macOS profile (untested on macOS) denies writes but to the writable dirs, and reads of hidden ones', () => {
    const profile = seatbeltProfile({ command: 'x', cwd, writable: [cwd], readOnly: [`${cwd}/.git`], hidden: ['/h'], network: true, setenv: {} })
    expect(profile).toContain('(deny file-write*)')
    expect(profile).toContain(`(allow file-write* (subpath "${cwd}")`)
    expect(profile).toContain(`(deny file-write* (subpath "${cwd}/.git"))`)
    expect(profile).toContain('(deny file-read* file-write* (subpath "/h"))')
    expect(profile).not.toContain('network')
  })

  it('settings: Claude Code names, on by default, lists merged; allowedDomains cuts the network with a note', () => {
    const c = defaultSandboxConfig()
    expect(c).toMatchObject({ enabled: true, autoAllow: false, network: true })
    const notes: string[] = []
    mergeSandboxSettings(
      c,
      {
        autoAllowBashIfSandboxed: true,
        excludedCommands: ['docker:*'],
        filesystem: { allowWrite: ['out'], denyRead: ['~/.ssh'] },
        network: { allowedDomains: ['github.com'] },
      },
      { path: 's.json', baseDir: '/p' },
      notes,
    )
    mergeSandboxSettings(c, { enabled: false, filesystem: { allowWrite: ['/abs'] } }, { path: 'l.json', baseDir: '/p' }, notes)
    expect(c).toMatchObject({ enabled: false, autoAllow: true, excludedCommands: ['docker:*'], allowWrite: ['/p/out', '/abs'], network: false })
    expect(c.denyRead[0]).toBe(path.join(os.homedir(), '.ssh'))
    expect(notes).toEqual(['s.json: sandbox.network.allowedDomains: swarm does not filter by domain, so sandboxed commands get no network at all'])
  })

  it('an excluded command is only the command itself, never one chained after it', () => {
    expect(isExcludedCommand('docker ps', ['docker:*'])).toBe(true)
    expect(isExcludedCommand('docker', ['docker'])).toBe(true)
    expect(isExcludedCommand('dockerd', ['docker'])).toBe(false)
    for (const c of ['docker ps; rm -rf x', 'docker ps && x', 'docker $(x)', 'docker `x`', 'docker ps | sh', 'docker ps > f', 'docker ps\nx']) {
      expect([c, isExcludedCommand(c, ['docker:*'])]).toEqual([c, false])
    }
  })
})
