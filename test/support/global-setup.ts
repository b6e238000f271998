import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { isolateRun } from './run-isolation.js'

/**
 * Before the run: rebuild dist/ when src/ is newer (subprocess tests run dist/: `npx vitest run
 * <file>` right after an edit would test yesterday's build), then give the run its own TMPDIR and
 * HOME (run-isolation.ts). After it: fail the whole run if it touched the user's HOME or /tmp.
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

function build(): void {
  const built = fs.statSync(path.join(ROOT, 'dist/cli/main.js'), { throwIfNoEntry: false })?.mtimeMs ?? 0
  if (built >= newest(path.join(ROOT, 'src'))) return
  process.stderr.write('vitest: dist/ is older than src/ — running npm run build\n')
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' })
}

export default function setup(): () => void {
  build()
  const run = isolateRun()
  return () => {
    const problems = run.finish()
    if (problems.length === 0) return
    // Every test may have passed: the run fails all the same, and says why.
    process.stderr.write(`\nhome guard: FAILED — the test run touched files outside its temp dirs\n${problems.join('\n')}\n`)
    process.exitCode = 1
  }
}
