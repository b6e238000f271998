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
type Spec = {
  layers: Record<string, string[]>
  pure?: { io: string[]; files: string[] }
  public?: Record<string, string[]>
  owners?: { imports?: Record<string, string[]>; calls?: Record<string, string[]>; except?: Record<string, string> }
  notes?: Record<string, string>
}
function tree(files: Record<string, string>, spec: Spec = { layers: { low: [], high: ['low'] } }): string {
  h = isolatedHome('swarm-layers-')
  const root = h.project
  const write = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
    fs.writeFileSync(path.join(root, rel), text)
  }
  write('docs/layers.json', JSON.stringify(spec))
  for (const [rel, text] of Object.entries(files)) write(rel, text)
  return root
}
async function check(root: string, ...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const r = await run(process.execPath, [SCRIPT, '--root', root, ...args])
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
    expect(await check(ok)).toMatchObject({ code: 0, out: expect.stringContaining('1 edges, each used and allowed, no cycle') })
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

  it('fails an allowed edge the code does not use, and a note on an edge it does not list; --used prints the edges in use', async () => {
    const root = tree(
      {
        'src/low/a.ts': 'export const a = 1\n',
        'src/mid/m.ts': "import { a } from '../low/a.js'\nexport const m = a\n",
        'src/high/b.ts': 'export const b = 2\n',
      },
      { layers: { low: [], mid: ['low'], high: ['low', 'mid'] }, notes: { 'mid -> low': 'used', 'low -> high': 'stale' } },
    )
    const r = await check(root)
    expect(r.code).toBe(1)
    expect(r.out).toContain('layer high may use low but does not: remove it from docs/layers.json')
    expect(r.out).toContain('layer high may use mid but does not: remove it from docs/layers.json')
    expect(r.out).toContain('docs/layers.json: note "low -> high" explains no layer, listed edge or pure entry')
    expect(r.out).not.toContain('mid may use')
    expect(r.out).not.toContain('"mid -> low"')
    const used = await check(root, '--used')
    expect(used.code).toBe(0)
    expect(JSON.parse(used.out)).toEqual({ low: [], mid: ['low'], high: [] })
  })

  it('fails a pure file that imports an I/O module, directly or through a local import that runs', async () => {
    const pure = { io: ['node:fs', 'node:child_process', 'execa'], files: ['low/rules', 'high/schema.ts'] }
    const root = tree(
      {
        'src/low/rules/direct.ts': "import fs from 'node:fs'\nexport const d = fs.existsSync\n",
        'src/low/disk.ts': "import { execa } from 'execa'\nexport const run = execa\n",
        'src/low/rules/through.ts': "import { run } from '../disk.js'\nexport const t = run\n",
        'src/low/rules/typed.ts': "import type { Stats } from 'node:fs'\nimport type { run } from '../disk.js'\nexport type T = Stats | typeof run\n",
        'src/high/schema.ts': "import { t } from '../low/rules/through.js'\nexport const s = t\n",
        'src/high/io.ts': "import { spawn } from 'node:child_process'\nexport const io = spawn\n",
      },
      { layers: { low: [], high: ['low'] }, pure },
    )
    const r = await check(root)
    expect(r.code).toBe(1)
    expect(r.out).toContain(
      'src/low/rules/direct.ts is pure (docs/layers.json "pure") but imports node:fs: move the I/O out of it, or take it out of the pure set',
    )
    expect(r.out).toContain('src/low/rules/through.ts is pure (docs/layers.json "pure") but reaches execa through src/low/disk.ts')
    expect(r.out).toContain(
      'src/high/schema.ts is pure (docs/layers.json "pure") but reaches execa through src/low/rules/through.ts -> src/low/disk.ts',
    )
    expect(r.out).not.toContain('typed.ts') // type-only imports are erased: no I/O at run time
    expect(r.out).not.toContain('src/high/io.ts') // not in the pure set
    expect(r.out).toContain('check-layers: 3 problem(s)')

    fs.rmSync(path.join(root, 'src/low/rules/direct.ts'))
    fs.writeFileSync(path.join(root, 'src/low/disk.ts'), 'export const run = () => 1\n')
    expect(await check(root)).toMatchObject({ code: 0, out: expect.stringContaining('3 pure files, no I/O import') })

    fs.writeFileSync(path.join(root, 'src/high/schema.ts'), "export const s = await import('node:child_process')\n")
    expect((await check(root)).out).toContain('src/high/schema.ts is pure (docs/layers.json "pure") but imports node:child_process')
  })

  it('fails a pure entry that names no file', async () => {
    const root = tree(
      { 'src/low/a.ts': 'export const a = 1\n', 'src/high/b.ts': "import { a } from '../low/a.js'\nexport const b = a\n" },
      {
        layers: { low: [], high: ['low'] },
        pure: { io: ['node:fs'], files: ['low/gone.ts', 'low'] },
      },
    )
    const r = await check(root)
    expect(r.code).toBe(1)
    expect(r.out).toContain('docs/layers.json: pure entry low/gone.ts names no file under src/')
  })

  it("fails an import of a sealed layer's private file from another layer (its own files may), and a stale public entry", async () => {
    const spec = { layers: { low: [], high: ['low'] }, public: { low: ['registry.ts', 'gone.ts'] } }
    const root = tree(
      {
        'src/low/concrete.ts': 'export const c = 1\n',
        'src/low/registry.ts': "import { c } from './concrete.js'\nexport const r = c\n",
        'src/high/b.ts': "import { r } from '../low/registry.js'\nimport { c } from '../low/concrete.js'\nexport const b = r + c\n",
      },
      spec,
    )
    const r = await check(root)
    expect(r.code).toBe(1)
    expect(r.out).toContain(
      'src/high/b.ts imports src/low/concrete.ts: outside low/ only its public files may be imported (docs/layers.json "public": registry.ts, gone.ts)',
    )
    expect(r.out).toContain('docs/layers.json: public file low/gone.ts does not exist')
    expect(r.out).not.toContain('registry.ts:')
    fs.writeFileSync(path.join(root, 'src/high/b.ts'), "import { r } from '../low/registry.js'\nexport const b = r\n")
    spec.public.low = ['registry.ts', 'concrete.ts']
    fs.writeFileSync(path.join(root, 'docs/layers.json'), JSON.stringify(spec))
    const stale = await check(root)
    expect(stale.out).toContain('docs/layers.json: public file low/concrete.ts is imported by no other layer: remove it')
    spec.public.low = ['registry.ts']
    fs.writeFileSync(path.join(root, 'docs/layers.json'), JSON.stringify(spec))
    expect((await check(root)).code).toBe(0)
  })

  it('fails an owned import or call outside its owner (type-only imports do not count), and a stale exception', async () => {
    const owners = {
      imports: { 'node:child_process': ['low/proc'] },
      calls: { 'process.kill(': ['low/proc'], 'fs.watch(': ['low/watch.ts'] },
      except: { 'high/generated.ts': 'a string of code for another program' },
    }
    const root = tree(
      {
        'src/low/proc/launch.ts':
          "import { spawn } from 'node:child_process'\nexport const kill = (p: number) => process.kill(p, 'SIGTERM')\nexport const s = spawn\n",
        'src/low/watch.ts': "import fs from 'node:fs'\nexport const w = (d: string) => fs.watch(d)\n",
        'src/high/spawns.ts': "import { spawn } from 'node:child_process'\nexport const s = spawn\n",
        'src/high/kills.ts': "export const k = () => process.kill(42, 'SIGKILL')\n",
        'src/high/watches.ts':
          "import fs from 'node:fs'\nexport const w = () => fs.watch('.')\nexport const p = (fsp: { watch(): void }) => fsp.watch()\n",
        'src/high/typed.ts': "import type { ChildProcess } from 'node:child_process'\nexport type C = ChildProcess\n",
        'src/high/generated.ts': "export const source = `\nimport { spawn } from 'node:child_process'\n`\n",
      },
      { layers: { low: [], high: [] }, owners },
    )
    const r = await check(root)
    expect(r.code).toBe(1)
    expect(r.out).toContain('src/high/spawns.ts imports node:child_process, which only low/proc may (docs/layers.json "owners")')
    expect(r.out).toContain('src/high/kills.ts calls process.kill(…), which only low/proc may (docs/layers.json "owners")')
    expect(r.out).toContain('src/high/watches.ts calls fs.watch(…), which only low/watch.ts may (docs/layers.json "owners")')
    expect(r.out).not.toContain('src/low/') // the owners themselves
    expect(r.out).not.toContain('typed.ts') // erased: it spawns nothing
    expect(r.out).not.toContain('generated.ts') // excused
    expect(r.out).toContain('check-layers: 3 problem(s)')

    for (const f of ['spawns', 'kills', 'watches', 'generated']) fs.rmSync(path.join(root, `src/high/${f}.ts`))
    const stale = await check(root)
    expect(stale.out).toContain('docs/layers.json: owners exception high/generated.ts excuses nothing: remove it')
    expect(stale.out).toContain('check-layers: 1 problem(s)')
  })

  it('passes the real tree: every edge of docs/layers.json used and allowed, the pure set free of I/O', async () => {
    const r = await run(process.execPath, [SCRIPT])
    expect(r.stdout).toMatch(
      /check-layers: \d+ files in \d+ layers, \d+ edges, each used and allowed, no cycle; \d+ pure files, no I\/O import; \d+ owned acts, none done elsewhere/,
    )
  })
})
