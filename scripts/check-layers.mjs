#!/usr/bin/env node
// The layer check (npm run lint): every import between src/ folders must be an edge that
// docs/layers.json allows, and no file imports itself back through a cycle (type-only imports
// included: a cycle of types is still a cycle of knowledge). `--graph` prints the folder edges.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

// `--root DIR` checks another tree (the layer check's own test); default: this checkout.
const rootArg = process.argv.indexOf('--root')
const root = rootArg > 0 ? path.resolve(process.argv[rootArg + 1]) : path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const src = path.join(root, 'src')
const spec = JSON.parse(fs.readFileSync(path.join(root, 'docs/layers.json'), 'utf8'))
const layers = spec.layers

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? walk(p) : e.name.endsWith('.ts') ? [p] : []
  })
}

/** The layer a file belongs to: the longest layer name that is a prefix of its path under src/. */
function layerOf(file) {
  const rel = path.relative(src, file).replace(/\.ts$/, '')
  let best
  for (const name of Object.keys(layers)) {
    if (rel === name || rel.startsWith(name + '/')) if (!best || name.length > best.length) best = name
  }
  return best
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"`;]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g
const files = walk(src)
const graph = new Map()
const problems = []
const edges = new Map()
for (const file of files) {
  const from = layerOf(file)
  if (!from) problems.push(`${path.relative(root, file)}: in no layer of docs/layers.json`)
  const text = fs.readFileSync(file, 'utf8')
  const deps = []
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3]
    if (!spec.startsWith('.')) continue
    const target = path.resolve(path.dirname(file), spec).replace(/\.js$/, '.ts')
    deps.push(target)
    const to = layerOf(target)
    if (!from || !to || from === to) continue
    const key = `${from} -> ${to}`
    edges.set(key, [...(edges.get(key) ?? []), path.relative(root, file)])
    if (!(layers[from] ?? []).includes(to)) {
      problems.push(`${path.relative(root, file)} imports ${path.relative(root, target)}: ${from} may not depend on ${to} (docs/layers.json)`)
    }
  }
  graph.set(file, deps)
}

// File-level cycles: depth-first search, reporting each cycle once.
const state = new Map()
const stack = []
function visit(f) {
  state.set(f, 1)
  stack.push(f)
  for (const d of graph.get(f) ?? []) {
    if (!graph.has(d)) continue
    if (state.get(d) === 1) {
      const cycle = stack
        .slice(stack.indexOf(d))
        .concat(d)
        .map((p) => path.relative(src, p))
      problems.push(`import cycle: ${cycle.join(' -> ')}`)
    } else if (!state.has(d)) visit(d)
  }
  stack.pop()
  state.set(f, 2)
}
for (const f of files) if (!state.has(f)) visit(f)

// Layer-level cycles follow from the allowed edges themselves: they must form a DAG.
const order = []
const seen = new Map()
function topo(name, trail) {
  if (seen.get(name) === 2) return
  if (seen.get(name) === 1) {
    problems.push(`docs/layers.json allows a cycle: ${[...trail.slice(trail.indexOf(name)), name].join(' -> ')}`)
    return
  }
  seen.set(name, 1)
  for (const d of layers[name] ?? []) topo(d, [...trail, name])
  seen.set(name, 2)
  order.push(name)
}
for (const name of Object.keys(layers)) topo(name, [])

if (process.argv.includes('--graph')) {
  for (const [k, v] of [...edges].sort()) console.log(`${k}  (${v.length})`)
}
if (problems.length > 0) {
  for (const p of problems) console.error(p)
  console.error(`check-layers: ${problems.length} problem(s)`)
  process.exit(1)
}
console.log(`check-layers: ${files.length} files in ${Object.keys(layers).length} layers, no forbidden edge, no cycle`)
