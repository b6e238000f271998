import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { watchTree } from '../../src/watch/tree-watch.js'
import { useTempDir } from '../support/home.js'
import { waitFor } from '../support/wait.js'

/*
 * DESIGN §10: chokidar drops the trailing `change` of a burst. A burst of atomic renames into a
 * nested file must still end in a read that sees the last write, without the safety sweep.
 */

describe('watchTree', () => {
  let root: string
  useTempDir('swarm-watch-', (d) => (root = d))

  it('after a burst of atomic renames, the last call reads the last write', async () => {
    const dir = path.join(root, 'agents', 'bob')
    fs.mkdirSync(dir, { recursive: true })
    const file = path.join(dir, 'state.json')
    fs.writeFileSync(file, '0')
    const reads: string[] = []
    const watch = watchTree(root, () => reads.push(fs.readFileSync(file, 'utf8')), { debounceMs: 100 })
    onTestFinished(() => watch.close())
    await watch.ready
    for (let trial = 1; trial <= 5; trial++) {
      for (let i = 1; i <= 40; i++) {
        fs.writeFileSync(`${file}.tmp`, `${trial}-${i}`)
        fs.renameSync(`${file}.tmp`, file)
        if (i % 8 === 0) await new Promise((r) => setTimeout(r, 10))
      }
      await waitFor(`the read after burst ${trial}`, () => reads.at(-1) === `${trial}-40`, 15_000, { output: () => `last read: ${reads.at(-1)}` })
      expect(reads.at(-1)).toBe(`${trial}-40`)
    }
    expect(reads.length, 'one call per burst, not one per event').toBeLessThan(5 * 10)
  })

  it('reports the root going away', async () => {
    fs.mkdirSync(path.join(root, 'inboxes'))
    let gone = false
    const watch = watchTree(root, () => {}, { onGone: () => (gone = true) })
    onTestFinished(() => watch.close())
    await watch.ready
    fs.rmSync(root, { recursive: true })
    await waitFor('onGone', () => gone, 15_000)
    expect(gone).toBe(true)
  })
})
