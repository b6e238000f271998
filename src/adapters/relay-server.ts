/**
 * The relay: how a sandboxed CLI teammate reaches its team. It runs in the teammate's pane wrapper
 * (`swarm agent-cli`), outside the sandbox that hides the control plane, listens on loopback with a
 * token only that teammate's sandbox can read, and runs the few swarm commands a teammate may use —
 * its hooks and `swarm mcp` in-process, `swarm send` / `swarm tasks` as a child — always as that
 * teammate: an argv naming another team, member or adapter is refused, never obeyed.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import net from 'node:net'
import { PassThrough, Writable } from 'node:stream'
import { swarmArgv } from '../backends/teammate-launch.js'
import { errorMessage } from '../errors.js'
import { launchProcess, shellExitCode } from '../process/launch.js'
import { onAbort } from '../util/abort.js'
import { type Slots, slots } from '../util/slots.js'
import { parseHookPayload, runHook } from './hook.js'
import { serveMcp } from './mcp-server.js'
import { MAX_FRAME_BYTES, lineReader } from '../util/frame-lines.js'
import { ClientFrame, MAX_OPEN_FRAME_BYTES, bytesOf, data, encodeFrame, type ServerFrame, writeEndpoint } from './relay-frames.js'
import { SWARM_HOOK_EVENTS, type SwarmHookEvent } from './types.js'
import { isDirectorySync } from '../util/fs.js'

export interface RelayIdentity {
  team: string
  name: string
  /** The adapter kind. */
  agent: string
}

export interface RelayOptions extends RelayIdentity {
  /** Where the port and token are written (`relayEndpointFile(configDir)`). */
  endpointFile: string
  /** The wrapper's environment: SWARM_HOME and the teammate's identity variables. */
  env: NodeJS.ProcessEnv
  /** Where a command runs when the client's cwd does not exist outside the sandbox. */
  cwd: string
  /** Overrides of RELAY_LIMITS (tests). */
  limits?: Partial<RelayLimits>
}

/**
 * What one relay spends on connections it has not authenticated and on the processes it starts
 * outside the sandbox: a local process without the token (another teammate shares the loopback
 * network) cannot hold connections open for ever, and a teammate cannot fork swarm children
 * outside its sandbox without bound — the ones past the limit wait their turn.
 */
export interface RelayLimits {
  /** How long a connection may take to send its token. */
  openMs: number
  /** Connections without a token yet; a new one past this closes the oldest. */
  pending: number
  /** `swarm send` / `swarm tasks` children running at once. */
  children: number
}

export const RELAY_LIMITS: RelayLimits = { openMs: 10_000, pending: 32, children: 4 }

export interface Relay {
  port: number
  close(): Promise<void>
}

/** A hook's stdin (its CLI's JSON payload, a file write's content included) is read whole up to this. */
export const MAX_HOOK_PAYLOAD_BYTES = 32 * 1024 * 1024

/** Commands a sandboxed teammate may run through the relay. */
export const RELAYED_COMMANDS = ['hook', 'mcp', 'send', 'tasks'] as const

/** Options whose value must be the teammate's own. */
const IDENTITY_OPTIONS: Record<string, keyof RelayIdentity> = {
  '--team': 'team',
  '--name': 'name',
  '--from': 'name',
  '--as': 'name',
  '--agent': 'agent',
}

export async function startRelay(o: RelayOptions): Promise<Relay> {
  const token = randomBytes(24).toString('base64url')
  const limits = { ...RELAY_LIMITS, ...o.limits }
  const connections = new Set<net.Socket>()
  const pending = new Set<net.Socket>() // insertion order: the oldest first
  const children = slots(limits.children)
  const server = net.createServer((socket) => {
    connections.add(socket)
    pending.add(socket)
    if (pending.size > limits.pending) {
      const oldest = pending.values().next().value as net.Socket
      pending.delete(oldest)
      oldest.destroy()
    }
    const timer = setTimeout(() => socket.destroy(), limits.openMs)
    const opened = () => {
      clearTimeout(timer)
      pending.delete(socket)
    }
    socket.once('close', () => {
      opened()
      connections.delete(socket)
    })
    serveConnection(socket, token, o, { opened, children })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const port = (server.address() as net.AddressInfo).port
  await writeEndpoint(o.endpointFile, { port, token })
  return {
    port,
    async close() {
      for (const s of connections) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

interface Shared {
  /** Called once the connection has shown its token. */
  opened(): void
  children: Slots
}

/** One connection: an `open` frame with the token, then stdin frames; replies until `exit`. */
function serveConnection(socket: net.Socket, token: string, o: RelayOptions, shared: Shared): void {
  const stdin = new PassThrough()
  // Frames after the client's eof (or after the command finished) are dropped: a write after end
  // would be an uncaught error in the wrapper, and what nobody reads is never buffered.
  stdin.on('error', () => undefined)
  let paused = false
  const send = (frame: ServerFrame) => {
    if (!socket.destroyed) socket.write(encodeFrame(frame))
  }
  const finish = (code: number, message?: string) => {
    stdin.destroy()
    if (message) send({ t: 'err', d: data(`swarm: ${message}\n`) })
    send({ t: 'exit', code })
    socket.end()
  }
  const closed = new AbortController()
  socket.once('close', () => closed.abort())
  socket.on('error', () => undefined) // a client gone mid-reply: nothing to tell it
  let opened = false
  const onLine = (line: string) => {
    const parsed = parseFrame(line)
    if (!parsed) return finish(2, 'the relay got a frame it cannot read')
    if (!opened) {
      if (parsed.t !== 'open' || !sameToken(parsed.token, token)) return finish(2, 'the relay refused a connection without its token')
      opened = true
      shared.opened()
      run(parsed.argv, parsed.cwd, { stdin, send, finish, signal: closed.signal, children: shared.children }, o).catch((err: unknown) =>
        finish(1, errorMessage(err)),
      )
      return
    }
    if (stdin.writableEnded || stdin.destroyed) return
    if (parsed.t === 'eof') return void stdin.end()
    // What the command does not read yet holds the connection, not the wrapper's memory.
    if (parsed.t === 'in' && !stdin.write(bytesOf(parsed.d)) && !paused) {
      paused = true
      socket.pause()
      stdin.once('drain', () => {
        paused = false
        socket.resume()
      })
    }
  }
  socket.on(
    'data',
    lineReader(
      onLine,
      (err) => finish(2, err.message),
      () => (opened ? MAX_FRAME_BYTES : MAX_OPEN_FRAME_BYTES),
    ),
  )
  socket.once('end', () => stdin.end())
}

interface Session {
  stdin: PassThrough
  send(frame: ServerFrame): void
  finish(code: number, message?: string): void
  signal: AbortSignal
  children: Slots
}

async function run(argv: string[], clientCwd: string, s: Session, o: RelayOptions): Promise<void> {
  const [command, ...rest] = argv
  if (!(RELAYED_COMMANDS as readonly string[]).includes(command)) {
    return s.finish(2, `swarm ${command} is not available to a teammate — use swarm send, swarm tasks or the swarm MCP tools`)
  }
  // `swarm send <team> …` and `swarm tasks <team> …` name the team first.
  const team = command === 'send' || command === 'tasks' ? rest[0] : o.team
  const foreign = team !== o.team ? `team ${JSON.stringify(team ?? '')} is not ${JSON.stringify(o.team)}` : foreignIdentity(rest, o)
  if (foreign) return s.finish(2, `a teammate acts only as itself: ${foreign}`)
  const cwd = isDirectorySync(clientCwd) ? clientCwd : o.cwd
  if (command === 'hook') return runRelayedHook(rest, s, o)
  if (command === 'mcp') {
    const output = new Writable({
      write(chunk: Buffer, _enc, done) {
        s.send({ t: 'out', d: data(chunk) })
        done()
      },
    })
    await serveMcp({ team: o.team, name: o.name, cwd, env: o.env, input: s.stdin, output })
    return s.finish(0)
  }
  return runChild(argv, cwd, s, o)
}

async function runRelayedHook(args: string[], s: Session, o: RelayOptions): Promise<void> {
  const event = args[0]
  if (!(SWARM_HOOK_EVENTS as readonly string[]).includes(event ?? '')) return s.finish(2, `unknown hook event ${JSON.stringify(event)}`)
  const chunks: Buffer[] = []
  let size = 0
  for await (const c of s.stdin) {
    size += (c as Buffer).length
    if (size > MAX_HOOK_PAYLOAD_BYTES) return s.finish(2, `a hook payload over ${MAX_HOOK_PAYLOAD_BYTES} bytes is too large — the relay refused it`)
    chunks.push(c as Buffer)
  }
  const reply = await runHook({
    event: event as SwarmHookEvent,
    team: o.team,
    name: o.name,
    agent: o.agent,
    payload: parseHookPayload(Buffer.concat(chunks).toString('utf8')),
    env: o.env,
    signal: s.signal,
  })
  if (reply.stdout) s.send({ t: 'out', d: data(reply.stdout) })
  if (reply.stderr) s.send({ t: 'err', d: data(reply.stderr) })
  s.finish(reply.exitCode)
}

/** `swarm send` / `swarm tasks`: a child swarm, as the teammate, its stdio streamed both ways. */
async function runChild(argv: string[], cwd: string, s: Session, o: RelayOptions): Promise<void> {
  const release = await s.children.take(s.signal)
  if (!release) return // the client left while it waited
  try {
    await spawnChild(argv, cwd, s, o)
  } finally {
    release()
  }
}

async function spawnChild(argv: string[], cwd: string, s: Session, o: RelayOptions): Promise<void> {
  const [node, bin] = swarmArgv()
  const env = { ...o.env, SWARM_TEAM: o.team, SWARM_AGENT_NAME: o.name, SWARM_AGENT_ID: `${o.name}@${o.team}`, SWARM_AGENT_KIND: o.agent }
  const child = launchProcess(node, [bin, ...argv], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] })
  const { stdin, stdout, stderr } = child.child
  if (stdin) s.stdin.pipe(stdin).on('error', () => undefined) // it exited without reading its stdin
  stdout?.on('data', (c: Buffer) => s.send({ t: 'out', d: data(c) }))
  stderr?.on('data', (c: Buffer) => s.send({ t: 'err', d: data(c) }))
  // The client may be gone already (its connection closed while this started): stopped at once then.
  const unlisten = onAbort(s.signal, () => void child.stop())
  const status = await child.exited
  unlisten()
  s.finish(status.error ? 8 : shellExitCode(status))
}

/** The first identity option naming someone else, described; undefined when all are the teammate's own. */
export function foreignIdentity(args: readonly string[], self: RelayIdentity): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].includes('=')
      ? [args[i].slice(0, args[i].indexOf('=')), args[i].slice(args[i].indexOf('=') + 1)]
      : [args[i], undefined]
    const field = IDENTITY_OPTIONS[flag]
    if (!field) continue
    const value = inline ?? args[i + 1]
    if (value !== self[field]) return `${flag} ${JSON.stringify(value ?? '')} is not ${JSON.stringify(self[field])}`
  }
  return undefined
}

function parseFrame(line: string): ClientFrame | undefined {
  try {
    const parsed = ClientFrame.safeParse(JSON.parse(line))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined
  }
}

function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}
