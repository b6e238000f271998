import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO } from '../support/repo.js'

/**
 * The README and docs/ link to each other: every relative link names a file that exists and, with
 * a `#fragment`, a heading of that file (GitHub's anchors), so the guide's pointers stay true.
 */
const PAGES = [
  'README.md',
  ...fs
    .readdirSync(path.join(REPO, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]

/** GitHub's anchor of a heading: lower-cased, punctuation dropped, spaces to hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-')
}

function anchorsOf(file: string): Set<string> {
  const text = fs.readFileSync(path.join(REPO, file), 'utf8').replace(/```[\s\S]*?```/g, '')
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const m of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const a = anchor(m[1])
    const n = seen.get(a) ?? 0
    seen.set(a, n + 1)
    out.add(n ? `${a}-${n}` : a)
  }
  return out
}

describe('links between the README and docs/', () => {
  for (const page of PAGES) {
    it(`${page}: every relative link resolves`, () => {
      const text = fs
        .readFileSync(path.join(REPO, page), 'utf8')
        .replace(/```[\s\S]*?```/g, '')
        .replace(/`[^`\n]*`/g, '')
      const broken: string[] = []
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]
        if (/^[a-z]+:/.test(target)) continue // https:, mailto:
        const [file, fragment] = target.split('#')
        const resolved = file ? path.normalize(path.join(path.dirname(page), file)) : page
        if (!fs.existsSync(path.join(REPO, resolved))) {
          broken.push(`${target}: no file ${resolved}`)
          continue
        }
        if (fragment && resolved.endsWith('.md') && !anchorsOf(resolved).has(fragment))
          broken.push(`${target}: no heading #${fragment} in ${resolved}`)
      }
      expect(broken).toEqual([])
    })
  }
})
