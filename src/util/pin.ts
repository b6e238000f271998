/**
 * A pin: a file's path and the sha256 of its bytes when it was pinned (null: it did not exist).
 * What swarm runs from a file a teammate could change — an adapter, a settings hook's program —
 * is run only while the file still has its pinned bytes.
 */
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import { z } from 'zod'

export const FilePin = z.object({
  file: z.string(),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
})
export type FilePin = z.infer<typeof FilePin>

export function sha256Hex(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex')
}

/** `file` as it is now (a directory or an unreadable file pins as its error, so it never matches a later read). */
export function pinFile(file: string): FilePin {
  try {
    return { file, sha256: sha256Hex(fs.readFileSync(file)) }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    return { file, sha256: code === 'ENOENT' || code === 'ENOTDIR' ? null : sha256Hex(`unreadable: ${code}`) }
  }
}

/** How `pin` differs from the file now ("changed", "created", "removed"), or undefined when it does not. */
export function pinDrift(pin: FilePin): string | undefined {
  const now = pinFile(pin.file).sha256
  if (now === pin.sha256) return undefined
  if (pin.sha256 === null) return `${pin.file} was created`
  return now === null ? `${pin.file} was removed` : `${pin.file} changed`
}
