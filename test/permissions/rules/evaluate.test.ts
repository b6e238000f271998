import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { controlPlaneOptions } from '../../../src/permissions/rules/control-plane.js'
import { evaluatePermission } from '../../../src/permissions/rules/evaluate.js'
import { parseRule } from '../../../src/permissions/rules/rules.js'
import type { PermissionModeName, PermissionQuery, PermissionRule, RuleBehavior } from '../../../src/permissions/rules/types.js'

const READ_ONLY = new Set(['Read', 'Glob', 'Grep', 'LS'])
const COORDINATION = new Set(['Agent', 'TaskStop', 'ExitPlanMode', 'SendMessage', 'TaskCreate', 'TaskGet', 'TaskList', 'TaskUpdate'])
// Created at import: the test tables below are built from these paths.
const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-perm-eval-')))
const home = path.join(tmp, 'home')
const root = path.join(home, '.claude')
const cwd = path.join(tmp, 'proj')

beforeAll(() => {
  fs.mkdirSync(path.join(root, 'teams', 't1'), { recursive: true })
  fs.writeFileSync(path.join(root, 'teams', 't1', 'config.json'), '{}')
  fs.writeFileSync(path.join(root, 'teams', 't1', 'lead.key'), 'secret')
  fs.mkdirSync(path.join(root, 'tasks', 't1'), { recursive: true })
  fs.mkdirSync(path.join(cwd, 'src', 'a'), { recursive: true })
  fs.mkdirSync(path.join(tmp, 'outside'), { recursive: true })
  fs.mkdirSync(path.join(home, '.ssh'), { recursive: true })
  fs.symlinkSync(path.join(root, 'teams'), path.join(cwd, 'link-to-teams'))
  fs.symlinkSync(path.join(tmp, 'outside'), path.join(cwd, 'src', 'escape'))
  fs.symlinkSync(path.join(root, 'teams', 't1', 'config.json'), path.join(cwd, 'cfg-link'))
  fs.symlinkSync(path.join(root, 'tasks', 't1', 'new.json'), path.join(cwd, 'dangling-into-tasks'))
})
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }))

function rules(spec: Partial<Record<RuleBehavior, string[]>>): PermissionRule[] {
  return (['allow', 'ask', 'deny'] as const).flatMap((b) => (spec[b] ?? []).map((raw) => parseRule(raw, b, { source: 'project', baseDir: cwd })))
}

function ev(
  toolName: string,
  input: Record<string, unknown>,
  mode: PermissionModeName = 'default',
  rs: PermissionRule[] = [],
  extra: Partial<PermissionQuery> = {},
) {
  return evaluatePermission({
    toolName,
    input,
    kind: READ_ONLY.has(toolName) ? 'read' : COORDINATION.has(toolName) ? 'coordination' : toolName === 'Bash' ? 'execute' : 'edit',
    mode,
    rules: rs,
    cwd,
    home,
    ...controlPlaneOptions(cwd, { SWARM_HOME: root }),
    ...extra,
  })
}

const p = (rel: string) => path.join(cwd, rel)

describe('modes without rules', () => {
  const cases: Array<[PermissionModeName, string, () => Record<string, unknown>, string]> = [
    ['default', 'Read', () => ({ file_path: p('src/a.ts') }), 'allow'],
    ['default', 'Edit', () => ({ file_path: p('src/a.ts') }), 'ask'],
    ['default', 'Bash', () => ({ command: 'ls' }), 'ask'],
    ['default', 'SendMessage', () => ({ to: 'x', message: 'hi' }), 'allow'],
    ['bubble', 'Write', () => ({ file_path: p('x') }), 'ask'],
    ['bubble', 'Grep', () => ({ pattern: 'x' }), 'allow'],
    ['acceptEdits', 'Edit', () => ({ file_path: p('src/a.ts') }), 'allow'],
    ['acceptEdits', 'Write', () => ({ file_path: 'src/new.ts' }), 'allow'],
    ['acceptEdits', 'Write', () => ({ file_path: path.join(tmp, 'outside', 'x') }), 'ask'],
    ['acceptEdits', 'Write', () => ({ file_path: p('src/escape/x') }), 'ask'],
    ['acceptEdits', 'Write', () => ({ file_path: p('../outside/x') }), 'ask'],
    ['acceptEdits', 'Edit', () => ({}), 'ask'],
    ['acceptEdits', 'Bash', () => ({ command: 'ls' }), 'ask'],
    ['plan', 'Read', () => ({ file_path: p('src/a.ts') }), 'allow'],
    ['plan', 'Edit', () => ({ file_path: p('src/a.ts') }), 'deny'],
    ['plan', 'Bash', () => ({ command: 'ls' }), 'deny'],
    ['plan', 'Write', () => ({ file_path: p('PLAN.md') }), 'allow'],
    ['plan', 'ExitPlanMode', () => ({ plan: 'x' }), 'allow'],
    ['bypassPermissions', 'Bash', () => ({ command: 'rm -rf build' }), 'allow'],
    ['bypassPermissions', 'Write', () => ({ file_path: '/etc/x' }), 'allow'],
    ['dontAsk', 'Bash', () => ({ command: 'ls' }), 'deny'],
    ['dontAsk', 'Read', () => ({ file_path: p('src/a.ts') }), 'allow'],
  ]
  it.each(cases)('%s: %s → %s', (mode, tool, input, expected) => {
    expect(ev(tool, input(), mode, [], { planFilePath: p('PLAN.md') }).behavior).toBe(expected)
  })

  it('acceptEdits passes edits inside teamAllowedPaths for the right tool', () => {
    const allowedPaths = [{ path: path.join(tmp, 'outside'), toolName: 'Edit' }]
    expect(ev('Write', { file_path: path.join(tmp, 'outside', 'x') }, 'acceptEdits', [], { allowedPaths }).behavior).toBe('allow')
    expect(ev('Write', { file_path: path.join(tmp, 'outside', 'x') }, 'default', [], { allowedPaths }).behavior).toBe('ask')
    const readOnlyEntry = [{ path: path.join(tmp, 'outside'), toolName: 'Read' }]
    expect(ev('Write', { file_path: path.join(tmp, 'outside', 'x') }, 'acceptEdits', [], { allowedPaths: readOnlyEntry }).behavior).toBe('ask')
  })
})

describe('rules', () => {
  const cases: Array<[string, PermissionModeName, Partial<Record<RuleBehavior, string[]>>, string, () => Record<string, unknown>, string]> = [
    ['prefix allow', 'default', { allow: ['Bash(npm test:*)'] }, 'Bash', () => ({ command: 'npm test -- --watch' }), 'allow'],
    ['prefix needs a word boundary', 'default', { allow: ['Bash(npm test:*)'] }, 'Bash', () => ({ command: 'npm testx' }), 'ask'],
    ['every part must be allowed', 'default', { allow: ['Bash(npm test:*)'] }, 'Bash', () => ({ command: 'npm test && rm -rf ~' }), 'ask'],
    [
      'all parts allowed by different rules',
      'default',
      { allow: ['Bash(npm test:*)', 'Bash(git status)'] },
      'Bash',
      () => ({ command: 'npm test; git status | npm test' }),
      'allow',
    ],
    ['substitution is not prefix-allowed', 'default', { allow: ['Bash(echo:*)'] }, 'Bash', () => ({ command: 'echo $(cat /etc/passwd)' }), 'ask'],
    ['backticks are not prefix-allowed', 'default', { allow: ['Bash(echo:*)'] }, 'Bash', () => ({ command: 'echo `id`' }), 'ask'],
    ['an exact rule allows a substitution', 'default', { allow: ['Bash(echo $(date))'] }, 'Bash', () => ({ command: 'echo $(date)' }), 'allow'],
    [
      'redirect to a file is not prefix-allowed',
      'default',
      { allow: ['Bash(npm test:*)'] },
      'Bash',
      () => ({ command: 'npm test > ~/.bashrc' }),
      'ask',
    ],
    ['redirect to /dev/null is', 'default', { allow: ['Bash(npm test:*)'] }, 'Bash', () => ({ command: 'npm test 2>/dev/null' }), 'allow'],
    ['exact rule', 'default', { allow: ['Bash(git status)'] }, 'Bash', () => ({ command: 'git status --porcelain' }), 'ask'],
    ['whole-tool allow', 'default', { allow: ['Bash'] }, 'Bash', () => ({ command: 'anything && at all' }), 'allow'],
    ['deny wins over a later allow', 'default', { deny: ['Bash(rm:*)'], allow: ['Bash'] }, 'Bash', () => ({ command: 'ls && rm -rf x' }), 'deny'],
    [
      'deny sees through quotes and wrappers',
      'bypassPermissions',
      { deny: ['Bash(rm:*)'] },
      'Bash',
      () => ({ command: `FOO=1 sudo 'rm' -rf x` }),
      'deny',
    ],
    ['deny sees inside substitutions', 'bypassPermissions', { deny: ['Bash(rm:*)'] }, 'Bash', () => ({ command: 'echo $(rm -rf x)' }), 'deny'],
    ['deny in bypass', 'bypassPermissions', { deny: ['Edit(src/**)'] }, 'Edit', () => ({ file_path: p('src/a.ts') }), 'deny'],
    ['ask rule in bypass', 'bypassPermissions', { ask: ['Bash(git push:*)'] }, 'Bash', () => ({ command: 'git push origin main' }), 'ask'],
    ['last match: ask after allow', 'default', { allow: ['Bash(git:*)'], ask: ['Bash(git push:*)'] }, 'Bash', () => ({ command: 'git push' }), 'ask'],
    ['ask rule in dontAsk → deny', 'dontAsk', { ask: ['Bash(git push:*)'] }, 'Bash', () => ({ command: 'git push' }), 'deny'],
    ['allow rule in dontAsk', 'dontAsk', { allow: ['Bash(git push:*)'] }, 'Bash', () => ({ command: 'git push' }), 'allow'],
    ['allow rule does not lift plan mode', 'plan', { allow: ['Bash'] }, 'Bash', () => ({ command: 'ls' }), 'deny'],
    ['Edit glob', 'default', { allow: ['Edit(src/**)'] }, 'Edit', () => ({ file_path: p('src/a/b.ts') }), 'allow'],
    ['Edit rule covers Write', 'default', { allow: ['Edit(src/**)'] }, 'Write', () => ({ file_path: p('src/new.ts') }), 'allow'],
    ['Edit rule covers NotebookEdit', 'default', { allow: ['Edit(src/**)'] }, 'NotebookEdit', () => ({ notebook_path: p('src/n.ipynb') }), 'allow'],
    ['Edit glob outside', 'default', { allow: ['Edit(src/**)'] }, 'Edit', () => ({ file_path: p('lib/b.ts') }), 'ask'],
    ['Edit glob through a symlink out', 'default', { allow: ['Edit(src/**)'] }, 'Edit', () => ({ file_path: p('src/escape/x') }), 'ask'],
    ['Edit glob ../ out', 'default', { allow: ['Edit(src/**)'] }, 'Edit', () => ({ file_path: p('src/../../outside/x') }), 'ask'],
    ['floating basename pattern', 'bypassPermissions', { deny: ['Edit(.env)'] }, 'Write', () => ({ file_path: p('src/a/.env') }), 'deny'],
    ['floating glob', 'default', { allow: ['Edit(*.md)'] }, 'Write', () => ({ file_path: p('docs/x/README.md') }), 'allow'],
    ['Write rule only covers Write', 'default', { allow: ['Write(src/**)'] }, 'Edit', () => ({ file_path: p('src/a.ts') }), 'ask'],
    [
      'Read deny over a read-only tool',
      'default',
      { deny: ['Read(~/.ssh/**)'] },
      'Read',
      () => ({ file_path: path.join(home, '.ssh', 'id_rsa') }),
      'deny',
    ],
    ['Read deny covers Grep', 'default', { deny: ['Read(~/.ssh)'] }, 'Grep', () => ({ pattern: 'x', path: path.join(home, '.ssh') }), 'deny'],
    [
      'Read deny covers edits',
      'bypassPermissions',
      { deny: ['Read(~/.ssh/**)'] },
      'Edit',
      () => ({ file_path: path.join(home, '.ssh', 'authorized_keys') }),
      'deny',
    ],
    ['Read deny with ~ input', 'default', { deny: ['Read(~/.ssh/**)'] }, 'Read', () => ({ file_path: '~/.ssh/id_rsa' }), 'deny'],
    ['ask rule on a read-only tool', 'default', { ask: ['Read(.env)'] }, 'Read', () => ({ file_path: p('.env') }), 'ask'],
    [
      '//absolute pattern',
      'default',
      { allow: [`Edit(/${path.join(tmp, 'outside')}/**)`] },
      'Write',
      () => ({ file_path: path.join(tmp, 'outside', 'x') }),
      'allow',
    ],
    ['/ is relative to the settings base', 'default', { allow: ['Edit(/src/**)'] }, 'Write', () => ({ file_path: p('src/x') }), 'allow'],
    ['WebFetch domain', 'default', { allow: ['WebFetch(domain:example.com)'] }, 'WebFetch', () => ({ url: 'https://docs.example.com/x' }), 'allow'],
    ['WebFetch other domain', 'default', { allow: ['WebFetch(domain:example.com)'] }, 'WebFetch', () => ({ url: 'https://example.org/' }), 'ask'],
    ['mcp server rule', 'default', { allow: ['mcp__github'] }, 'mcp__github__create_issue', () => ({}), 'allow'],
    ['mcp server rule, other server', 'default', { allow: ['mcp__github'] }, 'mcp__gitlab__x', () => ({}), 'ask'],
    ['deny a coordination tool', 'default', { deny: ['SendMessage'] }, 'SendMessage', () => ({}), 'deny'],
  ]
  it.each(cases)('%s (%s)', (_name, mode, spec, tool, input, expected) => {
    expect(ev(tool, input(), mode, rules(spec)).behavior).toBe(expected)
  })

  it('names the deciding rule and its source', () => {
    const d = ev('Bash', { command: 'npm test' }, 'default', rules({ allow: ['Bash(npm test:*)'] }))
    expect(d).toMatchObject({ behavior: 'allow', source: 'rule', rule: { raw: 'Bash(npm test:*)', source: 'project' } })
    expect(d.reason).toContain('Bash(npm test:*)')
  })
})

describe('the control plane', () => {
  const modes: PermissionModeName[] = ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk', 'bubble']
  const writes: Array<[string, string, () => Record<string, unknown>]> = [
    ['config.json', 'Write', () => ({ file_path: path.join(root, 'teams', 't1', 'config.json') })],
    ['an inbox', 'Edit', () => ({ file_path: path.join(root, 'teams', 't1', 'inboxes', 'x.json') })],
    ['a task', 'Write', () => ({ file_path: path.join(root, 'tasks', 't1', '1.json') })],
    ['the teams dir itself', 'Write', () => ({ file_path: path.join(root, 'teams') })],
    ['../ tricks', 'Write', () => ({ file_path: p('../home/.claude/teams/t1/config.json') })],
    ['.. after a symlink', 'Write', () => ({ file_path: `${cwd}/src/escape/../home/.claude/tasks/t1/x` })],
    ['.. after a symlink, relative', 'Write', () => ({ file_path: 'src/escape/../home/.claude/tasks/t1/x' })],
    ['a symlinked dir', 'Write', () => ({ file_path: p('link-to-teams/t1/config.json') })],
    ['a symlinked file', 'Edit', () => ({ file_path: p('cfg-link') })],
    ['a dangling symlink', 'Write', () => ({ file_path: p('dangling-into-tasks') })],
    ['a ~ path', 'Write', () => ({ file_path: '~/.claude/teams/t1/config.json' })],
    ['a notebook', 'NotebookEdit', () => ({ notebook_path: path.join(root, 'tasks', 'n.ipynb') })],
  ]
  for (const mode of modes) {
    it.each(writes)(`${mode}: a file tool writing %s is denied`, (_name, tool, input) => {
      const allowEverything = rules({ allow: ['Edit', 'Write', 'NotebookEdit', `Edit(//${root.slice(1)}/**)`] })
      const d = ev(tool, input(), mode, allowEverything, { planFilePath: path.join(root, 'teams', 't1', 'config.json') })
      expect(d.behavior).toBe('deny')
      expect(d.source).toBe('control-plane')
    })
  }

  it('no file tool reads or lists the control plane; a search rooted above it runs (the tool skips it)', () => {
    for (const mode of modes) {
      expect(ev('Read', { file_path: path.join(root, 'teams', 't1', 'config.json') }, mode).behavior).toBe('deny')
      expect(ev('Read', { file_path: path.join(root, 'teams', 't1', 'lead.key') }, mode).behavior).toBe('deny')
      expect(ev('Read', { file_path: p('link-to-teams/t1/lead.key') }, mode).behavior).toBe('deny')
      expect(ev('Grep', { pattern: 'PRIVATE', path: path.join(root, 'teams', 't1') }, mode).behavior).toBe('deny')
      expect(ev('Grep', { pattern: 'x', path: path.join(root, 'teams', 't1', 'inboxes') }, mode).behavior).toBe('deny')
      expect(ev('Glob', { pattern: '*', path: path.join(root, 'tasks') }, mode).behavior).toBe('deny')
    }
    expect(ev('Grep', { pattern: 'PRIVATE', path: root }, 'bypassPermissions').behavior).toBe('allow')
  })

  const commands = [
    `cat ${root}/teams/t1/config.json`,
    'rm -rf ~/.claude/teams/t1',
    'echo x > "$HOME"/.claude/tasks/t1/1.json',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell variable, not a template
    'ls ${HOME}/.claude/teams',
    'rm -rf $SWARM_HOME/teams',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell variable, not a template
    'cd "${CLAUDE_CONFIG_DIR}" && rm -rf teams',
    `cd ${root} && rm -rf teams`,
    'cp x .claude/teams/t1/config.json',
  ]
  for (const mode of ['default', 'acceptEdits', 'bypassPermissions', 'bubble'] as const) {
    it.each(commands)(`${mode}: Bash %s is asked, never auto-allowed`, (command) => {
      const d = ev('Bash', { command }, mode, rules({ allow: ['Bash', 'Bash(rm:*)', `Bash(${command})`] }))
      expect(d.behavior).toBe('ask')
      expect(d.source).toBe('control-plane')
    })
  }
  it('dontAsk denies a Bash command that names the control plane; a deny rule still denies', () => {
    expect(ev('Bash', { command: 'rm -rf ~/.claude/teams' }, 'dontAsk').behavior).toBe('deny')
    expect(ev('Bash', { command: 'rm -rf ~/.claude/teams' }, 'bypassPermissions', rules({ deny: ['Bash(rm:*)'] })).source).toBe('rule')
  })
  it('asks for relative paths from a cwd inside the state root', () => {
    const inside = path.join(root, 'scratchpad', 't1')
    for (const command of ['rm -rf ../../teams', 'ls teams']) {
      const d = evaluatePermission({
        toolName: 'Bash',
        input: { command },
        kind: 'execute',
        mode: 'bypassPermissions',
        rules: [],
        cwd: inside,
        home,
        ...controlPlaneOptions(inside, { SWARM_HOME: root }),
      })
      expect(d.behavior, command).toBe('ask')
    }
    const w = evaluatePermission({
      toolName: 'Write',
      input: { file_path: '../../teams/t1/config.json' },
      kind: 'edit',
      mode: 'bypassPermissions',
      rules: [],
      cwd: inside,
      home,
      ...controlPlaneOptions(inside, { SWARM_HOME: root }),
    })
    expect(w.behavior).toBe('deny')
  })

  it('does not flag look-alike paths', () => {
    expect(ev('Bash', { command: `ls ${root}x/teams-old` }, 'bypassPermissions').behavior).toBe('allow')
    expect(ev('Write', { file_path: path.join(root + '-old', 'teams', 'x') }, 'bypassPermissions').behavior).toBe('allow')
  })

  it('edits of permission settings are always asked', () => {
    for (const f of [p('.claude/settings.json'), p('.claude/settings.local.json'), p('.claude/agents/x.md'), path.join(root, 'settings.json')]) {
      const d = ev('Write', { file_path: f }, 'bypassPermissions', rules({ allow: ['Edit'] }))
      expect(d, f).toMatchObject({ behavior: 'ask', source: 'protected-file' })
    }
    expect(ev('Bash', { command: 'echo {} > .claude/settings.local.json' }, 'bypassPermissions').behavior).toBe('ask')
  })
})

describe("a project's .claude/ (configDirPart): asked in every mode, a worktree in it a project of its own", () => {
  const wt = p('.claude/worktrees/t-alice')
  it.each(['default', 'acceptEdits', 'bypassPermissions'] as const)('%s: a hook, a skill or a new file under .claude/ is asked', (mode) => {
    for (const f of ['.claude/hooks/policy.sh', '.claude/skills/x/SKILL.md', '.claude/anything', '.claude/worktrees/t-bob/.claude/hooks/p.sh']) {
      expect([f, ev('Write', { file_path: p(f), content: 'x' }, mode).behavior]).toEqual([f, 'ask'])
    }
  })
  it('dontAsk denies it; plan mode denies it', () => {
    expect(ev('Write', { file_path: p('.claude/hooks/policy.sh'), content: 'x' }, 'dontAsk').behavior).toBe('deny')
    expect(ev('Write', { file_path: p('.claude/hooks/policy.sh'), content: 'x' }, 'plan').behavior).toBe('deny')
  })
  it("a member's own worktree files pass as usual; its own .claude/ does not", () => {
    const inWt = { ...controlPlaneOptions(wt, { SWARM_HOME: root }), cwd: wt }
    expect(ev('Write', { file_path: path.join(wt, 'src', 'a.ts'), content: 'x' }, 'acceptEdits', [], inWt).behavior).toBe('allow')
    expect(ev('Write', { file_path: path.join(wt, '.claude', 'hooks', 'x.sh'), content: 'x' }, 'bypassPermissions', [], inWt).behavior).toBe('ask')
  })
  it("swarm's state root ~/.claude is not a project's: its scratchpad passes under bypassPermissions", () => {
    expect(ev('Write', { file_path: path.join(root, 'scratchpad', 't1', 'n.md'), content: 'x' }, 'bypassPermissions').behavior).toBe('allow')
  })
  it('an allow rule of the user naming the path lets it pass', () => {
    expect(
      ev('Write', { file_path: p('.claude/hooks/policy.sh'), content: 'x' }, 'default', rules({ allow: ['Write(.claude/hooks/policy.sh)'] }))
        .behavior,
    ).toBe('allow')
  })
})
