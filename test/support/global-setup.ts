import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

/**
 * Subprocess tests run dist/ (bin/swarm.js, fixtures): `npx vitest run <file>` right after an edit
 * would test yesterday's build. Rebuild when any source file is newer than the build.
 */
const ROOT = path.resolve(import.meta.dirname, '../..')

function newest(dir: string): number {
  let t = 0
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name)
    t = Math.max(t, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs)
  }
  return t
}

export default function setup(): void {
  const built = fs.statSync(path.join(ROOT, 'dist/cli/main.js'), { throwIfNoEntry: false })?.mtimeMs ?? 0
  if (built >= newest(path.join(ROOT, 'src'))) return
  process.stderr.write('vitest: dist/ is older than src/ — running npm run build\n')
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' })
}
