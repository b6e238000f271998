import fs from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { atomicWriteJson, ensureDir, readFileIfExists, readJsonFile } from '../util/fs.js'
import { RelayItem, itemKey } from './protocol.js'

/*
 * One side's half of the relay's exactly-once (remote/protocol.ts): `out.jsonl`, what this side
 * numbered and sent (kept until acked: a reconnect resends what the other side did not apply), and
 * `cursor.json`, the highest seq applied from the other side and acked by it. One process per side
 * writes them (the link's and the relay's own locks).
 */

const Cursor = z.object({ applied: z.number().int().min(0), acked: z.number().int().min(0) })
const Line = z.object({ seq: z.number().int().min(1), item: RelayItem })
type Line = z.infer<typeof Line>

export class Journal {
  private lines: Line[] = []
  private readonly keys = new Set<string>()
  private cursor = { applied: 0, acked: 0 }

  private constructor(private readonly dir: string) {}

  static async open(dir: string): Promise<Journal> {
    const j = new Journal(dir)
    await ensureDir(dir)
    j.cursor = (await readJsonFile(j.cursorFile, Cursor)) ?? j.cursor
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

  get applied(): number {
    return this.cursor.applied
  }

  /** Whether the item from this source was journaled already. */
  has(item: RelayItem): boolean {
    return this.keys.has(itemKey(item))
  }

  /** Numbers `item` and keeps it (durable before it is sent); its seq. */
  async append(item: RelayItem): Promise<number> {
    const seq = (this.lines.at(-1)?.seq ?? this.cursor.acked) + 1
    await fs.appendFile(this.outFile, `${JSON.stringify({ seq, item })}\n`, { mode: 0o600 })
    this.lines.push({ seq, item })
    this.keys.add(itemKey(item))
    return seq
  }

  /** The ids of the permission requests this side sent. */
  sentRequests(): string[] {
    return this.lines.flatMap((l) => (l.item.kind === 'pending' ? [l.item.request.id] : []))
  }

  /** What the other side has not applied yet, in order. */
  after(seq: number): Line[] {
    return this.lines.filter((l) => l.seq > seq)
  }

  async setApplied(seq: number): Promise<void> {
    this.cursor.applied = seq
    await atomicWriteJson(this.cursorFile, this.cursor)
  }

  async setAcked(seq: number): Promise<void> {
    if (seq <= this.cursor.acked) return
    this.cursor.acked = seq
    await atomicWriteJson(this.cursorFile, this.cursor)
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
