import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { isolatedHome, type IsolatedHome } from '../support/home.js'

const run = promisify(execFile)
const SCRIPT = path.resolve(import.meta.dirname, '../../scripts/check-layers.mjs')

/** A tiny tree with two layers, `low` below `high`, checked by the real script. */
let h: IsolatedHome | undefined
function tree(files: Record<string, string>): string {
  h = isolatedHome('swarm-layers-')
  const root = h.project
  const write = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
    fs.writeFileSync(path.join(root, rel), text)
  }
  write('docs/layers.json', JSON.stringify({ layers: { low: [], high: ['low'] } }))
  for (const [rel, text] of Object.entries(files)) write(rel, text)
  return root
}
async function check(root: string): Promise<{ code: number; out: string }> {
  try {
    const r = await run(process.execPath, [SCRIPT, '--root', root])
    return { code: 0, out: r.stdout }
  } catch (err) {
    const e = err as { code: number; stderr: string }
    return { code: e.code, out: e.stderr }
  }
}
afterEach(async () => {
  await h?.cleanup()
  h = undefined
})

describe('scripts/check-layers.mjs', () => {
  it('passes an allowed edge, and fails a forbidden one, also a bare side-effect import', async () => {
    const ok = tree({ 'src/low/a.ts': 'export const a = 1\n', 'src/high/b.ts': "import { a } from '../low/a.js'\nexport const b = a\n" })
    expect(await check(ok)).toMatchObject({ code: 0, out: expect.stringContaining('no forbidden edge, no cycle') })
    for (const line of ["import { b } from '../high/b.js'\n", "import '../high/b.js'\n", "export { b } from '../high/b.js'\n"]) {
      fs.writeFileSync(path.join(ok, 'src/low/a.ts'), `${line}export const a = 1\n`)
      const r = await check(ok)
      expect(r.code).toBe(1)
      expect(r.out).toContain('src/low/a.ts imports src/high/b.ts: low may not depend on high (docs/layers.json)')
    }
  })

  it('fails a cycle between files of one layer (type-only imports count), and a file in no layer', async () => {
    const root = tree({
      'src/low/a.ts': "import type { B } from './b.js'\nexport type A = B\n",
      'src/low/b.ts': "import type { A } from './a.js'\nexport type B = A | 1\n",
      'src/stray/c.ts': 'export const c = 1\n',
    })
    const r = await check(root)
    expect(r.code).toBe(1)
    expect(r.out).toMatch(/import cycle: low\/a\.ts -> low\/b\.ts -> low\/a\.ts/)
    expect(r.out).toContain('src/stray/c.ts: in no layer of docs/layers.json')
  })
})
