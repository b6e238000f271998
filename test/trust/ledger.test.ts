import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { MAX_LEDGER_IDS, OrderLedger } from '../../src/trust/ledger.js'
import { useTempDir } from '../support/home.js'

let dir: string
let file: string

useTempDir('swarm-ledger-', (d) => {
  dir = d
  file = path.join(dir, 'agents', 'alice', 'acted-orders.jsonl')
})

const at = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString()

describe('the order ledger', () => {
  it('claims an id once, across reopenings; a torn last line is an order that never ran', async () => {
    const ledger = await OrderLedger.open(file)
    expect(await ledger.claim('a', at(1))).toBe(true)
    expect(await ledger.claim('a', at(1))).toBe(false)
    await fs.appendFile(file, '{"id":"torn","t":"2026')
    const again = await OrderLedger.open(file)
    expect(await again.claim('a', at(1))).toBe(false)
    expect(await again.claim('torn', at(2))).toBe(true)
  })

  it('compacts past its limit and refuses what it forgot by time', async () => {
    const ledger = await OrderLedger.open(file)
    for (let i = 0; i <= MAX_LEDGER_IDS; i++) expect(await ledger.claim(`id-${i}`, at(i))).toBe(true)
    const lines = (await fs.readFile(file, 'utf8')).trim().split('\n')
    expect(lines.length).toBe(MAX_LEDGER_IDS / 2 + 1)
    expect(JSON.parse(lines[0]!)).toEqual({ floor: at(MAX_LEDGER_IDS / 2) })
    const reopened = await OrderLedger.open(file)
    expect(await reopened.claim('id-0', at(0))).toBe(false) // forgotten id, refused by the floor
    expect(await reopened.claim(`id-${MAX_LEDGER_IDS}`, at(MAX_LEDGER_IDS))).toBe(false)
    expect(await reopened.claim('new', at(MAX_LEDGER_IDS + 1))).toBe(true)
  })

  it('a corrupt ledger is kept aside and every order signed before now is refused', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.writeFile(file, '{"id":"a","t":"x"}\nnot json\n')
    const ledger = await OrderLedger.open(file)
    expect(await ledger.claim('old', at(5))).toBe(false)
    expect(await ledger.claim('fresh', new Date(Date.now() + 60_000).toISOString())).toBe(true)
    const names = await fs.readdir(path.dirname(file))
    expect(names.some((n) => n.startsWith('acted-orders.jsonl.corrupt-'))).toBe(true)
  })
})
