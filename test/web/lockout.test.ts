import { describe, expect, it } from 'vitest'
import { GLOBAL_MAX_FAILURES, LOCKOUT_MS, Lockout, MAX_FAILURES } from '../../src/web/auth.js'

describe('Lockout: per address, with a global cap, both expiring', () => {
  it('an address past MAX_FAILURES is locked until LOCKOUT_MS after its last failure; others are not', () => {
    let now = 1_000_000
    const l = new Lockout(() => now)
    for (let i = 0; i < MAX_FAILURES; i++) l.fail('10.0.0.1')
    expect(l.locked('10.0.0.1')).toBe('address')
    expect(l.locked('10.0.0.2')).toBeUndefined()
    now += LOCKOUT_MS - 1
    expect(l.locked('10.0.0.1')).toBe('address')
    now += 1
    expect(l.locked('10.0.0.1')).toBeUndefined()
  })
  it('GLOBAL_MAX_FAILURES from many addresses lock everyone until the oldest is LOCKOUT_MS old; a success clears only its address', () => {
    let now = 0
    const l = new Lockout(() => now)
    for (let i = 0; i < GLOBAL_MAX_FAILURES; i++) {
      l.fail(`10.0.${i}.1`)
      now += 10
    }
    expect(l.locked('192.168.1.1')).toBe('everyone')
    now = LOCKOUT_MS
    expect(l.locked('192.168.1.1')).toBeUndefined()
    const k = new Lockout(() => now)
    for (let i = 0; i < MAX_FAILURES; i++) k.fail('10.0.0.9')
    k.fail('10.0.0.8')
    k.succeed('10.0.0.8')
    expect(k.locked('10.0.0.9')).toBe('address')
    k.succeed('10.0.0.9')
    expect(k.locked('10.0.0.9')).toBeUndefined()
  })
})
