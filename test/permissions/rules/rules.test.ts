import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { compilePathPattern, matchesPathPattern } from '../../../src/permissions/rules/path-pattern.js'
import { physicalPath } from '../../../src/permissions/rules/physical-path.js'
import { RuleSyntaxError, formatRule, parseRule, ruleFromValue, ruleToValue } from '../../../src/permissions/rules/rules.js'

describe('parseRule / formatRule', () => {
  it.each([
    ['Bash', { toolName: 'Bash', content: undefined }],
    ['Bash()', { toolName: 'Bash', content: undefined }],
    ['Bash(*)', { toolName: 'Bash', content: undefined }],
    ['Bash(npm test:*)', { toolName: 'Bash', content: 'npm test:*' }],
    ['  Edit(src/**)  ', { toolName: 'Edit', content: 'src/**' }],
    ['Bash(echo (hi))', { toolName: 'Bash', content: 'echo (hi)' }],
    ['Bash(echo \\(hi\\))', { toolName: 'Bash', content: 'echo (hi)' }],
    ['WebFetch(domain:example.com)', { toolName: 'WebFetch', content: 'domain:example.com' }],
    ['mcp__github__create_issue', { toolName: 'mcp__github__create_issue', content: undefined }],
  ])('%s', (raw, expected) => {
    const rule = parseRule(raw, 'allow')
    expect({ toolName: rule.toolName, content: rule.content }).toEqual(expected)
    expect(parseRule(formatRule(rule), 'allow').content).toBe(rule.content)
  })

  it.each(['', '   ', 'Bash(npm', 'Ba sh', 'Bash)', '(x)'])('rejects %j', (raw) => {
    expect(() => parseRule(raw, 'deny')).toThrow(RuleSyntaxError)
  })

  it('converts to and from the structured form', () => {
    const rule = parseRule('Bash(npm test:*)', 'allow')
    expect(ruleToValue(rule)).toEqual({ toolName: 'Bash', ruleContent: 'npm test:*' })
    expect(ruleFromValue({ toolName: 'Edit' }, 'deny')).toEqual({ toolName: 'Edit', behavior: 'deny', raw: 'Edit' })
  })
})

describe('path patterns', () => {
  const cwd = '/work/proj'
  const home = '/home/u'
  const m = (content: string, p: string, baseDir?: string) => matchesPathPattern(compilePathPattern(content, { cwd, home, baseDir }), p)

  it.each([
    ['src/**', '/work/proj/src/a/b.ts', true],
    ['src/**', '/work/proj/src', false],
    ['src/**', '/work/proj/lib/a.ts', false],
    ['src/*.ts', '/work/proj/src/a.ts', true],
    ['src/*.ts', '/work/proj/src/a/b.ts', false],
    ['src/**/*.ts', '/work/proj/src/a.ts', true],
    ['src/**/*.ts', '/work/proj/src/a/b/c.ts', true],
    ['*.env', '/work/proj/deep/x/.env', true],
    ['*.env', '/work/proj/deep/x/prod.env', true],
    ['.env', '/work/proj/deep/.env', true],
    ['.env', '/elsewhere/.env', false],
    ['./.env', '/work/proj/deep/.env', false],
    ['./.env', '/work/proj/.env', true],
    ['~/.ssh/**', '/home/u/.ssh/id_rsa', true],
    ['~/.ssh', '/home/u/.ssh/id_rsa', true],
    ['~/.ssh', '/home/u/.sshx', false],
    ['//etc/**', '/etc/passwd', true],
    ['//etc/**', '/work/etc/passwd', false],
    ['/src/**', '/work/proj/src/x', true],
    ['file?.txt', '/work/proj/file1.txt', true],
    ['file[0-9].txt', '/work/proj/file7.txt', true],
    ['file[!0-9].txt', '/work/proj/file7.txt', false],
    ['a\\*b', '/work/proj/a*b', true],
    ['a\\*b', '/work/proj/axb', false],
  ])('%s vs %s → %s', (content, p, expected) => {
    expect(m(content, p)).toBe(expected)
  })

  it('resolves /path against the rule base dir', () => {
    expect(m('/src/**', '/repo/src/a', '/repo')).toBe(true)
    expect(m('/src/**', '/work/proj/src/a', '/repo')).toBe(false)
  })
})

describe('physicalPath', () => {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-perm-paths-')))
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }))
  fs.mkdirSync(path.join(tmp, 'real', 'sub'), { recursive: true })
  fs.symlinkSync(path.join(tmp, 'real', 'sub'), path.join(tmp, 'link'))
  fs.symlinkSync(path.join(tmp, 'real', 'missing', 'file'), path.join(tmp, 'dangling'))

  it('follows symlinks and applies .. to the resolved parent', () => {
    expect(physicalPath(path.join(tmp, 'link', 'x'), '/')).toBe(path.join(tmp, 'real', 'sub', 'x'))
    expect(physicalPath(`${tmp}/link/../y`, '/')).toBe(path.join(tmp, 'real', 'y'))
    expect(physicalPath('link/../../z', tmp)).toBe(path.join(tmp, 'z'))
    expect(physicalPath(`${tmp}/new/dir/../f`, '/')).toBe(path.join(tmp, 'new', 'f'))
  })
  it('follows a dangling symlink to where the write would land', () => {
    expect(physicalPath(path.join(tmp, 'dangling'), '/')).toBe(path.join(tmp, 'real', 'missing', 'file'))
  })
})
