/*
 * Frames as lines: one JSON value a line over a byte stream (the agent-CLI relay's loopback TCP,
 * the remote relay's SSH channel). The reader splits and bounds; each user parses its own frames.
 */

/** A frame line longer than this ends the connection (a hook payload is a few kB; MCP calls too). */
export const MAX_FRAME_BYTES = 8 * 1024 * 1024

/**
 * Splits a byte stream into frame lines and hands each parsed line to `onLine`; `onError` gets a
 * line longer than `limit()` bytes (the rest of the stream is then ignored).
 */
export function lineReader(
  onLine: (line: string) => void,
  onError: (err: Error) => void,
  limit: () => number = () => MAX_FRAME_BYTES,
): (chunk: Buffer) => void {
  let pending = ''
  let failed = false
  return (chunk) => {
    if (failed) return
    pending += chunk.toString('utf8')
    let nl = pending.indexOf('\n')
    while (nl >= 0) {
      const line = pending.slice(0, nl)
      pending = pending.slice(nl + 1)
      if (line.trim()) onLine(line)
      nl = pending.indexOf('\n')
    }
    if (pending.length > limit()) {
      failed = true
      onError(new Error(`a frame over ${limit()} bytes`))
    }
  }
}
