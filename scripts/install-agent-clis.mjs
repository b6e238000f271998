#!/usr/bin/env node
// Installs the agent CLIs the agent tests run (versions pinned in test/agents/versions.json) from the
// npm registry into a cache directory: $SWARM_AGENT_CLI_CACHE, else ~/.cache/swarm/agent-clis.
// Nothing else is downloaded; an install that is already complete is left as it is.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const versions = JSON.parse(fs.readFileSync(path.join(repo, 'test/agents/versions.json'), 'utf8'))
const cache = process.env.SWARM_AGENT_CLI_CACHE || path.join(os.homedir(), '.cache', 'swarm', 'agent-clis')
fs.mkdirSync(cache, { recursive: true })
const manifest = path.join(cache, 'package.json')
if (!fs.existsSync(manifest)) fs.writeFileSync(manifest, `${JSON.stringify({ name: 'swarm-agent-clis-cache', private: true }, null, 2)}\n`)

const installed = (name) => {
  try {
    return JSON.parse(fs.readFileSync(path.join(cache, 'node_modules', name, 'package.json'), 'utf8')).version
  } catch {
    return undefined
  }
}
const missing = Object.entries(versions).filter(([name, version]) => installed(name) !== version)
if (missing.length === 0) {
  console.log(`agent CLIs up to date in ${cache}`)
} else {
  // Every pinned CLI is named, not only the missing ones: `npm install --no-save` removes the
  // packages of an earlier --no-save install that it is not given (measured with npm 11), and
  // keeps the ones already at their version as they are.
  const specs = Object.entries(versions).map(([name, version]) => `${name}@${version}`)
  console.log(`installing ${missing.map(([name, version]) => `${name}@${version}`).join(' ')} into ${cache}`)
  execFileSync('npm', ['install', '--prefix', cache, '--no-audit', '--no-fund', '--no-save', ...specs], { stdio: 'inherit' })
}
