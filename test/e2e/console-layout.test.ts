import { describe, expect, it } from 'vitest'
import { hasTmux } from '../support/tmux.js'
// @ts-expect-error: a plain-JavaScript script (scripts/ is not type-checked); its one export is typed below.
import { captureLayout as capture, LONG_COMMAND } from '../../scripts/capture-layout.mjs'
import { LEADER_MIN_COLUMNS, TEAMMATE_MIN_COLUMNS } from '../../src/backends/tmux-layout.js'

interface Pane {
  window: string
  width: number
  height: number
  agent: string
}
const captureLayout = capture as (size: { columns: number; rows: number }) => Promise<{ text: string; panes: Pane[]; leader: string }>

/** Every word of the long command the prompt shows, whole on some line of the leader's pane (tmux cuts words at the pane's edge). */
function unbroken(leader: string): string[] {
  const tokens = new Set(leader.split(/\s+/))
  const shown = LONG_COMMAND.split(' ').slice(0, 7) // the prompt shows the command's summary: its first words
  return shown.filter((w: string) => !tokens.has(w))
}

/** A real team of three attached in a terminal of each size (scripts/capture-layout.mjs, which renders docs/img/layout-120x40.txt). */
describe.skipIf(!hasTmux)('the leader console fits the terminal', () => {
  it('80×24: the leader has the whole width, the teammates wait in the second window, the prompt wraps on words', async () => {
    const { panes, leader, text } = await captureLayout({ columns: 80, rows: 24 })
    const lead = panes.find((p) => p.agent === 'team-lead@demo')!
    expect(lead.width, text).toBe(80)
    expect(panes.filter((p) => p.agent !== lead.agent).map((p) => p.window)).toEqual(['demo+', 'demo+', 'demo+'])
    expect(unbroken(leader), leader).toEqual([])
    expect(leader).toMatch(/\[y\] approve once/)
  }, 120_000)

  it('120×40 and 200×50: the leader at least 60 columns, every teammate stacked beside it, wide enough to read', async () => {
    for (const [columns, rows] of [
      [120, 40],
      [200, 50],
    ]) {
      const { panes, leader, text } = await captureLayout({ columns, rows })
      const lead = panes.find((p) => p.agent === 'team-lead@demo')!
      expect(lead.width, text).toBeGreaterThanOrEqual(LEADER_MIN_COLUMNS)
      const mates = panes.filter((p) => p.agent !== lead.agent)
      expect(mates.map((p) => p.window)).toEqual(['demo', 'demo', 'demo'])
      for (const m of mates) expect(m.width).toBeGreaterThanOrEqual(TEAMMATE_MIN_COLUMNS)
      expect(unbroken(leader), leader).toEqual([])
    }
  }, 240_000)
})
