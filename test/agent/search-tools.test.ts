import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fs from 'node:fs/promises'
import path from 'node:path'
import { runTool } from '../../src/agent/tool.js'
import { expandBraces, globToRegExp, splitStaticPrefix } from '../../src/agent/tools/glob-pattern.js'
import { globTool } from '../../src/agent/tools/glob.js'
import { grepTool } from '../../src/agent/tools/grep.js'
import { makeContext, tempDir } from './helpers.js'

describe('globToRegExp', () => {
  it.each([
    ['*.ts', 'a.ts', true],
    ['*.ts', 'src/a.ts', false],
    ['**/*.ts', 'a.ts', true],
    ['**/*.ts', 'src/deep/a.ts', true],
    ['src/**', 'src/a/b.txt', true],
    ['src/**', 'lib/a.txt', false],
    ['src/**/test/*.ts', 'src/test/x.ts', true],
    ['src/**/test/*.ts', 'src/a/b/test/x.ts', true],
    ['src/**/test/*.ts', 'src/a/b/test/y/x.ts', false],
    ['?.md', 'a.md', true],
    ['?.md', 'ab.md', false],
    ['*.{ts,tsx}', 'a.tsx', true],
    ['*.{ts,tsx}', 'a.js', false],
    ['{src,test}/**/*.{ts,js}', 'test/x/y.js', true],
    ['a{b,c{d,e}}f', 'acef', true],
    ['[abc].txt', 'b.txt', true],
    ['[!abc].txt', 'd.txt', true],
    ['[!abc].txt', 'a.txt', false],
    ['*', '.hidden', true],
    ['file(1).txt', 'file(1).txt', true],
    ['a+b.txt', 'aab.txt', false],
  ])('%s matches %s: %s', (pattern, p, expected) => {
    expect(globToRegExp(pattern).test(p)).toBe(expected)
  })

  it('expands braces and finds the static prefix', () => {
    expect(expandBraces('a{b,c{d,e}}f')).toEqual(['abf', 'acdf', 'acef'])
    expect(expandBraces('{x}')).toEqual(['{x}'])
    expect(splitStaticPrefix('src/lib/**/*.ts')).toEqual({ base: 'src/lib', rest: '**/*.ts' })
    expect(splitStaticPrefix('/abs/dir/*.md')).toEqual({ base: '/abs/dir', rest: '*.md' })
    expect(splitStaticPrefix('**/*.md')).toEqual({ base: '.', rest: '**/*.md' })
    expect(splitStaticPrefix('docs/README.md')).toEqual({ base: 'docs', rest: 'README.md' })
  })
})

describe('Glob and Grep on a tree', () => {
  let dir: string
  const at = (rel: string) => path.join(dir, rel)
  beforeAll(async () => {
    dir = await tempDir()
    const files: Record<string, string> = {
      'src/a.ts': 'export const alpha = 1\n// TODO: tidy\n',
      'src/b.tsx': 'export function Beta() {}\n',
      'src/deep/c.ts': 'const gamma = 3\nconst Alpha = 4\nlet x\nlet y\nconst alpha2 = 5\n',
      'README.md': 'alpha and omega\n',
      'node_modules/pkg/index.ts': 'export const alpha = 0\n',
      '.git/config': 'alpha\n',
      'img.bin': '',
    }
    for (const [rel, text] of Object.entries(files)) {
      await fs.mkdir(path.dirname(at(rel)), { recursive: true })
      await fs.writeFile(at(rel), text)
    }
    await fs.writeFile(at('img.bin'), Buffer.from([0x61, 0x6c, 0x70, 0x68, 0x61, 0x00, 0x01]))
    // Distinct modification times: newest first is the order Glob promises.
    const base = Date.now() / 1000
    await fs.utimes(at('src/a.ts'), base - 300, base - 300)
    await fs.utimes(at('src/b.tsx'), base - 100, base - 100)
    await fs.utimes(at('src/deep/c.ts'), base - 200, base - 200)
  })
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })
  })

  describe('Glob', () => {
    it('lists matches newest first, as absolute paths, skipping node_modules', async () => {
      const result = await runTool(globTool, { pattern: '**/*.{ts,tsx}' }, makeContext(dir))
      expect(result.content.split('\n')).toEqual([at('src/b.tsx'), at('src/deep/c.ts'), at('src/a.ts')])
    })

    it('searches under path, and inside node_modules when the pattern starts there', async () => {
      expect((await runTool(globTool, { pattern: '*.ts', path: 'src' }, makeContext(dir))).content).toBe(at('src/a.ts'))
      expect((await runTool(globTool, { pattern: 'node_modules/**/*.ts' }, makeContext(dir))).content).toBe(at('node_modules/pkg/index.ts'))
    })

    it('takes absolute patterns and plain paths', async () => {
      expect((await runTool(globTool, { pattern: `${dir}/src/deep/*.ts` }, makeContext('/'))).content).toBe(at('src/deep/c.ts'))
      expect((await runTool(globTool, { pattern: 'README.md' }, makeContext(dir))).content).toBe(at('README.md'))
    })

    it('says when nothing matches', async () => {
      expect((await runTool(globTool, { pattern: '**/*.py' }, makeContext(dir))).content).toBe('No files found')
      expect((await runTool(globTool, { pattern: 'nowhere/*.py' }, makeContext(dir))).content).toBe('No files found')
    })
  })

  describe('Grep', () => {
    it('lists matching files by default, sorted by path, skipping binaries, node_modules and .git', async () => {
      const result = await runTool(grepTool, { pattern: 'alpha' }, makeContext(dir))
      expect(result.content).toBe(`Found 3 files\n${at('README.md')}\n${at('src/a.ts')}\n${at('src/deep/c.ts')}`)
    })

    it('shows matching lines with line numbers in content mode, case-insensitively with -i', async () => {
      const result = await runTool(grepTool, { pattern: '^const alpha', output_mode: 'content', '-i': true, path: 'src' }, makeContext(dir))
      expect(result.content).toBe(`${at('src/deep/c.ts')}:2:const Alpha = 4\n${at('src/deep/c.ts')}:5:const alpha2 = 5`)
    })

    it('adds context lines and separators like ripgrep', async () => {
      const result = await runTool(grepTool, { pattern: 'gamma|alpha2', output_mode: 'content', '-A': 1, path: 'src/deep/c.ts' }, makeContext(dir))
      const f = at('src/deep/c.ts')
      expect(result.content).toBe(`${f}:1:const gamma = 3\n${f}-2-const Alpha = 4\n--\n${f}:5:const alpha2 = 5`)
    })

    it('counts matching lines per file', async () => {
      const result = await runTool(grepTool, { pattern: 'alpha', output_mode: 'count', '-i': true, glob: '*.ts' }, makeContext(dir))
      expect(result.content).toBe(`Found 3 matching lines in 2 files\n${at('src/a.ts')}:1\n${at('src/deep/c.ts')}:2`)
    })

    it('filters by a glob on the relative path when it has a slash, and applies head_limit', async () => {
      const result = await runTool(grepTool, { pattern: 'a', glob: 'src/**/*.ts', head_limit: 1 }, makeContext(dir))
      expect(result.content).toBe(`Found 2 files\n${at('src/a.ts')}\n\n(showing the first 1 of 2; head_limit applied)`)
    })

    it('reports an invalid regular expression and a missing path as errors', async () => {
      expect(await runTool(grepTool, { pattern: '(' }, makeContext(dir))).toMatchObject({
        isError: true,
        content: expect.stringMatching(/^Invalid regular expression/),
      })
      expect((await runTool(grepTool, { pattern: 'x', path: 'nope' }, makeContext(dir))).content).toMatch(/Path does not exist/)
    })

    it('says when nothing matches', async () => {
      expect((await runTool(grepTool, { pattern: 'zebra' }, makeContext(dir))).content).toBe('No matches found')
    })
  })
})
