#!/usr/bin/env node
// `npm run test:interop` / `bench:interop`: fetches the pinned Claude Code binary once (the npm
// registry's platform package, through `npm pack`) into a cache directory, then runs the given
// command with SWARM_CLAUDE_BIN pointing at it. Cache: $SWARM_TEST_CACHE, else node_modules/.cache/swarm-interop.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const CLAUDE_CODE_VERSION = '2.1.332'
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

function platformPackage() {
  const arch = { x64: 'x64', arm64: 'arm64' }[process.arch]
  if (process.platform !== 'linux' && process.platform !== 'darwin') throw new Error(`no Claude Code binary package for ${process.platform}`)
  if (!arch) throw new Error(`no Claude Code binary package for ${process.arch}`)
  return `@anthropic-ai/claude-code-${process.platform}-${arch}`
}

/** The cached binary's path, downloading it first when it is not there. */
export function ensureClaudeBinary() {
  const cache = path.resolve(process.env.SWARM_TEST_CACHE || path.join(repo, 'node_modules', '.cache', 'swarm-interop'))
  const dir = path.join(cache, `claude-code-${CLAUDE_CODE_VERSION}`)
  const bin = path.join(dir, 'package', 'claude')
  if (fs.existsSync(bin)) return bin
  fs.mkdirSync(dir, { recursive: true })
  const spec = `${platformPackage()}@${CLAUDE_CODE_VERSION}`
  process.stderr.write(`interop: fetching ${spec} into ${dir}\n`)
  const tgz = execFileSync('npm', ['pack', spec, '--silent', '--pack-destination', dir], { encoding: 'utf8' }).trim().split('\n').pop()
  execFileSync('tar', ['xzf', path.join(dir, tgz), '-C', dir])
  fs.rmSync(path.join(dir, tgz), { force: true })
  fs.chmodSync(bin, 0o755)
  return bin
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const bin = ensureClaudeBinary()
  const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim()
  if (!version.startsWith(CLAUDE_CODE_VERSION)) throw new Error(`${bin} reports ${version}, expected ${CLAUDE_CODE_VERSION}`)
  const [cmd, ...args] = process.argv.slice(2)
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, SWARM_CLAUDE_BIN: bin, SWARM_CLAUDE_VERSION: version } })
  process.exit(r.status ?? 1)
}
