import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import { z } from 'zod'
import { onExit } from './handlers.js'
import { isAlive } from './liveness.js'
import { procStartTime } from './table.js'

/*
 * A file that names the one live process holding something (a team's leader, a team's relay on a
 * host): its pid and start time, so a reused pid is not mistaken for it, and an `owner` the
 * holder names itself by. Made with link(2), atomic: of two takers one wins, the other is told
 * who holds it. A file left by a dead holder is taken over; the holder's is removed when it exits.
 */

const Record_ = z.object({ pid: z.number().int().positive(), started: z.string().optional(), owner: z.string().optional() })
export type PidLockHolder = z.infer<typeof Record_>

export interface PidLock {
  release(): void
}

/** Held in this process: released by release() or when the process exits. */
const held = new Set<string>()

/** The live holder of `file`, if any. */
export function pidLockHolder(file: string): PidLockHolder | undefined {
  const holder = readLock(file)
  return holder && holderAlive(holder) ? holder : undefined
}

/** Takes `file` for this process, or names its live holder (this process too, when it holds it already). */
export function tryPidLock(file: string, owner?: string): { lock: PidLock } | { holder: PidLockHolder } {
  const started = procStartTime(process.pid)
  const mine: PidLockHolder = { pid: process.pid, ...(started !== undefined && { started }), ...(owner !== undefined && { owner }) }
  const text = JSON.stringify(mine)
  for (let attempt = 0; ; attempt++) {
    const tmp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}`
    fs.writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' })
    try {
      fs.linkSync(tmp, file) // atomic: fails when a lock file exists
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 5) throw err
    } finally {
      fs.rmSync(tmp, { force: true })
    }
    const holder = readLock(file)
    if (holder && holderAlive(holder) && (holder.pid !== process.pid || held.has(file))) return { holder }
    takeOverStale(file, holder)
  }
  held.add(file)
  const disposeExit = onExit(() => removeIfMine(file, text))
  let released = false
  return {
    lock: {
      release() {
        if (released) return
        released = true
        held.delete(file)
        disposeExit()
        removeIfMine(file, text)
      },
    },
  }
}

function holderAlive(holder: PidLockHolder): boolean {
  if (!isAlive(holder.pid)) return false
  return holder.started === undefined || procStartTime(holder.pid) === undefined || procStartTime(holder.pid) === holder.started
}

function readLock(file: string): PidLockHolder | undefined {
  try {
    return Record_.parse(JSON.parse(fs.readFileSync(file, 'utf8')))
  } catch {
    return undefined // missing, or unreadable: nobody can be named as its holder
  }
}

/**
 * Moves a dead holder's file out of the way. It is renamed first and checked: if a new holder
 * replaced it in between, that one's file is put back (and the next attempt sees it running).
 */
function takeOverStale(file: string, stale: PidLockHolder | undefined): void {
  const aside = `${file}.stale-${process.pid}-${randomBytes(4).toString('hex')}`
  try {
    fs.renameSync(file, aside)
  } catch {
    return // gone already: the next attempt links
  }
  const moved = readLock(aside)
  if (moved && stale && moved.pid !== stale.pid && holderAlive(moved)) {
    try {
      fs.linkSync(aside, file)
    } catch {
      // someone holds it now; the next attempt names them
    }
  }
  fs.rmSync(aside, { force: true })
}

function removeIfMine(file: string, text: string): void {
  try {
    if (fs.readFileSync(file, 'utf8') === text) fs.rmSync(file, { force: true })
  } catch {
    // gone (its directory was deleted)
  }
}
