import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import fs from 'node:fs/promises'
import path from 'node:path'
import {
  BUILT_IN_AGENTS,
  EXPLORE_AGENT,
  GENERAL_PURPOSE_AGENT,
  parseVerdict,
  PLAN_AGENT,
  VERIFICATION_AGENT,
} from '../../src/agent/definitions/built-in.js'
import { parseAgentFile, splitFrontmatter } from '../../src/agent/definitions/frontmatter.js'
import { loadAgentDefinitions, projectAgentsDir } from '../../src/agent/definitions/load.js'
import type { AgentDefinition } from '../../src/agent/definitions/types.js'
import { tempDir } from './helpers.js'

const file = '/p/.claude/agents/x.md'
const md = (frontmatter: string, body = 'You review code.') => `---\n${frontmatter}\n---\n${body}\n`

describe('parseAgentFile', () => {
  it.each<[string, string, Partial<AgentDefinition>]>([
    ['minimal', 'name: reviewer\ndescription: Reviews code', { name: 'reviewer', description: 'Reviews code', disallowedTools: [] }],
    ['tools as a comma string', 'name: r\ndescription: d\ntools: Read, Grep,Glob', { tools: ['Read', 'Grep', 'Glob'] }],
    ['tools as a list', 'name: r\ndescription: d\ntools: [Read, Bash]', { tools: ['Read', 'Bash'] }],
    ['tools *', 'name: r\ndescription: d\ntools: "*"', { tools: ['*'] }],
    ['disallowedTools', 'name: r\ndescription: d\ndisallowedTools: Write, Edit', { disallowedTools: ['Write', 'Edit'] }],
    ['Task is the old name of Agent', 'name: r\ndescription: d\ndisallowedTools: Task', { disallowedTools: ['Agent'] }],
    [
      'all other fields',
      'name: r\ndescription: d\nmodel: sonnet\npermissionMode: plan\nmaxTurns: 12\nisolation: worktree\ncolor: purple',
      { model: 'sonnet', permissionMode: 'plan', maxTurns: 12, isolation: 'worktree', color: 'purple' },
    ],
    ['host: (normalised)', 'name: r\ndescription: d\nhost: ci@build-box:2222', { host: 'ci@build-box:2222' }],
    ['host: a Host of the ssh config', 'name: r\ndescription: d\nhost: gpu-box', { host: 'gpu-box' }],
    ['maxTurns as a string', 'name: r\ndescription: d\nmaxTurns: "7"', { maxTurns: 7 }],
    ['unknown fields kept out', 'name: r\ndescription: d\nmemory: project\nmcpServers: [github]', { name: 'r' }],
  ])('parses %s', (_case, frontmatter, expected) => {
    const parsed = parseAgentFile(file, md(frontmatter), 'project')
    expect(parsed.diagnostics.filter((d) => d.severity === 'error')).toEqual([])
    expect(parsed.definition).toMatchObject({ ...expected, systemPrompt: 'You review code.', source: 'project', file })
  })

  it.each<[string, string, string | undefined, RegExp]>([
    ['missing name', 'description: d', 'name', /name: is required/],
    ['bad name', 'name: "../evil"\ndescription: d', 'name', /name: use 1-64 characters/],
    ['missing description', 'name: r', 'description', /description: is required/],
    ['bad permissionMode', 'name: r\ndescription: d\npermissionMode: yolo', 'permissionMode', /permissionMode: /],
    ['bad maxTurns', 'name: r\ndescription: d\nmaxTurns: -2', 'maxTurns', /maxTurns: /],
    ['bad isolation', 'name: r\ndescription: d\nisolation: docker', 'isolation', /isolation: /],
    ['a host that could read as an ssh option', 'name: r\ndescription: d\nhost: "-oProxyCommand=x"', 'host', /host: a host/],
    ['bad color', 'name: r\ndescription: d\ncolor: mauve', 'color', /color: /],
    ['tools of the wrong type', 'name: r\ndescription: d\ntools: 3', 'tools', /tools: /],
    ['invalid YAML', 'name: [unclosed', undefined, /invalid YAML frontmatter/],
    ['a YAML list', '- a\n- b', undefined, /must be a mapping/],
  ])('reports %s with its field', (_case, frontmatter, field, message) => {
    const parsed = parseAgentFile(file, md(frontmatter), 'project')
    expect(parsed.definition).toBeUndefined()
    expect(parsed.diagnostics).toHaveLength(1)
    expect(parsed.diagnostics[0]).toMatchObject({ file, field, severity: 'error' })
    expect(parsed.diagnostics[0]!.message).toMatch(message)
  })

  it('reports a file without frontmatter and one with an empty body', () => {
    expect(parseAgentFile(file, 'Just a prompt', 'user').diagnostics[0]!.message).toMatch(/no YAML frontmatter/)
    expect(parseAgentFile(file, md('name: r\ndescription: d', '   '), 'user').diagnostics[0]!.message).toMatch(/body .* is empty/)
  })

  it('warns about unknown tools and argument patterns, keeping what is safe', () => {
    const parsed = parseAgentFile(file, md('name: r\ndescription: d\ntools: Read, WebFetch, Bash(git:*)\ndisallowedTools: Bash(rm:*)'), 'project')
    expect(parsed.definition).toMatchObject({ tools: ['Read'], disallowedTools: ['Bash'] })
    expect(parsed.diagnostics.map((d) => [d.field, d.severity])).toEqual([
      ['tools', 'warning'],
      ['tools', 'warning'],
      ['disallowedTools', 'warning'],
    ])
  })

  it('splits frontmatter with CRLF line endings and a BOM', () => {
    expect(splitFrontmatter('\uFEFF---\r\nname: r\r\n---\r\nbody')).toEqual({ yaml: 'name: r', body: 'body' })
    expect(splitFrontmatter('---\n---\nbody')).toEqual({ yaml: '', body: 'body' })
    expect(splitFrontmatter('text\n---\nname: r\n---\n')).toBeUndefined()
  })
})

describe('built-in agents', () => {
  it('has general-purpose, Explore, Plan and Verification', () => {
    expect(BUILT_IN_AGENTS.map((d) => d.name)).toEqual(['general-purpose', 'Explore', 'Plan', 'Verification'])
    expect(GENERAL_PURPOSE_AGENT.tools).toEqual(['*'])
    for (const readOnly of [EXPLORE_AGENT, PLAN_AGENT]) {
      expect(readOnly.disallowedTools).toEqual(expect.arrayContaining(['Write', 'Edit', 'Agent']))
      expect(readOnly.systemPrompt).toMatch(/READ-ONLY/)
    }
    expect(PLAN_AGENT.systemPrompt).toMatch(/### Critical Files for Implementation/)
    expect(VERIFICATION_AGENT.writableTempDir).toBe(true)
    expect(VERIFICATION_AGENT.systemPrompt).toMatch(/VERDICT: PASS\nVERDICT: FAIL\nVERDICT: PARTIAL/)
  })

  it('reads the verdict from the last VERDICT line', () => {
    expect(parseVerdict('ran tests\nVERDICT: FAIL')).toBe('FAIL')
    expect(parseVerdict('VERDICT: PASS\nthen more\n**VERDICT: PARTIAL**')).toBe('PARTIAL')
    expect(parseVerdict('no verdict here')).toBeUndefined()
  })
})

describe('loadAgentDefinitions', () => {
  let root: string
  let cwd: string
  let env: NodeJS.ProcessEnv
  beforeEach(async () => {
    root = await tempDir('swarm-home-')
    cwd = await tempDir('swarm-project-')
    env = { SWARM_HOME: root }
  })
  afterEach(async () => {
    await fs.rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
    await fs.rm(cwd, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
  })
  const write = async (dir: string, name: string, text: string) => {
    await fs.mkdir(dir, { recursive: true })
    await fs.writeFile(path.join(dir, name), text)
  }

  it('returns the built-ins when there are no files', async () => {
    const { definitions, diagnostics } = await loadAgentDefinitions({ cwd, env })
    expect([...definitions.keys()]).toEqual(['general-purpose', 'Explore', 'Plan', 'Verification'])
    expect(diagnostics).toEqual([])
  })

  it('lets project override user override built-in, and reports bad files without hiding the others', async () => {
    const userDir = path.join(root, 'agents')
    const projectDir = projectAgentsDir(cwd)
    await write(userDir, 'explore.md', md('name: Explore\ndescription: user explore', 'user prompt'))
    await write(userDir, 'reviewer.md', md('name: reviewer\ndescription: user reviewer', 'user reviewer prompt'))
    await write(userDir, 'broken.md', md('name: broken\ndescription: d\npermissionMode: nope'))
    await write(projectDir, 'reviewer.md', md('name: reviewer\ndescription: project reviewer', 'project prompt'))
    await write(projectDir, 'notes.txt', 'not an agent')
    await write(projectDir, 'dup.md', md('name: tester\ndescription: first'))
    await write(projectDir, 'dup2.md', md('name: tester\ndescription: second'))

    const { definitions, diagnostics } = await loadAgentDefinitions({ cwd, env })
    expect(definitions.get('Explore')).toMatchObject({ source: 'user', systemPrompt: 'user prompt' })
    expect(definitions.get('reviewer')).toMatchObject({
      source: 'project',
      description: 'project reviewer',
      file: path.join(projectDir, 'reviewer.md'),
    })
    expect(definitions.get('tester')).toMatchObject({ description: 'first' })
    expect(definitions.get('Plan')).toBe(PLAN_AGENT)
    expect(definitions.has('broken')).toBe(false)
    expect(diagnostics).toEqual([
      { file: path.join(userDir, 'broken.md'), field: 'permissionMode', message: expect.stringMatching(/^permissionMode: /), severity: 'error' },
      { file: path.join(projectDir, 'dup2.md'), field: 'name', message: expect.stringMatching(/already defined in .*dup\.md/), severity: 'error' },
    ])
  })
})
