import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { alwaysRules, alwaysRulesPath, rememberAlways } from '../../src/asks/always.js'
import { launchRecordCheck, leadRecordSeal } from '../../src/teams/lead-records.js'
import { createTeam, readTeam } from '../../src/teams/team-store.js'
import { verifyRecord } from '../../src/trust/record-seal.js'
import { loadLeadPublicKey } from '../../src/trust/keys.js'
import { isolatedHome, type IsolatedHome } from '../support/home.js'

/**
 * Issue 23, team records a teammate could forge: the team's "always" rules
 * (`permissions/always-rules.json`, `agents/<name>/always-rules.json`) and resolved records were
 * unsigned, so a teammate able to write the team's files (an approved unconfined command) could
 * allow itself anything. Now the lead seals them with its key; a reader that checks — the member's
 * gate key, or the key an agent CLI's hook was launched with — refuses a file without a valid seal
 * for that team and owner, and keeps it aside (never deleted). The resolved-file case with a real
 * member is in test/permissions/requests/bubbling.test.ts.
 */

let h: IsolatedHome
afterEach(() => h?.cleanup())

const addRule = (rule: string) => [{ type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: rule }], behavior: 'allow', destination: 'session' }]

async function team() {
  h = isolatedHome('swarm-records-')
  await createTeam({ name: 't', cwd: h.project, members: [{ name: 'w1' }, { name: 'w2' }] }, h.env)
  const config = await readTeam('t', h.env)
  const seal = (await leadRecordSeal(config, h.env))!
  const check = (await launchRecordCheck(config, h.env))!
  const refused: string[] = []
  return { seal, check, sealing: { seal, check }, reading: { check, onRefused: (f: string) => refused.push(f) }, refused }
}

describe('the team\'s "always" rules are sealed by team-lead', () => {
  it('a rule the lead kept counts; a file a teammate wrote gives no rule and is kept aside', async () => {
    const t = await team()
    await rememberAlways({ team: 't', member: 'w1' }, addRule('npm test:*'), h.env, t.sealing)
    expect((await alwaysRules('t', 'w1', h.env, t.reading)).map((r) => r.raw)).toEqual(['Bash(npm test:*)'])

    const forged = alwaysRulesPath({ team: 't' }, h.env)
    fs.mkdirSync(path.dirname(forged), { recursive: true })
    fs.writeFileSync(forged, JSON.stringify({ allow: ['Bash(*)'], leadSeal: 'AAAA' }))
    const rules = await alwaysRules('t', 'w1', h.env, t.reading)
    expect(rules.map((r) => r.raw)).toEqual(['Bash(npm test:*)'])
    expect(t.refused).toEqual([forged])
    expect(fs.existsSync(forged)).toBe(false)
    expect(fs.readdirSync(path.dirname(forged)).some((f) => f.startsWith('always-rules.json.corrupt-'))).toBe(true)
  })

  it("w1's sealed rules copied into w2's file do not verify; a member of a sealing team writes none itself", async () => {
    const t = await team()
    await rememberAlways({ team: 't', member: 'w1' }, addRule('rm:*'), h.env, t.sealing)
    const w2 = alwaysRulesPath({ team: 't', member: 'w2' }, h.env)
    fs.mkdirSync(path.dirname(w2), { recursive: true })
    fs.copyFileSync(alwaysRulesPath({ team: 't', member: 'w1' }, h.env), w2)
    expect(await alwaysRules('t', 'w2', h.env, t.reading)).toEqual([])
    // The member's own "always" (no seal, only the check) writes nothing: the lead kept it already.
    await rememberAlways({ team: 't', member: 'w2' }, addRule('curl:*'), h.env, { check: t.check })
    expect(fs.existsSync(w2)).toBe(false)
  })

  it('a seal holds for one team and one kind of record', async () => {
    const t = await team()
    const record = { id: 'permission-1-aaaaaa', agent: 'w1', decision: 'approve' }
    const sealed = { ...record, leadSeal: t.seal('resolved', record) }
    const pub = await loadLeadPublicKey('t', h.env)
    expect(verifyRecord(pub, 'resolved', 't', sealed)).toBe(true)
    expect(verifyRecord(pub, 'resolved', 'other', sealed)).toBe(false)
    expect(verifyRecord(pub, 'always', 't', sealed)).toBe(false)
    expect(verifyRecord(pub, 'resolved', 't', { ...sealed, decision: 'deny' })).toBe(false)
    expect(verifyRecord(pub, 'resolved', 't', record)).toBe(false)
  })
})
