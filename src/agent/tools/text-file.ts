import fs from 'node:fs/promises'

/** How many leading bytes are inspected to tell text from binary. */
const SNIFF_BYTES = 8_000

/** A NUL byte in the first few KB means binary — the heuristic git and grep use. */
export function looksBinary(head: Uint8Array): boolean {
  return head.subarray(0, SNIFF_BYTES).includes(0)
}

/** Reads the first bytes of a file for `looksBinary`. */
export async function readHead(file: string, bytes = SNIFF_BYTES): Promise<Buffer> {
  const handle = await fs.open(file, 'r')
  try {
    const buf = Buffer.alloc(bytes)
    const { bytesRead } = await handle.read(buf, 0, bytes, 0)
    return buf.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
}

/** Human-readable size: 512 B, 3.4 KB, 12.0 MB. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`
  return `${(n / (1024 * 1024)).toFixed(1)} MB`
}
