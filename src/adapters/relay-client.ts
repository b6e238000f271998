/**
 * `swarm relay <endpoint> -- <command…>`: what a sandboxed CLI teammate runs instead of swarm
 * (its hooks, its `swarm mcp`, the `swarm` on its PATH). It hands the command and its stdin to the
 * relay in the teammate's pane wrapper and prints what comes back, exiting with its code. When the
 * relay cannot be reached, a permission hook still answers: with a deny (hook-fail.ts).
 */
import net from 'node:net'
import { errorMessage } from '../errors.js'
import { failClosed, isGatingEvent } from './hook-fail.js'
import { lineReader } from '../util/frame-lines.js'
import { bytesOf, data, encodeFrame, readEndpoint, type ServerFrame } from './relay-frames.js'
import type { HookReply, SwarmHookEvent } from './types.js'

export interface RelayClientIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean }
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
  cwd: string
  env: NodeJS.ProcessEnv
}

const defaultIo = (): RelayClientIo => ({
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  cwd: process.cwd(),
  env: process.env,
})

/** Runs `argv` through the relay announced in `endpointFile`; resolves with the exit code. */
export async function runRelayClient(endpointFile: string, argv: string[], io: RelayClientIo = defaultIo()): Promise<number> {
  try {
    return await relay(endpointFile, argv, io)
  } catch (err) {
    return unreachable(argv, err, io)
  }
}

async function relay(endpointFile: string, argv: string[], io: RelayClientIo): Promise<number> {
  const endpoint = await readEndpoint(endpointFile)
  if (!endpoint) throw new Error(`no relay is announced in ${endpointFile} (is the teammate's pane wrapper running?)`)
  const socket = net.connect({ host: '127.0.0.1', port: endpoint.port })
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  socket.write(encodeFrame({ t: 'open', token: endpoint.token, argv, cwd: io.cwd }))
  let answered = false
  const exited = new Promise<number>((resolve, reject) => {
    const onFrame = (line: string) => {
      let frame: ServerFrame
      try {
        frame = JSON.parse(line) as ServerFrame
      } catch {
        return reject(new Error('the relay sent a frame that is not JSON'))
      }
      if (frame.t === 'out') io.stdout.write(bytesOf(frame.d))
      else if (frame.t === 'err') io.stderr.write(bytesOf(frame.d))
      else if (frame.t === 'exit') {
        answered = true
        resolve(frame.code)
      }
    }
    socket.on('data', lineReader(onFrame, reject))
    socket.once('error', reject)
    socket.once('close', () => {
      if (!answered) reject(new Error('the relay closed the connection before the command ended'))
    })
  })
  forwardStdin(io.stdin, socket)
  try {
    return await exited
  } finally {
    socket.destroy()
  }
}

/** The client's stdin to the relay, then `eof`; a terminal is no input. */
function forwardStdin(stdin: RelayClientIo['stdin'], socket: net.Socket): void {
  const eof = () => {
    if (!socket.destroyed) socket.write(encodeFrame({ t: 'eof' }))
  }
  if (stdin.isTTY) {
    eof()
    return
  }
  stdin.on('data', (c: Buffer) => {
    if (!socket.destroyed) socket.write(encodeFrame({ t: 'in', d: data(c) }))
  })
  stdin.once('end', eof)
  stdin.once('error', eof)
}

/** No relay: a permission hook denies in its CLI's form; anything else says why and fails. */
async function unreachable(argv: string[], err: unknown, io: RelayClientIo): Promise<number> {
  const [command, event] = argv
  if (command === 'hook' && event && isGatingEvent(event)) {
    const agent = optionValue(argv, '--agent') ?? io.env.SWARM_AGENT_KIND
    return write(io, await failClosed({ event: event as SwarmHookEvent, env: io.env, ...(agent && { agent }) }, relayError(err)))
  }
  io.stderr.write(`swarm: ${relayError(err).message} — the teammate's pane wrapper (swarm agent-cli) must be running\n`)
  // A hook that is not a permission check: exit 1, a non-blocking hook error to Claude-style CLIs.
  return command === 'hook' ? 1 : 8
}

function relayError(err: unknown): Error {
  return new Error(`could not reach the team through the relay: ${errorMessage(err)}`)
}

function write(io: RelayClientIo, reply: HookReply): number {
  if (reply.stdout) io.stdout.write(reply.stdout)
  if (reply.stderr) io.stderr.write(reply.stderr)
  return reply.exitCode
}

function optionValue(argv: readonly string[], flag: string): string | undefined {
  const i = argv.indexOf(flag)
  return i >= 0 ? argv[i + 1] : undefined
}
