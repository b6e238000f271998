import { describe, expect, it } from 'vitest'
import { formatOverview } from '../../src/leader/report-format.js'
import type { MemberReport, TeamReport } from '../../src/leader/team-report.js'

const member = (name: string, extra: Partial<MemberReport>): MemberReport => ({
  name,
  agentId: `${name}@crew`,
  pane: '%1',
  state: 'alive',
  status: 'idle',
  unread: 0,
  pendingRequests: 0,
  ...extra,
})

describe('the console overview (/team)', () => {
  it('one short line per teammate — state, window, task — the lead left out, counts first', () => {
    const report: TeamReport = {
      team: 'crew',
      members: [
        member('team-lead', { window: 'crew' }),
        member('alice', { window: 'crew', status: 'working', currentTask: '3' }),
        member('m40', { window: 'crew+5' }),
        member('gone', { state: 'dead', status: 'dead' }),
      ],
      tasks: { pending: 0, inProgress: 1, completed: 0 },
      worktrees: [],
    }
    const lines = formatOverview(report).split('\n')
    expect(lines[0]).toBe('3 teammates: 1 working, 1 idle, 1 dead')
    expect(lines.slice(1).map((l) => l.split(/\s+/).filter(Boolean))).toEqual([
      ['alice', 'working', 'crew', '#3', '-'],
      ['m40', 'idle', 'crew+5', '-', '-'],
      ['gone', 'dead', '-', '-', '-'],
    ])
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(60)
  })
})
