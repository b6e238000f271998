import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { approvedRequest, claudeInputDigest, claudePlanDigest } from '../../src/mailbox/answer-binding.js'

const sha = (s: string) => createHash('sha256').update(s).digest('hex')

/** The digests Claude Code 2.1.332 binds answers with (the code is re-read off the binary in test/interop/claude-binding.test.ts). */
describe('answer binding digests', () => {
  it('input_digest: sha256 of the tool name, NUL, the JSON of the input with keys sorted at every level', () => {
    const input = { description: 'd', command: 'echo hi', nested: { z: 1, a: [{ y: 2, b: 3 }] } }
    expect(claudeInputDigest('Bash', input)).toBe(sha('Bash\0{"command":"echo hi","description":"d","nested":{"a":[{"b":3,"y":2}],"z":1}}'))
    // Key order of the request does not matter; values and the tool name do.
    expect(claudeInputDigest('Bash', { nested: { a: [{ b: 3, y: 2 }], z: 1 }, command: 'echo hi', description: 'd' })).toBe(
      claudeInputDigest('Bash', input),
    )
    expect(claudeInputDigest('Write', input)).not.toBe(claudeInputDigest('Bash', input))
    expect(claudeInputDigest('Bash', { ...input, command: 'echo ho' })).not.toBe(claudeInputDigest('Bash', input))
  })

  it('input_digest: undefined values vanish as in JSON; keys deeper than 32 levels keep their order', () => {
    expect(claudeInputDigest('Bash', { command: 'x', timeout: undefined })).toBe(sha('Bash\0{"command":"x"}'))
    let deep: Record<string, unknown> = { b: 1, a: 2 }
    for (let i = 0; i < 33; i++) deep = { k: deep }
    expect(claudeInputDigest('T', deep)).toBe(sha(`T\0${'{"k":'.repeat(33)}{"b":1,"a":2}${'}'.repeat(33)}`))
  })

  it('planDigest: sha256 of the plan content as mailed; approved_request names the call', () => {
    expect(claudePlanDigest('# Plan\n\n1. x')).toBe(sha('# Plan\n\n1. x'))
    expect(approvedRequest({ toolUseId: 'toolu_1', toolName: 'Bash', input: { command: 'ls' } })).toEqual({
      tool_use_id: 'toolu_1',
      tool_name: 'Bash',
      input_digest: sha('Bash\0{"command":"ls"}'),
    })
  })
})
