import { describe, expect, it } from 'vitest'
import { PAGE_MAX, overflowWindowName, pageCapacity, placeTeammates, planLayout } from '../../src/backends/tmux-layout.js'

describe('the tmux layout plan', () => {
  it('puts as many as fit beside the leader and the rest on pages of at most PAGE_MAX, oldest first', () => {
    expect(planLayout(220, 60, 64)).toEqual({ leaderColumns: 88, beside: 8 })
    expect(pageCapacity(220, 60)).toBe(PAGE_MAX)
    const places = placeTeammates(220, 60, 64)
    expect(places.slice(0, 8)).toEqual(Array(8).fill(0))
    expect(places.slice(8, 16)).toEqual(Array(8).fill(1))
    expect(places.at(-1)).toBe(7) // 56 on pages of 8
    expect(new Set(places).size).toBe(8)
  })

  it('a small terminal: the leader alone in its window, teammates on pages that still show each readably', () => {
    expect(planLayout(80, 24, 5).beside).toBe(0)
    expect(pageCapacity(80, 24)).toBe(4) // 2 × 2 panes of at least 36 × 10
    expect(placeTeammates(80, 24, 5)).toEqual([1, 1, 1, 1, 2])
    expect(pageCapacity(40, 10)).toBe(1)
  })

  it('names pages <team>+, <team>+2, …', () => {
    expect([1, 2, 7].map((p) => overflowWindowName('crew', p))).toEqual(['crew+', 'crew+2', 'crew+7'])
  })
})
