import { describe, expect, it } from 'vitest'
import { processTable, psOutput } from '../../src/process/table.js'

/* Reading the process table with one `ps` run (process/table.ts). */

describe('the process table', () => {
  it('psOutput prints what ps prints, and nothing (never a throw) when ps fails', async () => {
    const out = await psOutput(['-o', 'pid=', '-p', String(process.pid)])
    expect(out.trim()).toBe(String(process.pid))
    expect(await psOutput(['--no-such-option-swarm'])).toBe('')
  })

  it('processTable holds this process with its parent and group', async () => {
    const me = (await processTable()).find((r) => r.pid === process.pid)
    expect(me).toMatchObject({ pid: process.pid, ppid: process.ppid })
    expect(me?.pgid).toBeGreaterThan(0)
  })
})
