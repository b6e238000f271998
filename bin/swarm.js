#!/usr/bin/env node
// CommonJS (bin/package.json): an ES module entry costs Node's ESM loader, ~5 ms of every call
// (bench/cli.mjs).
'use strict'
const fs = require('node:fs')
const path = require('node:path')

const bundleDir = path.resolve(__dirname, '../dist/bundle')

/**
 * The V8 flags of `swarm agent`, a process that is one team member and nothing else (never the
 * leader, where in-process members share one heap). V8's memory reducer, once the old generation of
 * a process that never had a full GC grew by 1 MB (a teammate's does while it starts), waits until
 * the allocation rate reads low, then runs up to three memory-reducing mark-compacts 0.5 s apart.
 * In a teammate the first gives its first turn's garbage back (16.9 → 12.4 MB used); the other two
 * free ~0.2 MB and only uncommit the emptied pages (committed 16.8 → 13.8 MB); the three cost ~100 ms
 * of CPU with their helper threads. With 64 teammates on 2 cores the rate reads low only 1–2 minutes
 * after the turn, so every teammate's three GCs fell in the idle team's window: 5.7–7.1 % of a core
 * (bench:scale tmux@64, issue 25; 1.4–2.6 % with one). Set before a bundle is compiled: V8's code
 * cache carries the flags it was made with, and is keyed by them below.
 */
const MEMBER_V8_FLAGS = process.argv[2] === 'agent' ? '--memory-reducer-single-gc' : ''
if (MEMBER_V8_FLAGS) require('node:v8').setFlagsFromString(MEMBER_V8_FLAGS)

/** `swarm`, `swarm --help`, `swarm --version`: answered from _root.json, without loading any command code. */
const ROOT_ARGS = new Set([undefined, '--help', '-h', '--version', '-V'])
/** 128 + SIGHUP, SIGINT, SIGTERM: how swarm exits when stopped (src/process/signals.ts signalExitCode); declared before run() starts. */
const STOPPED_EXITS = new Set([129, 130, 143])

/** The calls a team's running leader answers on its socket, by their argument count: `status <team> --json`, `send <team> <to> <text>`. */
const LEADER_CALLS = { status: 3, send: 4 }
/** home/paths.ts validateName: what a team name may be before a path is built from it. */
const TEAM_NAME = /^(?![.-])[A-Za-z0-9._-]{1,64}$/
/**
 * How long an answer may take once the request is written. The leader answers between the other
 * work of its event loop (its teammates' and lead's turns, which await I/O): milliseconds usually,
 * more behind a long synchronous step. status, read-only, then runs here; send never does (the
 * leader may have sent it): it fails, exit 9.
 */
const STATUS_ANSWER_MS = 10_000
const SEND_ANSWER_MS = 30_000

run().then(
  // Every command has finished its work when main() resolves (long-running ones await inside it):
  // exit then, instead of waiting for the event loop to wind down (file handles closing lazily cost
  // ~90 ms per command). stdout and stderr are synchronous on POSIX pipes, files and TTYs.
  () => process.exit(process.exitCode ?? 0),
  (err) => {
    process.stderr.write(`swarm: failed to start — run "npm run build" first (${err?.message})\n`)
    process.exit(70)
  },
)

async function run() {
  if (process.argv.length <= 3 && ROOT_ARGS.has(process.argv[2]) && answerRoot(process.argv[2])) return
  if (await askLeader(process.argv.slice(2))) return
  const cli = runBundle(bundlesFor(process.argv[2])) ?? (await import('../dist/cli/main.js'))
  await cli.main(process.argv)
}

/**
 * Asks the team's running leader (leader/leader-socket.ts) to run the call: it answers with what
 * the call prints and its exit code, or `local` when the call is not one it runs as this process
 * would. False — the bundle runs the call — with SWARM_NO_LEADER_SOCKET=1, when no socket is
 * there (nothing at the path, not a socket, a link: never followed) or nothing listens on it.
 */
function askLeader(args) {
  const env = process.env
  if (env.SWARM_NO_LEADER_SOCKET === '1' || LEADER_CALLS[args[0]] !== args.length || !TEAM_NAME.test(args[1])) return false
  // home/paths.ts rootDir and leaderSocketPath (test/cli/leader-socket.test.ts holds them equal).
  const root = path.resolve(env.SWARM_HOME || env.CLAUDE_CONFIG_DIR || path.join(require('node:os').homedir(), '.claude'))
  const file = path.join(root, 'teams', args[1], 'socket', 'leader.sock')
  try {
    if (!fs.lstatSync(file, { throwIfNoEntry: false })?.isSocket()) return false
  } catch {
    return false // a file where a directory belongs, no permission: the call tells what is wrong
  }
  return new Promise((resolve) => {
    const conn = require('node:net').connect(file)
    const chunks = []
    let timer
    let written = false
    let settled = false
    const finish = (answered) => {
      settled = true
      clearTimeout(timer)
      conn.destroy()
      resolve(answered)
    }
    // Before the request is written nothing was done: run it here. After, only status may.
    const unanswered = (why) => {
      if (settled) return
      if (!written || args[0] === 'status') return finish(false)
      write(2, `swarm: the leader of team ${args[1]} ${why} — the message may have been sent: look with swarm inbox ${args[1]} ${args[2]}\n`)
      process.exitCode = 9
      finish(true)
    }
    conn.on('error', () => unanswered('dropped the connection before answering'))
    conn.on('connect', () => {
      // write, not end: the leader's side closes with ours (no half-open sockets there).
      conn.write(`${JSON.stringify({ argv: args, env })}\n`)
      written = true
      const ms = args[0] === 'send' ? SEND_ANSWER_MS : STATUS_ANSWER_MS
      timer = setTimeout(() => unanswered(`did not answer within ${ms / 1000} s`), ms)
    })
    // The answer is one line: taken at its newline, without waiting for the leader's close (another
    // turn of the event loop, ~0.5 ms), or at the close when it has none.
    const answered = () => {
      if (settled) return
      const text = Buffer.concat(chunks).toString('utf8')
      const nl = text.indexOf('\n')
      let answer
      try {
        answer = JSON.parse(nl < 0 ? text : text.slice(0, nl))
      } catch {
        return unanswered('closed the connection without an answer')
      }
      if (answer.local === true) return finish(false)
      if (answer.stdout) write(1, answer.stdout)
      if (answer.stderr) write(2, answer.stderr)
      // The call is done: exit now. Destroying the socket and resolving back through run() cost
      // ~1 ms of a ~35 ms call (the kernel closes the socket with the process).
      process.exit(Number.isInteger(answer.code) ? answer.code : 1)
    }
    conn.on('data', (chunk) => {
      chunks.push(chunk)
      if (chunk.includes(0x0a)) answered()
    })
    conn.on('end', answered)
    conn.on('close', () => unanswered('closed the connection without an answer'))
  })
}

/**
 * `swarm` (help on stderr, exit 2), `--help`/`-h` (help on stdout) and `--version`/`-V`, as commander
 * answers them, from what scripts/bundle.mjs rendered at build time. False without a build.
 */
function answerRoot(arg) {
  let root
  try {
    root = JSON.parse(fs.readFileSync(path.join(bundleDir, '_root.json'), 'utf8'))
  } catch {
    return false // not built (or being rebuilt): the program answers
  }
  if (arg === '--version' || arg === '-V') write(1, `${root.version}\n`)
  else write(arg ? 1 : 2, root.help)
  process.exitCode = arg ? 0 : 2
  return true
}

/** write(2) to fd 1 or 2 (creating process.stdout would load Node's streams); the stream when the fd refuses (EAGAIN, EPIPE). */
function write(fd, text) {
  let rest = Buffer.from(text)
  try {
    while (rest.length > 0) rest = rest.subarray(fs.writeSync(fd, rest))
  } catch {
    ;(fd === 1 ? process.stdout : process.stderr).write(rest)
  }
}

/**
 * `npm run build` bundles the CLI (scripts/bundle.mjs): dist/bundle/<command>.cjs holds only that
 * command's group, one file instead of ~60 modules; main.cjs holds them all. Without a bundle
 * (not built, or being rebuilt right now) tsc's dist/cli/main.js is the same program; it is also
 * the one run when it is newer than the bundle (tsc alone was run after changing the sources).
 */
function runBundle(names) {
  const compiled = fs.statSync(path.join(bundleDir, '../cli/main.js'), { throwIfNoEntry: false })
  for (const name of names) {
    const file = path.join(bundleDir, `${name}.cjs`)
    const bundled = fs.statSync(file, { throwIfNoEntry: false })
    if (!bundled) continue
    if (compiled && compiled.mtimeMs > bundled.mtimeMs) return undefined
    let source
    try {
      source = fs.readFileSync(file, 'utf8')
    } catch {
      continue // removed since: a build is swapping the bundle in
    }
    return runWithCodeCache(file, source)
  }
  return undefined
}

/**
 * Runs a CommonJS bundle compiled with V8's code cache, as Node 22's module.enableCompileCache()
 * would (Node 20 has none): compiling is ~20 ms of a ~120 ms `swarm status`. The cache sits beside
 * the bundle (a build starts without one) and is written at the end of the first run that succeeded
 * or was stopped by a signal (STOPPED_EXITS), so that it holds the functions that ran too: the
 * long-running commands end so — `team delete` stops the leader console with its session, and
 * without this every `swarm leader` compiled leader.cjs afresh. V8 rejects a cache made by another
 * V8 or with other flags; it is then rewritten. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
 */
function runWithCodeCache(file, source) {
  // One cache per set of node/V8 options (--max-old-space-size…, the member flags): processes run with different
  // ones would otherwise reject and rewrite each other's.
  const options = [...process.execArgv, process.env.NODE_OPTIONS ?? '', MEMBER_V8_FLAGS].join(' ').trim()
  const cacheFile = `${file}.${process.version}${options ? `-${hash(options)}` : ''}.cache`
  const useCache = !process.env.NODE_DISABLE_COMPILE_CACHE
  let cachedData
  try {
    if (useCache) cachedData = fs.readFileSync(cacheFile)
  } catch {
    // none yet
  }
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`
  const script = new (require('node:vm').Script)(wrapped, { filename: file, cachedData })
  const module = { exports: {} }
  const req = require('node:module').createRequire(file)
  script.runInThisContext().call(module.exports, module.exports, req, module, file, path.dirname(file))
  if (useCache && (!cachedData || script.cachedDataRejected)) {
    process.once('exit', (code) => {
      if (code === 0 || STOPPED_EXITS.has(code)) writeCache(cacheFile, script)
    })
  }
  return module.exports
}

function hash(text) {
  let h = 5381
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 33) ^ text.charCodeAt(i)) >>> 0
  return h.toString(36)
}

/** The bundles that can run `command`, best first. */
function bundlesFor(command) {
  return command && /^[a-z][a-z0-9-]*$/.test(command) ? [command, 'main'] : ['main']
}

function writeCache(cacheFile, script) {
  const tmp = `${cacheFile}.tmp-${process.pid}`
  try {
    fs.accessSync(path.dirname(cacheFile), fs.constants.W_OK) // a read-only install runs without
    fs.writeFileSync(tmp, script.createCachedData())
    fs.renameSync(tmp, cacheFile) // concurrent first runs: the last rename wins, each file whole
  } catch {
    try {
      fs.rmSync(tmp, { force: true })
    } catch {
      // nothing more to do at exit
    }
  }
}
