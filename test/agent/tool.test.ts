import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool, resolveToolPath, runTool, toInputSchema, toToolResultBlock, type AnyTool, type PermissionCheck } from '../../src/agent/tool.js'
import { makeContext } from './helpers.js'
import { useTempDir } from '../support/home.js'

const echo = defineTool({
  name: 'Echo',
  description: 'Echoes its input',
  inputSchema: z.object({
    text: z.string().describe('what to echo'),
    times: z.number().int().positive().optional(),
    '-i': z.boolean().optional(),
  }),
  kind: 'read',
  async execute(input) {
    return input.text.repeat(input.times ?? 1)
  },
})

let dir: string
useTempDir('swarm-agent-', (d) => (dir = d))

describe('defineTool', () => {
  it('derives the Messages API input_schema from the zod schema', () => {
    expect(echo.toApiTool()).toEqual({
      name: 'Echo',
      description: 'Echoes its input',
      input_schema: {
        type: 'object',
        properties: {
          text: { type: 'string', description: 'what to echo' },
          times: { type: 'integer', exclusiveMinimum: 0 },
          '-i': { type: 'boolean' },
        },
        required: ['text'],
      },
    })
  })

  it('gives an empty object schema for a tool without fields', () => {
    expect(toInputSchema(z.object({}))).toEqual({ type: 'object', properties: {} })
  })

  it('summarizes a call by its first string field by default', () => {
    expect(echo.summarize({ text: 'hello\nworld' })).toBe('hello …')
  })
})

describe('runTool', () => {
  it('returns a string result as content', async () => {
    expect(await runTool(echo, { text: 'ab', times: 2 }, makeContext(dir))).toEqual({ content: 'abab' })
  })

  it('turns invalid input into an is_error result naming the field', async () => {
    const result = await runTool(echo, { times: 0 }, makeContext(dir))
    expect(result.isError).toBe(true)
    expect(result.content).toMatch(/^Invalid input for Echo: text: .*; times: /)
  })

  it('asks the permission hook on every call, with the validated input', async () => {
    const seen: unknown[] = []
    const check: PermissionCheck = (tool, input) => {
      seen.push([tool.name, input])
      return { behavior: 'allow' }
    }
    await runTool(echo, { text: 'a' }, makeContext(dir, { checkPermission: check }))
    await runTool(echo, { text: 'b' }, makeContext(dir, { checkPermission: check }))
    expect(seen).toEqual([
      ['Echo', { text: 'a' }],
      ['Echo', { text: 'b' }],
    ])
  })

  it('does not run a denied call and reports the denial as an error', async () => {
    let ran = false
    const tool = defineTool({
      name: 'Touch',
      description: '',
      inputSchema: z.object({}),
      kind: 'execute',
      async execute() {
        ran = true
        return 'ran'
      },
    })
    const result = await runTool(tool, {}, makeContext(dir, { checkPermission: () => ({ behavior: 'deny', message: 'not today' }) }))
    expect(ran).toBe(false)
    expect(result).toEqual({ content: 'Permission to use Touch was denied: not today', isError: true })
  })

  it('runs with updatedInput from the hook, validated again', async () => {
    const rewrite: PermissionCheck = () => ({ behavior: 'allow', updatedInput: { text: 'changed' } })
    expect(await runTool(echo, { text: 'x' }, makeContext(dir, { checkPermission: rewrite }))).toEqual({ content: 'changed' })
    const broken: PermissionCheck = () => ({ behavior: 'allow', updatedInput: { text: 3 } })
    expect((await runTool(echo, { text: 'x' }, makeContext(dir, { checkPermission: broken }))).isError).toBe(true)
  })

  it('turns a throwing permission hook into an error result', async () => {
    const result = await runTool(echo, { text: 'x' }, makeContext(dir, { checkPermission: () => Promise.reject(new Error('broker down')) }))
    expect(result).toEqual({ content: 'Echo was not run: the permission check failed: broker down', isError: true })
  })

  it('turns a thrown error into an is_error result', async () => {
    const boom: AnyTool = defineTool({
      name: 'Boom',
      description: '',
      inputSchema: z.object({}),
      kind: 'read',
      async execute() {
        throw new Error('kaput')
      },
    })
    expect(await runTool(boom, {}, makeContext(dir))).toEqual({ content: 'kaput', isError: true })
  })

  it('does not start a call whose signal is already aborted', async () => {
    const controller = new AbortController()
    controller.abort()
    const result = await runTool(echo, { text: 'x' }, makeContext(dir, { signal: controller.signal }))
    expect(result.isError).toBe(true)
    expect(result.content).toMatch(/aborted/)
  })
})

describe('helpers', () => {
  it('builds tool_result blocks', () => {
    expect(toToolResultBlock('toolu_1', { content: 'ok' })).toEqual({ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' })
    expect(toToolResultBlock('toolu_2', { content: 'no', isError: true })).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_2',
      content: 'no',
      is_error: true,
    })
  })

  it('resolves paths against the context cwd, not process.cwd()', () => {
    expect(resolveToolPath({ cwd: '/srv/project' }, 'src/a.ts')).toBe('/srv/project/src/a.ts')
    expect(resolveToolPath({ cwd: '/srv/project' }, '/etc/hosts')).toBe('/etc/hosts')
    expect(resolveToolPath({ cwd: '/srv/project', env: { HOME: '/home/u' } }, '~/x')).toBe('/home/u/x')
  })
})
