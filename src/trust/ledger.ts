import fs from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { LEAD_NAME, agentDir } from '../home/paths.js'
import { FILE_MODE, atomicWriteFile, ensureDir, moveAside, readFileIfExists } from '../util/fs.js'

/**
 * The signed orders an inbox's owner acted on, by msg_id, kept on disk (`acted-orders.jsonl` in
 * its agent directory, inside the control plane) so neither a second copy of an order nor a
 * restart makes it act twice. Only the owner's process writes it; claims are serialised.
 */

export const ORDER_LEDGER_FILE = 'acted-orders.jsonl'
/** Past this many ids the file is compacted to the newest half; older orders are refused by time. */
export const MAX_LEDGER_IDS = 10_000

const Line = z.union([z.object({ id: z.string(), t: z.string() }), z.object({ floor: z.string() })])

export function orderLedgerPath(team: string, agent: string, env?: NodeJS.ProcessEnv): string {
  return path.join(agentDir(team, agent, env), ORDER_LEDGER_FILE)
}

/** The leader console's own ledger (spawn requests it honoured), apart from the lead agent's. */
export function consoleLedgerPath(team: string, env?: NodeJS.ProcessEnv): string {
  return path.join(agentDir(team, LEAD_NAME, env), 'console-orders.jsonl')
}

export class OrderLedger {
  private chain: Promise<unknown> = Promise.resolve()

  private constructor(
    readonly file: string,
    private readonly ids: Map<string, string>,
    /** Orders signed at or before this time are refused: their ids were compacted away (or the file was lost to corruption). */
    private floor: string | undefined,
  ) {}

  /**
   * Loads the ledger. A corrupt file is moved aside (never rewritten) and every order signed
   * before now is refused from then on: a damaged memory must not reopen replays.
   */
  static async open(file: string): Promise<OrderLedger> {
    const text = await readFileIfExists(file)
    const ids = new Map<string, string>()
    let floor: string | undefined
    if (text === undefined) return new OrderLedger(file, ids, floor)
    const lines = text.split('\n')
    // A final line without its newline is an append cut short by a crash: its order never ran.
    if (!text.endsWith('\n')) lines.pop()
    for (const raw of lines) {
      if (!raw) continue
      const parsed = parseLine(raw)
      if (!parsed) {
        await moveAside(file)
        return new OrderLedger(file, new Map(), new Date().toISOString())
      }
      if ('floor' in parsed) floor = max(floor, parsed.floor)
      else ids.set(parsed.id, parsed.t)
    }
    return new OrderLedger(file, ids, floor)
  }

  /**
   * True the first time order `id` (signed at `timestamp`) is claimed, once that is on disk;
   * false for an id claimed before, or an order older than the ledger remembers.
   */
  claim(id: string, timestamp: string): Promise<boolean> {
    if (this.ids.has(id) || (this.floor !== undefined && timestamp <= this.floor)) return Promise.resolve(false)
    this.ids.set(id, timestamp)
    const write = this.chain.then(() => this.append(id, timestamp))
    this.chain = write.catch(() => undefined) // the failing claim reports it; later ones still run
    return write.then(() => true)
  }

  private async append(id: string, t: string): Promise<void> {
    await ensureDir(path.dirname(this.file))
    if (this.ids.size > MAX_LEDGER_IDS) return this.compact()
    await fs.appendFile(this.file, JSON.stringify({ id, t }) + '\n', { mode: FILE_MODE })
  }

  /** Keeps the newest half of the ids; the newest dropped time becomes the floor. */
  private async compact(): Promise<void> {
    const sorted = [...this.ids].sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    const dropped = sorted.slice(0, sorted.length - MAX_LEDGER_IDS / 2)
    for (const [id, t] of dropped) {
      this.ids.delete(id)
      this.floor = max(this.floor, t)
    }
    const kept = sorted.slice(dropped.length).map(([id, t]) => JSON.stringify({ id, t }))
    await atomicWriteFile(this.file, [JSON.stringify({ floor: this.floor }), ...kept].join('\n') + '\n')
  }
}

function parseLine(raw: string): z.infer<typeof Line> | undefined {
  try {
    const r = Line.safeParse(JSON.parse(raw))
    return r.success ? r.data : undefined
  } catch {
    return undefined // not JSON: the caller treats the file as corrupt
  }
}

function max(a: string | undefined, b: string): string {
  return a === undefined || b > a ? b : a
}
