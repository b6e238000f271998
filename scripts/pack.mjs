#!/usr/bin/env node
// Makes the package users install: <name>-<version>.tgz holding bin/, dist/, examples/, the README, LICENSE
// and CHANGELOG, with a package.json that has no development scripts — an installed package builds
// nothing (npm 11 warns about every install script, and `prepare` would rebuild for ~30 s).
// Usage: node scripts/pack.mjs [--out DIR]   (builds first when dist/ is older than src/)
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const outArg = process.argv.indexOf('--out')
const out = path.resolve(outArg > 0 ? process.argv[outArg + 1] : root)
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))

/** The newest mtime under a directory (0 when it is missing). */
function newest(dir) {
  let max = 0
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) max = Math.max(max, fs.statSync(path.join(e.parentPath, e.name)).mtimeMs)
  }
  return max
}

if (!fs.existsSync(path.join(root, 'dist/bundle/main.cjs')) || newest(path.join(root, 'src')) > newest(path.join(root, 'dist'))) {
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' })
}

const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-pack-'))
try {
  for (const entry of ['bin', 'dist', 'examples', 'README.md', 'LICENSE', 'CHANGELOG.md']) {
    fs.cpSync(path.join(root, entry), path.join(stage, entry), {
      recursive: true,
      // V8 code caches are per machine and written on first run; none ships.
      filter: (src) => !src.endsWith('.cache'),
    })
  }
  const released = {
    name: pkg.name,
    version: pkg.version,
    description: pkg.description,
    type: pkg.type,
    bin: pkg.bin,
    engines: pkg.engines,
    files: ['bin', 'dist', 'examples', 'CHANGELOG.md'],
    license: pkg.license,
    dependencies: pkg.dependencies,
  }
  fs.writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(released, null, 2)}\n`)
  fs.mkdirSync(out, { recursive: true })
  const name = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', out], { cwd: stage, encoding: 'utf8' })
    .trim()
    .split('\n')
    .at(-1)
  process.stdout.write(`${path.join(out, name)}\n`)
} finally {
  fs.rmSync(stage, { recursive: true, force: true })
}
