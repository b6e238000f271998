/**
 * The relay's wire format: one JSON frame a line over a loopback TCP connection. A sandboxed
 * teammate's `swarm relay` opens with its token and the swarm command it wants run, then streams
 * its stdin; the relay (in the teammate's pane wrapper, outside the sandbox) streams back stdout,
 * stderr and the exit code. Frames from the client are untrusted: parsed with zod, bounded in size.
 */
import path from 'node:path'
import { z } from 'zod'
import { atomicWriteJson, ensureDir, readJsonFile } from '../util/fs.js'

export const ClientFrame = z.discriminatedUnion('t', [
  z.object({ t: z.literal('open'), token: z.string(), argv: z.array(z.string()).min(1).max(64), cwd: z.string() }),
  z.object({ t: z.literal('in'), d: z.string() }),
  z.object({ t: z.literal('eof') }),
])
export type ClientFrame = z.infer<typeof ClientFrame>

export type ServerFrame = { t: 'out'; d: string } | { t: 'err'; d: string } | { t: 'exit'; code: number }

export function encodeFrame(frame: ClientFrame | ServerFrame): string {
  return `${JSON.stringify(frame)}\n`
}

export const data = (bytes: Buffer | string): string => Buffer.from(bytes).toString('base64')
export const bytesOf = (d: string): Buffer => Buffer.from(d, 'base64')

/**
 * The `open` frame (token, argv, cwd) is small: a connection that has not shown the token within
 * this many bytes is dropped, so a local process without it cannot make the wrapper hold 8 MiB.
 */
export const MAX_OPEN_FRAME_BYTES = 64 * 1024

/** Where a teammate's relay is announced: `<configDir>/relay/endpoint.json` (read-only inside its sandbox). */
export function relayEndpointFile(configDir: string): string {
  return path.join(configDir, RELAY_DIR, 'endpoint.json')
}

/** The directory of a teammate's home that holds its relay endpoint (its token). */
export const RELAY_DIR = 'relay'

const Endpoint = z.object({ port: z.number().int().min(1).max(65535), token: z.string().min(16) })
export type Endpoint = z.infer<typeof Endpoint>

export async function writeEndpoint(file: string, endpoint: Endpoint): Promise<void> {
  await ensureDir(path.dirname(file))
  await atomicWriteJson(file, endpoint)
}

/** The endpoint, or undefined when no relay was ever announced there; a corrupt file is a CorruptFileError. */
export function readEndpoint(file: string): Promise<Endpoint | undefined> {
  return readJsonFile(file, Endpoint, { noFollow: true })
}
