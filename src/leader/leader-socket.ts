/**
 * The running leader's socket, `teams/<team>/socket/leader.sock` (0600, in a 0700 directory): a
 * short-lived `swarm status`/`swarm send` from a shell asks the leader instead of starting a whole
 * CLI, and runs the call itself when no leader listens. One request and one answer per connection,
 * each a line of JSON. Only the holder of the team's leader lock serves it, so a socket file found
 * at start is a dead leader's, and is replaced; anything else at the path is never followed or removed.
 */
import fsp from 'node:fs/promises'
import net from 'node:net'
import { z } from 'zod'
import { UsageError } from '../errors.js'
import { leaderSocketDir, leaderSocketPath } from '../home/paths.js'

export const LeaderRequest = z.object({
  /** The call's arguments after `swarm`. */
  argv: z.array(z.string()).max(16),
  /** The caller's environment: the call runs in it, as it would have in the caller's process. */
  env: z.record(z.string(), z.string()),
})
export type LeaderRequest = z.infer<typeof LeaderRequest>

/** What the call printed and its exit code; `local`: the caller runs the call itself (nothing was done). */
export type LeaderAnswer = { stdout: string; stderr: string; code: number } | { local: true }

export interface LeaderAnswerer {
  answer(request: LeaderRequest): Promise<LeaderAnswer>
  /** The answer to a request that could not be read, in the CLI's error form. */
  fail(err: unknown): LeaderAnswer
}

export interface LeaderSocket {
  readonly path: string
  close(): Promise<void>
}

/** A request is a few kB (argv and an environment); more is not a client of ours. */
const MAX_REQUEST_BYTES = 1 << 20
/** A connection that has not sent its whole request by then is dropped (a client writes it at once). */
const REQUEST_IDLE_MS = 10_000
/** sockaddr_un's sun_path holds 108 bytes on Linux, 104 on macOS, the NUL included. */
const MAX_SOCKET_PATH_BYTES = process.platform === 'linux' ? 107 : 103

/**
 * Listens on the team's leader socket; undefined (and `warn` says why) when it cannot: a path too
 * long for a socket, or something that is not a socket in its place. Call it holding the leader lock.
 */
export async function serveLeaderSocket(
  team: string,
  env: NodeJS.ProcessEnv,
  answerer: LeaderAnswerer,
  warn: (line: string) => void,
): Promise<LeaderSocket | undefined> {
  const dir = leaderSocketDir(team, env)
  const file = leaderSocketPath(team, env)
  if (Buffer.byteLength(file) > MAX_SOCKET_PATH_BYTES) {
    warn(`no leader socket: ${file} is too long for a Unix socket (status and send run on their own)`)
    return undefined
  }
  await fsp.mkdir(dir, { mode: 0o700 }).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  })
  const placed = await fsp.lstat(dir)
  if (!placed.isDirectory()) {
    warn(`no leader socket: ${dir} is not a directory (left as it is)`)
    return undefined
  }
  await fsp.chmod(dir, 0o700)
  const found = await fsp.lstat(file).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  })
  if (found && !found.isSocket()) {
    warn(`no leader socket: ${file} is not a socket (left as it is)`)
    return undefined
  }
  // A dead leader's: this process holds the leader lock, so no other leader serves it.
  if (found) await fsp.unlink(file)
  // Connections still sending their request: closed with the server, so none holds the leader's exit.
  const reading = new Set<net.Socket>()
  const server = net.createServer((conn) => serveConnection(conn, answerer, reading))
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(file, () => {
        server.off('error', reject)
        resolve()
      })
    })
  } catch (err) {
    // EADDRINUSE: something was put at the path since (bind never follows or replaces it).
    warn(`no leader socket: cannot listen on ${file} (${err instanceof Error ? err.message : String(err)})`)
    return undefined
  }
  await fsp.chmod(file, 0o600)
  const ours = (await fsp.lstat(file)).ino
  return {
    path: file,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      for (const conn of reading) conn.destroy()
      await closed
      // Only the socket this leader made: a later leader's would have another inode.
      const now = await fsp.lstat(file).catch(() => undefined)
      if (now?.isSocket() && now.ino === ours) await fsp.unlink(file).catch(() => undefined) // gone meanwhile: nothing to remove
    },
  }
}

function serveConnection(conn: net.Socket, answerer: LeaderAnswerer, reading: Set<net.Socket>): void {
  reading.add(conn)
  conn.once('close', () => reading.delete(conn))
  // A client gone before its answer is written: there is nobody to tell.
  conn.on('error', () => undefined)
  conn.setTimeout(REQUEST_IDLE_MS, () => conn.destroy())
  const chunks: Buffer[] = []
  let size = 0
  const onData = (chunk: Buffer) => {
    const nl = chunk.indexOf(0x0a)
    chunks.push(nl < 0 ? chunk : chunk.subarray(0, nl))
    size += chunk.length
    if (nl < 0 && size <= MAX_REQUEST_BYTES) return
    conn.off('data', onData)
    reading.delete(conn)
    conn.setTimeout(0)
    void respond(conn, answerer, nl < 0 ? undefined : Buffer.concat(chunks).toString('utf8'))
  }
  conn.on('data', onData)
}

async function respond(conn: net.Socket, answerer: LeaderAnswerer, line: string | undefined): Promise<void> {
  let answer: LeaderAnswer
  try {
    if (line === undefined) throw new UsageError(`a leader-socket request longer than ${MAX_REQUEST_BYTES} bytes`)
    let request: unknown
    try {
      request = JSON.parse(line)
    } catch {
      throw new UsageError('a leader-socket request that is not JSON', { hint: 'run swarm status or swarm send; the socket speaks only to them' })
    }
    const parsed = LeaderRequest.safeParse(request)
    if (!parsed.success) throw new UsageError(`a malformed leader-socket request (${parsed.error.issues[0]?.message ?? 'invalid'})`)
    answer = await answerer.answer(parsed.data)
  } catch (err) {
    answer = answerer.fail(err)
  }
  conn.end(JSON.stringify(answer) + '\n')
}
