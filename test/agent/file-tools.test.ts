import { beforeEach, describe, expect, it } from 'vitest'
import fs from 'node:fs/promises'
import path from 'node:path'
import { runTool } from '../../src/agent/tool.js'
import { editTool } from '../../src/agent/tools/edit.js'
import { DEFAULT_READ_LINES, MAX_LINE_CHARS, readTool } from '../../src/agent/tools/read.js'
import { writeTool } from '../../src/agent/tools/write.js'
import { makeContext } from './helpers.js'
import { useTempDir } from '../support/home.js'

let dir: string
useTempDir('swarm-agent-', (d) => (dir = d))

describe('Read', () => {
  it('numbers lines like cat -n, resolving relative paths against ctx.cwd', async () => {
    await fs.writeFile(path.join(dir, 'a.txt'), 'one\ntwo\nthree\n')
    expect(process.cwd()).not.toBe(dir)
    const result = await runTool(readTool, { file_path: 'a.txt' }, makeContext(dir))
    expect(result).toEqual({ content: '     1\tone\n     2\ttwo\n     3\tthree' })
  })

  it('reads a window with offset (1-based) and limit, and says more follows', async () => {
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n')
    await fs.writeFile(path.join(dir, 'b.txt'), lines)
    const result = await runTool(readTool, { file_path: 'b.txt', offset: 4, limit: 2 }, makeContext(dir))
    expect(result.content).toBe('     4\tline 4\n     5\tline 5\n\n(showing lines 4-5; limit 2 reached — more lines follow, read them with offset 6)')
  })

  it('caps a long file at the default line count', async () => {
    const lines = Array.from({ length: DEFAULT_READ_LINES + 5 }, (_, i) => `${i + 1}`).join('\n')
    await fs.writeFile(path.join(dir, 'long.txt'), lines)
    const result = await runTool(readTool, { file_path: 'long.txt' }, makeContext(dir))
    expect(result.content.split('\n').filter((l) => /^\s+\d+\t/.test(l))).toHaveLength(DEFAULT_READ_LINES)
    expect(result.content).toContain(`read them with offset ${DEFAULT_READ_LINES + 1}`)
  })

  it('cuts very long lines', async () => {
    await fs.writeFile(path.join(dir, 'min.js'), 'x'.repeat(MAX_LINE_CHARS + 100))
    const result = await runTool(readTool, { file_path: 'min.js' }, makeContext(dir))
    expect(result.content).toContain('… [line truncated]')
    expect(result.content.length).toBeLessThan(MAX_LINE_CHARS + 50)
  })

  it('reports an offset past the end without failing', async () => {
    await fs.writeFile(path.join(dir, 'c.txt'), 'a\nb')
    const result = await runTool(readTool, { file_path: 'c.txt', offset: 9 }, makeContext(dir))
    expect(result).toEqual({ content: '(the file has 2 lines; offset 9 is past its end)' })
  })

  it.each([
    ['a missing file', 'nope.txt', /File does not exist: .*nope\.txt/],
    ['a directory', '.', /is a directory/],
    ['a binary file', 'bin.dat', /looks like a binary file/],
  ])('refuses %s', async (_what, file, message) => {
    await fs.writeFile(path.join(dir, 'bin.dat'), Buffer.from([0x89, 0x50, 0x00, 0x01, 0x02]))
    const result = await runTool(readTool, { file_path: file }, makeContext(dir))
    expect(result.isError).toBe(true)
    expect(result.content).toMatch(message)
  })

  it('says so for an empty file', async () => {
    await fs.writeFile(path.join(dir, 'empty'), '')
    expect((await runTool(readTool, { file_path: 'empty' }, makeContext(dir))).content).toMatch(/exists but is empty/)
  })
})

describe('Write', () => {
  it('creates missing directories and reports creation vs overwrite', async () => {
    const ctx = makeContext(dir)
    const first = await runTool(writeTool, { file_path: 'deep/er/new.txt', content: 'hi\nthere' }, ctx)
    expect(first).toEqual({ content: `File created successfully at: ${dir}/deep/er/new.txt (2 lines).` })
    const second = await runTool(writeTool, { file_path: `${dir}/deep/er/new.txt`, content: 'bye' }, ctx)
    expect(second.content).toBe(`The file ${dir}/deep/er/new.txt has been overwritten (1 line).`)
    expect(await fs.readFile(path.join(dir, 'deep/er/new.txt'), 'utf8')).toBe('bye')
  })

  it('refuses to overwrite a directory', async () => {
    await fs.mkdir(path.join(dir, 'sub'))
    const result = await runTool(writeTool, { file_path: 'sub', content: 'x' }, makeContext(dir))
    expect(result).toMatchObject({ isError: true, content: expect.stringMatching(/is a directory/) })
  })

  it('writes only inside writableRoots when the agent has them, links included', async () => {
    const scratch = path.join(dir, 'scratch')
    await fs.mkdir(scratch)
    await fs.symlink(dir, path.join(scratch, 'escape'))
    const ctx = makeContext(dir, { writableRoots: [scratch] })
    expect((await runTool(writeTool, { file_path: 'scratch/ok.txt', content: 'x' }, ctx)).isError).toBeUndefined()
    const outside = await runTool(writeTool, { file_path: 'project.txt', content: 'x' }, ctx)
    expect(outside).toMatchObject({ isError: true, content: expect.stringMatching(/outside the directories this agent may write to/) })
    const viaLink = await runTool(writeTool, { file_path: 'scratch/escape/sneaky.txt', content: 'x' }, ctx)
    expect(viaLink.isError).toBe(true)
    await expect(fs.stat(path.join(dir, 'project.txt'))).rejects.toThrow()
    await expect(fs.stat(path.join(dir, 'sneaky.txt'))).rejects.toThrow()
  })
})

describe('Edit', () => {
  const file = () => path.join(dir, 'code.ts')
  beforeEach(async () => {
    await fs.writeFile(file(), 'const a = 1\nconst b = 2\nconst a2 = 1\n')
  })

  it('replaces a unique string', async () => {
    const result = await runTool(editTool, { file_path: 'code.ts', old_string: 'b = 2', new_string: 'b = 3' }, makeContext(dir))
    expect(result).toEqual({ content: `The file ${file()} has been updated (1 replacement).` })
    expect(await fs.readFile(file(), 'utf8')).toBe('const a = 1\nconst b = 3\nconst a2 = 1\n')
  })

  it('fails when old_string is not found', async () => {
    const result = await runTool(editTool, { file_path: 'code.ts', old_string: 'zzz', new_string: 'y' }, makeContext(dir))
    expect(result).toMatchObject({ isError: true, content: expect.stringMatching(/old_string was not found/) })
  })

  it('fails when old_string is not unique, unless replace_all', async () => {
    const ctx = makeContext(dir)
    const ambiguous = await runTool(editTool, { file_path: 'code.ts', old_string: '= 1', new_string: '= 9' }, ctx)
    expect(ambiguous).toMatchObject({ isError: true, content: expect.stringMatching(/occurs 2 times/) })
    expect(await fs.readFile(file(), 'utf8')).toBe('const a = 1\nconst b = 2\nconst a2 = 1\n')
    const all = await runTool(editTool, { file_path: 'code.ts', old_string: '= 1', new_string: '= 9', replace_all: true }, ctx)
    expect(all.content).toMatch(/2 replacements/)
    expect(await fs.readFile(file(), 'utf8')).toBe('const a = 9\nconst b = 2\nconst a2 = 9\n')
  })

  it('inserts $-patterns literally', async () => {
    await runTool(editTool, { file_path: 'code.ts', old_string: 'b = 2', new_string: "b = '$&$1$$'" }, makeContext(dir))
    expect(await fs.readFile(file(), 'utf8')).toContain("const b = '$&$1$$'")
  })

  it('creates a new file from an empty old_string, but never overwrites one that way', async () => {
    const ctx = makeContext(dir)
    expect((await runTool(editTool, { file_path: 'new/n.ts', old_string: '', new_string: 'x' }, ctx)).isError).toBeUndefined()
    expect(await fs.readFile(path.join(dir, 'new/n.ts'), 'utf8')).toBe('x')
    const again = await runTool(editTool, { file_path: 'code.ts', old_string: '', new_string: 'x' }, ctx)
    expect(again).toMatchObject({ isError: true, content: expect.stringMatching(/already exists/) })
  })

  it('rejects an edit that changes nothing, and a missing file', async () => {
    const ctx = makeContext(dir)
    expect((await runTool(editTool, { file_path: 'code.ts', old_string: 'a', new_string: 'a' }, ctx)).content).toMatch(/the same/)
    expect((await runTool(editTool, { file_path: 'gone.ts', old_string: 'a', new_string: 'b' }, ctx)).content).toMatch(/File does not exist/)
  })
})
