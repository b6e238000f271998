import { execa } from 'execa'
import { describe, expect, it } from 'vitest'
import { NotFoundError, UsageError } from '../../src/errors.js'
import { matchRequestId, shortRequestId } from '../../src/home/request-id.js'
import { notificationText } from '../../src/asks/notify.js'
import { readResolved, writePending } from '../../src/asks/store.js'
import { createTeam } from '../../src/teams/team-store.js'
import { ensureTeamKeys } from '../../src/trust/keys.js'
import { isolatedHome } from '../support/home.js'
import { BIN, requireBuilt } from '../support/repo.js'

const A = 'perm-m1abcd-7a2a0f'
const B = 'perm-m1abce-7a99cc'
const C = 'plan-m1abcf-0b1c2d'

describe('one request id everywhere: matchRequestId', () => {
  it('takes the full id, the short id shown at the console, or a unique prefix of 4+ characters of either', () => {
    expect(shortRequestId(A)).toBe('7a2a0f')
    expect(shortRequestId('req-1')).toBe('req-1') // no hex tail: the whole id
    for (const q of [A, '7a2a0f', '7a2a', 'perm-m1abcd', '0b1c']) expect(matchRequestId(q, [A, B, C], 'in team t')).toBe(q === '0b1c' ? C : A)
  })

  it('an ambiguous id is a usage error naming every candidate; an unknown or too short one is not found', () => {
    expect(() => matchRequestId('7a', [A, B, C], 'in team t')).toThrow(NotFoundError) // 2 characters: never a prefix
    expect(() => matchRequestId('perm', [A, B, C], 'in team t')).toThrow(UsageError)
    expect(() => matchRequestId('perm', [A, B, C], 'in team t')).toThrow(`request id perm is ambiguous in team t: 7a2a0f (${A}), 7a99cc (${B})`)
    expect(() => matchRequestId('ffff', [A, B, C], 'in team t')).toThrow(NotFoundError)
  })

  it('notifications name the request by the same short id', () => {
    expect(notificationText({ id: A, agent: 'alice', toolName: 'Bash', summary: 'npm test' })).toBe('[7a2a0f] alice asks to use Bash: npm test')
  })
})

describe('swarm perms: the short id it lists is the one approve and deny take', () => {
  it('lists short ids; approves by a short id and by a prefix; refuses an ambiguous prefix (exit 2, candidates named)', async () => {
    requireBuilt('dist/cli/main.js')
    const home = isolatedHome('swarm-ids-')
    try {
      const env = home.env
      await createTeam({ name: 't', cwd: home.home, members: [{ name: 'alice' }] }, env)
      await ensureTeamKeys('t', env)
      for (const id of [A, B, C])
        await writePending(
          't',
          {
            id,
            kind: 'permission',
            agent: 'alice',
            agentId: 'alice@t',
            toolName: 'Bash',
            toolUseId: `tu-${id}`,
            input: { command: 'npm test' },
            description: 'npm test',
            suggestions: [],
            createdAt: Date.now(),
          },
          env,
        )
      const swarm = (...args: string[]) => execa('node', [BIN, ...args], { env, reject: false, stdin: 'ignore' })
      const listed = await swarm('perms', 't')
      expect(listed.exitCode, listed.stderr).toBe(0)
      expect(listed.stdout).toMatch(/^7a2a0f\s+permission\s+alice\s+Bash\s+npm test/m)
      expect(listed.stdout).not.toContain(A)

      expect((await swarm('perms', 'approve', 't', '7a')).exitCode).toBe(3)
      const prefix = await swarm('perms', 'approve', 't', 'perm-')
      expect(prefix.exitCode).toBe(2)
      expect(prefix.stderr.trim()).toBe(`swarm: request id perm- is ambiguous in team t: 7a2a0f (${A}), 7a99cc (${B}) — give more of the id`)

      const approved = await swarm('perms', 'approve', 't', '7a2a0f')
      expect(approved.exitCode, approved.stderr).toBe(0)
      expect(approved.stdout).toContain(`approved alice's Bash request (${A})`)
      expect(await readResolved('t', A, env)).toMatchObject({ decision: 'approve' })
      // Answered twice by its short id: who answered it, not "no such request".
      expect((await swarm('perms', 'deny', 't', '7a2a0f')).exitCode).toBe(4)
      // Now 7a99 names one request.
      expect((await swarm('perms', 'deny', 't', '7a99')).exitCode).toBe(0)
      expect(await readResolved('t', B, env)).toMatchObject({ decision: 'deny' })
      expect((await swarm('perms', 'approve', 't', 'ffff')).exitCode).toBe(3)
    } finally {
      await home.cleanup()
    }
  }, 30_000)
})
