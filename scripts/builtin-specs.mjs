#!/usr/bin/env node
// The built-in adapters written as specs (src/adapters/builtin/<kind>.yaml, the form of a user's
// adapter file) are checked against the spec schema and copied to dist/adapters/builtin/, the YAML
// as written and its JSON, which the registry reads at run time through the same loader: YAML's
// parse cost 50–180 ms at every start of a command that loads the registry (measured in the bundle).
// Runs after tsc (it imports dist/adapters/adapter-spec.js).
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import YAML from 'yaml'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const from = path.join(root, 'src/adapters/builtin')
const to = path.join(root, 'dist/adapters/builtin')
const { AdapterSpec } = await import(path.join(root, 'dist/adapters/adapter-spec.js'))

fs.rmSync(to, { recursive: true, force: true })
fs.mkdirSync(to, { recursive: true })
for (const name of fs.readdirSync(from).filter((n) => n.endsWith('.yaml'))) {
  const text = fs.readFileSync(path.join(from, name), 'utf8')
  const raw = YAML.parse(text)
  const checked = AdapterSpec.safeParse(raw)
  if (!checked.success) {
    const issue = checked.error.issues[0]
    throw new Error(`scripts/builtin-specs.mjs: src/adapters/builtin/${name}: ${issue.path.join('.') || '(top level)'}: ${issue.message}`)
  }
  fs.writeFileSync(path.join(to, name), text)
  fs.writeFileSync(path.join(to, name.replace(/\.yaml$/, '.json')), `${JSON.stringify(raw)}\n`)
}
