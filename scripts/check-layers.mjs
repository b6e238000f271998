#!/usr/bin/env node
// The layer check (npm run lint), three axes read from docs/layers.json. Layers: every import between
// src/ folders is an edge the file lists, every listed edge is one the code uses (the file describes
// the interface, it is no ceiling), and no file imports itself back through a cycle (type-only
// imports included: a cycle of types is still a cycle of knowledge). Purity: a file of the "pure" set
// reaches none of its I/O modules (fs, child_process, net, …), directly or through a local import.
// Owners: an act one folder or file alone performs (spawning, signalling, watching) — an import of an
// owned module that runs, or a call written as an owned pattern, anywhere else fails.
// `--graph` prints the folder edges with their counts; `--used` prints the edges in use as the
// "layers" object of docs/layers.json and checks nothing.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

// `--root DIR` checks another tree (the layer check's own test); default: this checkout.
const rootArg = process.argv.indexOf('--root')
const root = rootArg > 0 ? path.resolve(process.argv[rootArg + 1]) : path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const src = path.join(root, 'src')
const SPEC = 'docs/layers.json'
const spec = JSON.parse(fs.readFileSync(path.join(root, SPEC), 'utf8'))
const layers = spec.layers
const pure = { io: spec.pure?.io ?? [], files: spec.pure?.files ?? [] }
/** Sealed layers: layer -> the files of it (paths under the layer) that another layer may import. */
const publicFiles = Object.fromEntries(Object.entries(spec.public ?? {}).filter(([k]) => k !== 'about'))
const publicUsed = new Set()
const owners = { imports: spec.owners?.imports ?? {}, calls: spec.owners?.calls ?? {}, except: spec.owners?.except ?? {} }

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? walk(p) : e.name.endsWith('.ts') ? [p] : []
  })
}
const rel = (file) => path.relative(root, file)

/** The layer a file belongs to: the longest layer name that is a prefix of its path under src/. */
function layerOf(file) {
  const name = path.relative(src, file).replace(/\.ts$/, '')
  let best
  for (const layer of Object.keys(layers)) {
    if (name === layer || name.startsWith(layer + '/')) if (!best || layer.length > best.length) best = layer
  }
  return best
}

/** A "pure" entry is a file under src/ (`home/request-id.ts`) or a folder, with everything beneath it. */
const inEntry = (file, entry) => {
  const name = path.relative(src, file)
  return entry.endsWith('.ts') ? name === entry : name.startsWith(entry.replace(/\/$/, '') + '/')
}

/**
 * Every import of a file: its specifier, and whether it is type-only (`import type`, `export type`,
 * `typeof import('…')`, `import('…').Name`) — erased by tsc under verbatimModuleSyntax, so it runs
 * no I/O, though it still counts for layers and cycles.
 */
const STATIC = /(?:^|\n)\s*(?:import|export)\s([^'"`;]*?)from\s+['"]([^'"]+)['"]|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g
const DYNAMIC = /(typeof\s+)?import\(\s*['"]([^'"]+)['"]\s*\)(\s*\.\s*([A-Za-z_$][\w$]*))?/g
function importsOf(text) {
  const out = []
  for (const m of text.matchAll(STATIC)) out.push({ spec: m[2] ?? m[3], typeOnly: m[1] !== undefined && /^type[\s{]/.test(m[1]) })
  for (const m of text.matchAll(DYNAMIC)) out.push({ spec: m[2], typeOnly: m[1] !== undefined || (m[4] !== undefined && m[4] !== 'then') })
  return out
}

const files = walk(src)
const graph = new Map() // file -> every local import (cycles)
const valueDeps = new Map() // file -> local imports that run (purity)
const directIo = new Map() // file -> the I/O module it imports itself, if any
const problems = []
const edges = new Map()
const excused = new Set() // owners.except entries that excused something
/** Whether `file` may do what `owner` entries own; an excepted file may, and its exception counts as used. */
function mayOwn(file, allowed) {
  if (allowed.some((e) => inEntry(file, e))) return true
  const except = Object.keys(owners.except).find((e) => inEntry(file, e))
  if (except) excused.add(except)
  return except !== undefined
}
const CALLS = Object.entries(owners.calls).map(([call, allowed]) => ({
  call,
  allowed,
  re: new RegExp(`(?<![\\w$.])${call.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
}))
for (const file of files) {
  const from = layerOf(file)
  if (!from) problems.push(`${rel(file)}: in no layer of ${SPEC}`)
  const deps = []
  const values = []
  const text = fs.readFileSync(file, 'utf8')
  for (const { call, allowed, re } of CALLS) {
    if (re.test(text) && !mayOwn(file, allowed))
      problems.push(`${rel(file)} calls ${call}…), which only ${allowed.join(', ')} may (${SPEC} "owners")`)
  }
  for (const { spec: s, typeOnly } of importsOf(text)) {
    if (!s.startsWith('.')) {
      if (!typeOnly && pure.io.includes(s) && !directIo.has(file)) directIo.set(file, s)
      const allowed = owners.imports[s]
      if (!typeOnly && allowed && !mayOwn(file, allowed))
        problems.push(`${rel(file)} imports ${s}, which only ${allowed.join(', ')} may (${SPEC} "owners")`)
      continue
    }
    const target = path.resolve(path.dirname(file), s).replace(/\.js$/, '.ts')
    deps.push(target)
    if (!typeOnly) values.push(target)
    const to = layerOf(target)
    if (!from || !to || from === to) continue
    const key = `${from} -> ${to}`
    edges.set(key, [...(edges.get(key) ?? []), rel(file)])
    if (!(layers[from] ?? []).includes(to)) {
      problems.push(`${rel(file)} imports ${rel(target)}: ${from} may not depend on ${to} (${SPEC})`)
    }
    const inner = path.relative(path.join(src, to), target)
    if (publicFiles[to] && !publicFiles[to].includes(inner)) {
      problems.push(
        `${rel(file)} imports ${rel(target)}: outside ${to}/ only its public files may be imported (${SPEC} "public": ${publicFiles[to].join(', ')})`,
      )
    } else if (publicFiles[to]) publicUsed.add(`${to}/${inner}`)
  }
  graph.set(file, deps)
  valueDeps.set(file, values)
}

if (process.argv.includes('--used')) {
  const names = Object.keys(layers)
  for (const [key] of edges) for (const n of key.split(' -> ')) if (!names.includes(n)) names.push(n)
  const used = Object.fromEntries(names.map((n) => [n, names.filter((d) => edges.has(`${n} -> ${d}`))]))
  console.log(JSON.stringify(used, null, 2))
  process.exit(0)
}

// Narrow edges: an allowed edge nothing uses is a stale line of the interface.
for (const [from, allowed] of Object.entries(layers)) {
  for (const to of allowed) {
    if (!edges.has(`${from} -> ${to}`)) problems.push(`layer ${from} may use ${to} but does not: remove it from ${SPEC}`)
  }
}
// A public file of a sealed layer that no other layer imports is a stale line too.
for (const [layer, names] of Object.entries(publicFiles)) {
  if (!(layer in layers)) problems.push(`${SPEC}: "public" names ${layer}, which is no layer`)
  for (const name of names) {
    if (!fs.existsSync(path.join(src, layer, name))) problems.push(`${SPEC}: public file ${layer}/${name} does not exist`)
    else if (!publicUsed.has(`${layer}/${name}`)) problems.push(`${SPEC}: public file ${layer}/${name} is imported by no other layer: remove it`)
  }
}
// A note explains a layer, a listed edge (`a -> b`) or a pure entry (`pure: …`); one on anything else is stale.
for (const key of Object.keys(spec.notes ?? {})) {
  const [from, to] = key.split(' -> ')
  const known = key.startsWith('pure: ') || (to === undefined ? from in layers : (layers[from] ?? []).includes(to))
  if (!known) problems.push(`${SPEC}: note "${key}" explains no layer, listed edge or pure entry`)
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
const seen = new Map()
function topo(name, trail) {
  if (seen.get(name) === 2) return
  if (seen.get(name) === 1) {
    problems.push(`${SPEC} allows a cycle: ${[...trail.slice(trail.indexOf(name)), name].join(' -> ')}`)
    return
  }
  seen.set(name, 1)
  for (const d of layers[name] ?? []) topo(d, [...trail, name])
  seen.set(name, 2)
}
for (const name of Object.keys(layers)) topo(name, [])

// Purity: the shortest chain of run-time imports from a pure file to an I/O module, if any.
function ioChain(start) {
  const prev = new Map([[start, undefined]])
  const queue = [start]
  while (queue.length > 0) {
    const f = queue.shift()
    if (directIo.has(f)) {
      const chain = [directIo.get(f)]
      for (let at = f; at !== undefined; at = prev.get(at)) chain.unshift(rel(at))
      return chain
    }
    for (const d of valueDeps.get(f) ?? []) {
      if (!prev.has(d) && valueDeps.has(d)) {
        prev.set(d, f)
        queue.push(d)
      }
    }
  }
  return undefined
}
for (const entry of pure.files) {
  if (!files.some((f) => inEntry(f, entry))) problems.push(`${SPEC}: pure entry ${entry} names no file under src/`)
}
for (const file of files) {
  if (!pure.files.some((e) => inEntry(file, e))) continue
  const chain = ioChain(file)
  if (!chain) continue
  const how = chain.length === 2 ? `imports ${chain[1]}` : `reaches ${chain.at(-1)} through ${chain.slice(1, -1).join(' -> ')}`
  problems.push(`${rel(file)} is pure (${SPEC} "pure") but ${how}: move the I/O out of it, or take it out of the pure set`)
}

for (const [entry, allowed] of [...Object.entries(owners.imports), ...Object.entries(owners.calls)]) {
  for (const e of allowed) if (!files.some((f) => inEntry(f, e))) problems.push(`${SPEC}: owner ${e} of ${entry} names no file under src/`)
}
for (const entry of Object.keys(owners.except)) {
  if (!excused.has(entry)) problems.push(`${SPEC}: owners exception ${entry} excuses nothing: remove it`)
}

if (process.argv.includes('--graph')) {
  for (const [k, v] of [...edges].sort()) console.log(`${k}  (${v.length})`)
}
if (problems.length > 0) {
  for (const p of problems) console.error(p)
  console.error(`check-layers: ${problems.length} problem(s)`)
  process.exit(1)
}
const pureCount = files.filter((f) => pure.files.some((e) => inEntry(f, e))).length
console.log(
  `check-layers: ${files.length} files in ${Object.keys(layers).length} layers, ${edges.size} edges, each used and allowed, no cycle; ${pureCount} pure files, no I/O import; ${Object.keys(owners.imports).length + Object.keys(owners.calls).length} owned acts, none done elsewhere`,
)
