import { describe, expect, it } from 'vitest'
import { evaluatePermission } from '../../../src/permissions/rules/evaluate.js'
import { parseRule } from '../../../src/permissions/rules/rules.js'
import { permissionSuggestions, suggestRule, suggestRules } from '../../../src/permissions/rules/suggest.js'

const cwd = '/work/proj'
const home = '/home/u'
const opts = { cwd, home }

describe('suggestRule', () => {
  it.each([
    ['Bash', { command: 'npm test -- --watch' }, 'Bash(npm test:*)'],
    ['Bash', { command: 'npm run build --prod' }, 'Bash(npm run build:*)'],
    ['Bash', { command: 'git status' }, 'Bash(git status:*)'],
    ['Bash', { command: 'git -C x status' }, 'Bash(git:*)'],
    ['Bash', { command: 'ls -la' }, 'Bash(ls:*)'],
    ['Bash', { command: 'docker compose up -d' }, 'Bash(docker compose up:*)'],
    ['Bash', { command: 'rm -rf build' }, 'Bash(rm -rf build)'],
    ['Bash', { command: 'python -m pytest' }, 'Bash(python -m pytest)'],
    ['Bash', { command: 'FOO=1 npm test' }, 'Bash(FOO=1 npm test)'],
    ['Bash', { command: 'echo $(date)' }, 'Bash(echo $\\(date\\))'],
    ['Bash', { command: 'npm test > out.log' }, 'Bash(npm test > out.log)'],
    ['Edit', { file_path: '/work/proj/src/a/b.ts' }, 'Edit(src/a/**)'],
    ['Write', { file_path: 'src/a/b.ts' }, 'Edit(src/a/**)'],
    ['Write', { file_path: '/work/proj/README.md' }, 'Edit(./README.md)'],
    ['Edit', { file_path: '/home/u/notes/x.md' }, 'Edit(~/notes/**)'],
    ['Edit', { file_path: '/etc/hosts' }, 'Edit(//etc/**)'],
    ['NotebookEdit', { notebook_path: '/work/proj/nb/a.ipynb' }, 'Edit(nb/**)'],
    ['Read', { file_path: '/opt/data/x.csv' }, 'Read(//opt/data/**)'],
    ['Grep', { pattern: 'x', path: '/opt/data' }, 'Read(//opt/data/**)'],
    ['Edit', { file_path: '/work/proj/weird[1]/a*.ts' }, 'Edit(weird\\\\[1]/**)'],
    ['WebFetch', { url: 'https://docs.example.com/a' }, 'WebFetch(domain:docs.example.com)'],
    ['mcp__github__create_issue', {}, 'mcp__github__create_issue'],
  ])('%s %j → %s', (tool, input, expected) => {
    expect(suggestRule(tool, input, opts)).toBe(expected)
  })

  it('suggests one rule per part of a compound command', () => {
    expect(suggestRules('Bash', { command: 'npm ci && npm test | tee log; npm test' }, opts)).toEqual([
      'Bash(npm ci:*)',
      'Bash(npm test:*)',
      'Bash(tee log)',
    ])
  })

  it('every suggestion allows the call it was made for', () => {
    const calls: Array<[string, Record<string, unknown>]> = [
      ['Bash', { command: 'npm test -- --watch' }],
      ['Bash', { command: 'echo $(date)' }],
      ['Bash', { command: 'npm test > out.log' }],
      ['Bash', { command: 'cd src && make all' }],
      ['Edit', { file_path: '/work/proj/src/a/b.ts' }],
      ['Write', { file_path: '/work/proj/README.md' }],
      ['Edit', { file_path: '/work/proj/weird[1]/a*.ts' }],
      ['Edit', { file_path: '/etc/hosts' }],
      ['Edit', { file_path: '/home/u/notes/x.md' }],
      ['WebFetch', { url: 'https://docs.example.com/a' }],
    ]
    for (const [toolName, input] of calls) {
      const rules = suggestRules(toolName, input, opts).map((raw) => parseRule(raw, 'allow'))
      const d = evaluatePermission({
        toolName,
        input,
        kind: toolName === 'Bash' ? 'execute' : 'edit',
        mode: 'default',
        rules,
        cwd,
        home,
        controlPlaneDirs: ['/nonexistent/teams'],
      })
      expect(d.behavior, `${toolName} ${JSON.stringify(input)} with ${rules.map((r) => r.raw)}`).toBe('allow')
    }
  })

  it("produces Claude Code's permission_suggestions shape", () => {
    expect(permissionSuggestions('Bash', { command: 'npm test' }, opts)).toEqual([
      { type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'npm test:*' }], behavior: 'allow', destination: 'session' },
    ])
  })
})
