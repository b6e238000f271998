#!/usr/bin/env node
// Bundles the CLI for bin/swarm.js: dist/bundle/<command>.cjs holds main.ts with that command's
// group only, in one file (`swarm status` then loads 1 module instead of ~60: start-up is most of
// what a status call costs); dist/bundle/main.cjs holds every group (unknown commands, and the
// groups main.ts's WHOLE_PROGRAM names); dist/bundle/_root.json holds package.json's version and
// the top-level help rendered here at build time: bin/swarm.js answers `swarm`, `--help` and
// `--version` from it without loading any bundle.
// tsc's dist/ stays the library that tests and fixtures import: only the CLI entry is bundled.
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import * as esbuild from 'esbuild'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const outdir = path.join(root, 'dist/bundle')
const mainTs = path.join(root, 'src/cli/main.ts')

/** main.ts's lazy command groups: `name: () => import('./module.js')…` → name → module. */
function commandGroups() {
  const text = fs.readFileSync(mainTs, 'utf8')
  const groups = new Map([...text.matchAll(/^\s+'?([\w-]+)'?: \(\) => import\('\.\/([\w-]+)\.js'\)/gm)].map((m) => [m[1], m[2]]))
  const imports = text.match(/\bimport\(/g)?.length ?? 0
  if (groups.size === 0 || groups.size !== imports) {
    throw new Error(
      `scripts/bundle.mjs: read ${groups.size} command groups but ${imports} import() in src/cli/main.ts — keep its GROUPS lines as \`name: () => import('./module.js')…\``,
    )
  }
  return groups
}

/** main.ts's WHOLE_PROGRAM: groups that run in main.cjs (no bundle of their own), with every group. */
function wholeProgramGroups() {
  const line = /^const WHOLE_PROGRAM = new Set\(\[([^\]]*)\]\)$/m.exec(fs.readFileSync(mainTs, 'utf8'))
  if (!line) throw new Error('scripts/bundle.mjs: no `const WHOLE_PROGRAM = new Set([...])` line in src/cli/main.ts')
  return new Set([...line[1].matchAll(/'([\w-]+)'/g)].map((m) => m[1]))
}

/** What bin/swarm.js answers `swarm`, `--help` and `--version` from. */
const ROOT_ANSWERS = '_root.json'
const version = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version

/** The whole program's top-level help, from the bundle just built (the same commands users run), 80 columns wide. */
async function rootHelp(mainBundle) {
  const { buildProgram } = createRequire(import.meta.url)(mainBundle)
  const program = await buildProgram()
  program.configureHelp({ helpWidth: 80 })
  return program.helpInformation()
}

/**
 * `import { z } from 'zod'` pulls the whole `z` namespace (every locale, ~450 kB) into an esbuild
 * bundle; `import * as z` lets it keep only what is used (~85 kB). Same binding, same uses.
 */
const shakeZod = {
  name: 'shake-zod',
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async (args) => {
      const text = await fs.promises.readFile(args.path, 'utf8')
      return { contents: text.replace(/^import \{ z \} from 'zod'$/gm, "import * as z from 'zod'"), loader: 'ts' }
    })
  },
}

/**
 * The commands a teammate's shell and every poller run (bench/cli.mjs): their bundles check the
 * files they read with src/util/zod-lite.ts, the same schema declarations without zod (building
 * zod's schemas and parsing with them was ~18 % of a call); zod is loaded only when a value fails.
 */
const LEAN = ['status', 'send']
/**
 * signal-exit (proper-lockfile's) loads node:assert (~1 ms) for one check of its argument: in every
 * bundle, that one check instead (the 64 teammates of a team take their first lock at start).
 */
const signalExitAssert = {
  name: 'signal-exit-assert',
  setup(build) {
    build.onResolve({ filter: /^assert$/ }, (args) =>
      /[\\/]signal-exit[\\/]/.test(args.importer) ? { path: 'assert', namespace: 'signal-exit-assert' } : undefined,
    )
    build.onLoad({ filter: /^assert$/, namespace: 'signal-exit-assert' }, () => ({
      contents: 'exports.equal = (a, b, message) => { if (a != b) throw new Error(message) }',
      loader: 'js',
    }))
  },
}

/**
 * What else those two bundles leave out: graceful-fs (proper-lockfile's fs), whose load patches fs
 * and loads its streams (~10 % of a `send`), for Node's fs — its EMFILE queue serves processes that
 * hold many files open, not a call that takes one lock.
 */
const leanDeps = {
  name: 'lean-deps',
  setup(build) {
    build.onResolve({ filter: /^zod$/ }, () => ({ path: path.join(root, 'src/util/zod-lite.ts') }))
    build.onResolve({ filter: /^graceful-fs$/ }, () => ({ path: 'graceful-fs', namespace: 'lean-deps' }))
    build.onLoad({ filter: /^graceful-fs$/, namespace: 'lean-deps' }, () => ({ contents: "module.exports = require('node:fs')", loader: 'js' }))
    // node:crypto (its load is ~5 % of a `status`, which signs and hashes nothing): its functions,
    // each loading it at its first call. A name that is not a function fails the build here.
    build.onResolve({ filter: /^(node:)?crypto$/ }, (args) =>
      args.namespace === 'lean-deps' ? { path: 'node:crypto', external: true } : { path: 'crypto', namespace: 'lean-deps' },
    )
    build.onLoad({ filter: /^crypto$/, namespace: 'lean-deps' }, () => ({ contents: lazyBuiltin('node:crypto'), loader: 'js' }))
  },
}

/** An ES module with `name`'s functions (not its classes: `new`/`instanceof` need the real ones), each requiring it at its first call. */
function lazyBuiltin(name) {
  const fns = Object.entries(createRequire(import.meta.url)(name)).filter(([k, v]) => typeof v === 'function' && /^[a-z]/.test(k))
  return [
    `let m; const load = () => (m ??= require(${JSON.stringify(name)}));`,
    ...fns.map(([k]) => `export function ${k}(...a) { return load().${k}(...a) }`),
  ].join('\n')
}

/**
 * commander requires child_process at load, for executable subcommands swarm has none of: loaded
 * when spawn is first used instead (`swarm send` then loads no child_process, net nor dgram).
 */
const lazyCommander = {
  name: 'lazy-commander',
  setup(build) {
    build.onLoad({ filter: /[\\/]commander[\\/]lib[\\/]command\.js$/ }, async (args) => {
      const text = await fs.promises.readFile(args.path, 'utf8')
      const eager = "const childProcess = require('node:child_process');"
      if (!text.includes(eager)) throw new Error(`scripts/bundle.mjs: no \`${eager}\` in ${args.path} (commander changed): update lazyCommander`)
      return { contents: text.replace(eager, "const childProcess = { get spawn() { return require('node:child_process').spawn } };"), loader: 'js' }
    })
  },
}

/**
 * `import fs from 'node:fs'` compiles to a copy of the module's namespace (esbuild's __toESM: a
 * getter per export) in every module that imports it — 70 copies of fs, path and fs/promises in
 * the status bundle, ~10 % of a `swarm status` (bench:cli). Each builtin an ES module imports is
 * one module of the bundle instead, that re-exports it: one copy per builtin. (`require()` of a
 * builtin, in CommonJS dependencies, stays as it is.)
 */
const builtinsOnce = {
  name: 'builtins-once',
  setup(build) {
    build.onResolve({ filter: /^node:/ }, (args) =>
      // sideEffects: false, so that a module whose imports of it all went unused still drops it (as esbuild drops the require).
      args.kind === 'import-statement' && args.namespace !== 'builtin' ? { path: args.path, namespace: 'builtin', sideEffects: false } : undefined,
    )
    build.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => {
      const name = JSON.stringify(args.path)
      return { contents: `export * from ${name}\nexport { default } from ${name}`, loader: 'js' }
    })
  },
}

/**
 * One entry per command: main.ts again (as `cli:<command>`), where the other groups' import()
 * becomes a stub that says so if ever loaded. One build, so shared modules are parsed once.
 */
function commandEntries(groups) {
  return {
    name: 'command-entries',
    setup(build) {
      build.onResolve({ filter: /^cli:/ }, (args) => ({ path: args.path.slice(4), namespace: 'cli' }))
      build.onLoad({ filter: /.*/, namespace: 'cli' }, async () => ({
        contents: await fs.promises.readFile(mainTs, 'utf8'),
        loader: 'ts',
        resolveDir: path.dirname(mainTs),
      }))
      build.onResolve({ filter: /^\.\/[\w-]+\.js$/, namespace: 'cli' }, (args) =>
        args.kind !== 'dynamic-import' || args.path === `./${groups.get(args.importer)}.js`
          ? undefined
          : { path: `${args.importer}:${args.path}`, namespace: 'other-group' },
      )
      build.onLoad({ filter: /.*/, namespace: 'other-group' }, (args) => ({
        contents: `throw new Error(${JSON.stringify(`swarm: ${args.path} is not in this bundle`)})`,
        loader: 'js',
      }))
    },
  }
}

const options = {
  absWorkingDir: root,
  bundle: true,
  // CommonJS, because bin/swarm.js compiles it with a V8 code cache (vm.Script's cachedData):
  // Node 20 has none for ES modules. It calls the module wrapper with its own require/__filename.
  format: 'cjs',
  outExtension: { '.js': '.cjs' },
  platform: 'node',
  target: 'node20',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
  define: { 'import.meta.url': '__swarmModuleUrl' },
  banner: { js: 'var __swarmModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
  // import('node:stream') → require: a vm.Script has no loader for import().
  supported: { 'dynamic-import': false },
}

// Built aside then swapped in (a swarm started in between finds no bundle and runs
// dist/cli/main.js); a failed build leaves no bundle rather than a stale one.
const staging = `${outdir}.tmp-${process.pid}`
fs.rmSync(staging, { recursive: true, force: true })
try {
  const groups = commandGroups()
  const whole = wholeProgramGroups()
  const own = [...groups.keys()].filter((c) => !whole.has(c))
  const entries = (commands) => Object.fromEntries(commands.map((c) => [c, `cli:${c}`]))
  const build = { ...options, define: { ...options.define, SWARM_BUILD: JSON.stringify({ version }) }, outdir: staging }
  await esbuild.build({
    ...build,
    entryPoints: { main: mainTs, ...entries(own.filter((c) => !LEAN.includes(c))) },
    plugins: [shakeZod, signalExitAssert, lazyCommander, commandEntries(groups), builtinsOnce],
  })
  // A zod function zod-lite lacks fails the build (it would be undefined at run time).
  await esbuild.build({
    ...build,
    entryPoints: entries(LEAN),
    plugins: [shakeZod, signalExitAssert, leanDeps, lazyCommander, commandEntries(groups), builtinsOnce],
    logOverride: { 'import-is-undefined': 'error' },
  })
  const help = await rootHelp(path.join(staging, 'main.cjs'))
  fs.writeFileSync(path.join(staging, ROOT_ANSWERS), `${JSON.stringify({ version, help })}\n`)
} catch (err) {
  fs.rmSync(staging, { recursive: true, force: true })
  fs.rmSync(outdir, { recursive: true, force: true })
  if (!err.errors) console.error(String(err)) // esbuild has printed its own
  console.error('scripts/bundle.mjs: no CLI bundle; bin/swarm.js runs dist/cli/main.js')
  process.exit(1)
}
// The page of `swarm web` (src/web/page/app.ts with xterm.js and its CSS from npm), for the browser:
// dist/web-page/app.js and app.css, served by the package itself (src/web/assets.ts), no CDN.
const pageOut = path.join(root, 'dist/web-page')
const pageStaging = `${pageOut}.tmp-${process.pid}`
fs.rmSync(pageStaging, { recursive: true, force: true })
try {
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: { app: path.join(root, 'src/web/page/app.ts') },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: ['chrome110', 'firefox115', 'safari16'],
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    outdir: pageStaging,
  })
  fs.rmSync(pageOut, { recursive: true, force: true })
  fs.renameSync(pageStaging, pageOut)
} catch (err) {
  fs.rmSync(pageStaging, { recursive: true, force: true })
  if (!err.errors) console.error(String(err))
  console.error('scripts/bundle.mjs: no web page; swarm web will not start')
  process.exit(1)
}
// Two builds at once (engineers sharing a tree): the last one's bundle stays.
for (let attempt = 1; ; attempt++) {
  fs.rmSync(outdir, { recursive: true, force: true })
  try {
    fs.renameSync(staging, outdir)
    break
  } catch (err) {
    if (attempt === 3) throw err
  }
}
