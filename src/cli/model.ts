import fs from 'node:fs'
import path from 'node:path'
import type { Command } from 'commander'
import { swarmArgv } from '../backends/teammate-launch.js'
import { UsageError } from '../errors.js'
import type { RecordedRequest } from '../loopback-model/loopback-server.js'
import { nextStopSignal } from '../process/handlers.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { println } from '../terminal/output.js'

/**
 * `swarm model serve`: the loopback Messages API (src/loopback-model/) in the foreground, playing a
 * scenario file, so that `swarm team create` in another shell runs a real team offline. It prints
 * the environment to export, one line per request it answers, and stops on SIGINT/SIGTERM.
 */
export function registerModelCommands(program: Command): void {
  const model = program.command('model').description('a scripted model on 127.0.0.1 for running real teams offline')
  model
    .command('serve')
    .description('serve a scripted Messages API that plays a scenario file; export what it prints, then run a team in another shell')
    .requiredOption(
      '--scenario <file>',
      "the scenario to play: a YAML or JSON file (format in docs/offline.md), or the name of one of the package's examples (offline-team)",
    )
    .option('--port <n>', 'the port on 127.0.0.1 (default: any free port)', '0')
    .option('--json', 'print {url, port, env, scenario} as one JSON object, then the request log as JSON lines on stderr')
    .action((opts: ModelServeOptions) => modelServe(opts))
}

export interface ModelServeOptions {
  scenario: string
  port: string
  json?: boolean
}

/** The key the printed environment carries: the loopback server accepts any non-empty key. */
export const LOOPBACK_API_KEY = 'swarm-loopback'

export async function modelServe(opts: ModelServeOptions): Promise<void> {
  const port = Number(opts.port)
  if (!/^\d+$/.test(opts.port) || port > 65_535) throw new UsageError(`--port ${opts.port} is not a port number (0–65535)`)
  const { startLoopbackServer } = await import('../loopback-model/loopback-server.js')
  const file = scenarioFile(opts.scenario)
  const server = await startLoopbackServer({ scenarioFile: file, port, onRequest: opts.json ? logJson : logLine }).catch((err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EADDRINUSE' || code === 'EACCES')
      throw new UsageError(`cannot listen on 127.0.0.1:${port}: ${code}`, {
        hint: 'pick another --port, or leave it out for any free one',
        cause: err,
      })
    throw err
  })
  // Claimed before anything is printed: a test (or a script) that reads the env and signals at once is heard.
  const stopped = nextStopSignal()
  const env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: LOOPBACK_API_KEY }
  // One line: a script reads it as soon as it is printed, while the server keeps running.
  if (opts.json) process.stdout.write(JSON.stringify({ url: server.url, port: server.port, env, scenario: file }) + '\n')
  else {
    println(`swarm model: playing ${file} on ${server.url}`)
    println('in another shell, export this, then run swarm team create … there:')
    for (const [name, value] of Object.entries(env)) println(`  export ${name}=${value}`)
    println('stop with Ctrl-C; requests answered:')
  }
  const signal = await stopped
  await server.close()
  if (!opts.json) println(`swarm model: stopped (${signal ?? 'done'}) after ${server.requests.length} request(s)`)
  process.exit(0)
}

/** `12:03:04 alice ← rule 2 (label)`: which part of the scenario answered. */
function logLine(r: RecordedRequest): void {
  const time = new Date(r.receivedAt).toTimeString().slice(0, 8)
  const who = terminalSafe(r.agent ?? '(no agent)', { singleLine: true })
  const p = r.played
  const what = !p
    ? r.path
    : p.kind === 'none'
      ? `nothing matched in ${p.script === '*' ? 'the default script' : p.script} (answered 400)`
      : `${p.kind}${p.index !== undefined ? ` ${p.index}` : ''}${p.label ? ` (${terminalSafe(p.label, { singleLine: true })})` : ''}`
  println(`${time} ${who} ← ${what}`)
}

function logJson(r: RecordedRequest): void {
  process.stderr.write(JSON.stringify({ at: r.receivedAt, agent: r.agent, path: r.path, played: r.played }) + '\n')
}

/** A scenario given by a bare name (`offline-team`) that is no file here is one of the package's examples/. */
function scenarioFile(arg: string): string {
  const given = path.resolve(arg)
  if (fs.existsSync(given) || !/^[a-z0-9][a-z0-9-]*$/.test(arg)) return given
  const example = path.join(path.dirname(swarmArgv()[1]), '..', 'examples', `${arg}.yaml`)
  return fs.existsSync(example) ? example : given
}
