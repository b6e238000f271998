import fs from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { atomicWriteFile, atomicWriteJson, ensureDir, readFileIfExists, readJsonFile } from '../util/fs.js'
import { RelayItem, itemKey } from './protocol.js'

/*
 * One side's half of the relay's exactly-once (remote/protocol.ts): `out.jsonl`, what this side
 * numbered and sent and the other side has not acked yet (a reconnect resends it); `cursor.json`,
 * the highest seq applied from the other side and the highest the other side acked; `keys.txt`,
 * the identity (itemKey) of every item pruned from `out.jsonl` once acked — so a source scanned
 * again (an inbox keeps its entries, a resolved request its file) never journals it twice. An
 * acked line's body is gone from disk at the next prune (after each scan); its key, ~50 bytes,
 * stays with the team. One process per side writes them (the link's and the relay's leases);
 * inside it, appends and prunes run one at a time.
 */

const Cursor = z.object({ applied: z.number().int().min(0), acked: z.number().int().min(0) })
const Line = z.object({ seq: z.number().int().min(1), item: RelayItem })
type Line = z.infer<typeof Line>

export class Journal {
  private lines: Line[] = []
  private readonly keys = new Set<string>()
  private cursor = { applied: 0, acked: 0 }
  /** File work of this journal, one after the other (a prune rewrites what an append adds to). */
  private chain: Promise<unknown> = Promise.resolve()

  private constructor(private readonly dir: string) {}

  static async open(dir: string): Promise<Journal> {
    const j = new Journal(dir)
    await ensureDir(dir)
    j.cursor = (await readJsonFile(j.cursorFile, Cursor)) ?? j.cursor
    for (const key of ((await readFileIfExists(j.keysFile)) ?? '').split('\n')) if (key) j.keys.add(key)
    const text = (await readFileIfExists(j.outFile)) ?? ''
    for (const raw of text.split('\n')) {
      if (!raw.trim()) continue
      // A line cut by a crash mid-append is the last one and was never sent: dropped.
      const parsed = Line.safeParse(safeJson(raw))
      if (!parsed.success) continue
      j.lines.push(parsed.data)
      j.keys.add(itemKey(parsed.data.item))
    }
    return j
  }

  private get outFile(): string {
    return path.join(this.dir, 'out.jsonl')
  }
  private get cursorFile(): string {
    return path.join(this.dir, 'cursor.json')
  }
  private get keysFile(): string {
    return path.join(this.dir, 'keys.txt')
  }

  get applied(): number {
    return this.cursor.applied
  }

  /** The highest seq the other side acked: every item up to it may be gone from `out.jsonl`. */
  get acked(): number {
    return this.cursor.acked
  }

  /** Whether the item from this source was journaled already. */
  has(item: RelayItem): boolean {
    return this.keys.has(itemKey(item))
  }

  /** Numbers `item` and keeps it (durable before it is sent); its seq, or undefined when it was journaled already. */
  append(item: RelayItem): Promise<number | undefined> {
    return this.serial(async () => {
      const key = itemKey(item)
      if (this.keys.has(key)) return undefined
      const seq = (this.lines.at(-1)?.seq ?? this.cursor.acked) + 1
      await fs.appendFile(this.outFile, `${JSON.stringify({ seq, item })}\n`, { mode: 0o600 })
      this.lines.push({ seq, item })
      this.keys.add(key)
      return seq
    })
  }

  /** The ids of the permission requests this side sent. */
  sentRequests(): string[] {
    return [...this.keys].flatMap((k) => (k.startsWith('pending:') ? [k.slice('pending:'.length)] : []))
  }

  /** What the other side has not applied yet, in order. */
  after(seq: number): Line[] {
    return this.lines.filter((l) => l.seq > seq)
  }

  async setApplied(seq: number): Promise<void> {
    this.cursor.applied = seq
    await this.serial(() => atomicWriteJson(this.cursorFile, this.cursor))
  }

  async setAcked(seq: number): Promise<void> {
    if (seq <= this.cursor.acked) return
    this.cursor.acked = seq
    await this.serial(() => atomicWriteJson(this.cursorFile, this.cursor))
  }

  /**
   * Drops from `out.jsonl` every line the other side acked (it applied them, durably, before its
   * ack): their keys go to `keys.txt` first, then the rest of the lines replace the file — a
   * crash between the two leaves a line in both, which is harmless. Returns how many went.
   */
  prune(): Promise<number> {
    return this.serial(async () => {
      const acked = this.cursor.acked
      const gone = this.lines.filter((l) => l.seq <= acked)
      if (gone.length === 0) return 0
      await fs.appendFile(this.keysFile, gone.map((l) => `${itemKey(l.item)}\n`).join(''), { mode: 0o600 })
      const kept = this.lines.filter((l) => l.seq > acked)
      await atomicWriteFile(this.outFile, kept.map((l) => `${JSON.stringify(l)}\n`).join(''))
      this.lines = kept
      return gone.length
    })
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn)
    this.chain = run.catch(() => undefined)
    return run
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
