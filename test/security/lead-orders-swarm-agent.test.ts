import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { readMemberState } from '../../src/store/member-state.js'
import { inboxPath } from '../../src/home/paths.js'
import { createEntry } from '../../src/mailbox/entry.js'
import { appendMessage, readInbox } from '../../src/mailbox/inbox.js'
import { encodeStructured, parseStructured } from '../../src/mailbox/messages.js'
import type { InboxMessage } from '../../src/mailbox/types.js'
import { sendTeamMessage } from '../../src/teams/messaging.js'
import { recipientClaudeKey, signClaudeLeadEntry } from '../../src/trust/claude-scheme.js'
import { loadLeadPrivateKey } from '../../src/trust/keys.js'
import { claudeVerifyKeyFor, leadSigner, signEntry } from '../../src/trust/sign.js'
import { type ChildAgent, type Fixture, makeTeam, startSwarmAgent, useAgentTeam } from '../support/agent-team.js'
import { BIN } from '../support/repo.js'
import { waitFor } from '../support/wait.js'
import { ALL_MODES } from './sandbox-helpers.js'

/**
 * swarm's own teammate (a real `swarm agent` process) through the one lead-order gate: a signed
 * order counts once, for the inbox it was signed for; Claude Code's `lead_sig` only with a key the
 * teammate was started with, never the team's own; after `swarm team rekey` the old key counts in
 * neither scheme.
 */

const TEAM = 'lo'
let fx: Fixture
useAgentTeam({
  team: (l) =>
    makeTeam(
      TEAM,
      l,
      [
        { name: 'w1', maxCostUsd: 1 },
        { name: 'w2', maxCostUsd: 1 },
      ],
      'swarm-lo-',
    ),
  onReady: (t) => ({ fx } = t),
})

const budgetOf = async (name: string) => (await readMemberState(TEAM, name, fx.env))?.budget?.maxCostUsd
const budget = (addUsd: number) =>
  encodeStructured({ type: 'budget_update', from: 'team-lead', addUsd, scope: 'member', timestamp: new Date().toISOString() })

/** The permission mode the teammates of the current test run in. */
let mode: (typeof ALL_MODES)[number] = 'default'

/** A teammate process in `mode` (its budget $1, from the roster), once it is idle. */
async function start(name: string, args: string[] = []): Promise<ChildAgent> {
  const a = startSwarmAgent(fx, TEAM, name, ['--mode', mode, ...args])
  await waitFor(`${name} idle`, async () => (await readMemberState(TEAM, name, fx.env))?.status === 'idle', 15_000, { output: a.output })
  return a
}

async function waitBudget(a: ChildAgent, name: string, usd: number): Promise<void> {
  await waitFor(`${name}'s budget at $${usd}`, async () => (await budgetOf(name)) === usd, 10_000, { output: a.output })
}

/** Waits for the `n`th refusal line of `kind` in the agent's output. */
async function waitRefusals(a: ChildAgent, kind: 'UNVERIFIED' | 'REPLAYED', n: number): Promise<void> {
  const re = new RegExp(`ignored budget_update from team-lead: ${kind}`, 'g')
  await waitFor(`${n} ${kind} refusal(s)`, () => (a.output().match(re)?.length ?? 0) >= n, 10_000, { output: a.output })
}

/** The budget_update as it sits in `name`'s inbox. */
async function orderIn(name: string): Promise<InboxMessage> {
  const found = (await readInbox(inboxPath(TEAM, name, fx.env))).find((m) => parseStructured(m.text)?.type === 'budget_update')
  expect(found?.leadSig).toBeTypeOf('string')
  return found!
}

/** The attacker's copy: exactly what the lead signed, with both signatures, unread. */
const copyOf = (m: InboxMessage): InboxMessage => ({
  from: m.from,
  text: m.text,
  timestamp: m.timestamp,
  msg_id: m.msg_id,
  leadSig: m.leadSig,
  lead_sig: m.lead_sig,
})

/**
 * Every mode, bwrap present and absent (the matrix): the gate judges an order before any
 * permission mode or sandbox has a say, so none of them may change what counts.
 */
const VARIANTS = ALL_MODES.flatMap((m) => [[m, 'bwrap present'] as const, [m, 'bwrap absent'] as const])
describe.each(VARIANTS)('lead orders at a swarm teammate (%s, %s)', (variantMode, bwrap) => {
  beforeEach(async () => {
    mode = variantMode
    await fs.mkdir(path.join(fx.cwd, '.claude'), { recursive: true })
    await fs.writeFile(
      path.join(fx.cwd, '.claude', 'settings.json'),
      JSON.stringify({ sandbox: bwrap === 'bwrap absent' ? { bwrapPath: '/nonexistent/bwrap' } : {} }),
    )
  })

  it("a signed budget_update appended again is REPLAYED (also by a restarted process); copied into another teammate's inbox it is UNVERIFIED", async () => {
    let w1 = await start('w1')
    const w2 = await start('w2')
    await sendTeamMessage({ team: TEAM, to: 'w1', text: budget(5), env: fx.env })
    await waitBudget(w1, 'w1', 6)
    const order = await orderIn('w1')
    expect(order.lead_sig).toBeTypeOf('string')

    // Copied to w2: neither signature was made for w2 (swarm's names w1; the lead_sig is w1's derived key's).
    await appendMessage(inboxPath(TEAM, 'w2', fx.env), copyOf(order))
    await waitRefusals(w2, 'UNVERIFIED', 1)

    // Replayed to w1 while it is down (its watcher drops a msg_id it has seen while it runs): the
    // mailbox keeps one entry per msg_id, so the attacker rewrites the file with the copy unread.
    await w1.kill('SIGTERM')
    const file = inboxPath(TEAM, 'w1', fx.env)
    const others = (await readInbox(file)).filter((m) => m.msg_id !== order.msg_id)
    await fs.writeFile(`${file}.attack`, JSON.stringify([...others, { ...copyOf(order), read: false }]))
    await fs.rename(`${file}.attack`, file)
    w1 = await start('w1', ['--resume']) // --resume keeps the raised budget: a replay would raise it again
    await waitRefusals(w1, 'REPLAYED', 1)
    expect(await budgetOf('w1')).toBe(6)
    expect(await budgetOf('w2')).toBe(1)
  })

  it("without --lead-verify-key, a lead_sig made with the team's own key (or the teammate's derived one) is UNVERIFIED", async () => {
    const w1 = await start('w1')
    const key = await loadLeadPrivateKey(TEAM, fx.env)
    const bare = createEntry({ from: 'team-lead', text: budget(5) })
    const claudeField = (k: typeof key, e: InboxMessage) => signClaudeLeadEntry(k, { ...e, msg_id: e.msg_id! })
    await appendMessage(inboxPath(TEAM, 'w1', fx.env), { ...bare, lead_sig: claudeField(key, bare) })
    const derived = createEntry({ from: 'team-lead', text: budget(7) })
    await appendMessage(inboxPath(TEAM, 'w1', fx.env), { ...derived, lead_sig: claudeField(recipientClaudeKey(key, 'w1'), derived) })
    await waitRefusals(w1, 'UNVERIFIED', 2)
    expect(await budgetOf('w1')).toBe(1)
  })

  it('after swarm team rekey, an order signed with the old key counts in neither scheme; the new keys count in both', async () => {
    const old = await loadLeadPrivateKey(TEAM, fx.env)
    const w1 = await start('w1', ['--lead-verify-key', claudeVerifyKeyFor(old, 'w1')])
    const inbox = inboxPath(TEAM, 'w1', fx.env)
    /** A budget_update for w1 signed with `key` in one scheme only. */
    const signedIn = (scheme: 'leadSig' | 'lead_sig', key: typeof old, usd: number): InboxMessage => {
      const e = signEntry(createEntry({ from: 'team-lead', text: budget(usd) }), leadSigner(key), 'w1')
      const { leadSig, lead_sig, ...rest } = e
      return scheme === 'leadSig' ? { ...rest, leadSig } : { ...rest, lead_sig }
    }
    // Before: each scheme counts (lead_sig: the teammate holds its Claude-format key).
    await appendMessage(inbox, signedIn('lead_sig', old, 1))
    await waitBudget(w1, 'w1', 2)

    const rekey = await run(['team', 'rekey', TEAM])
    expect(rekey.code, rekey.out).toBe(0)
    expect(rekey.out).toContain('handed the new public key to: w1')
    await waitFor('w1 to switch keys', () => w1.output().includes('new lead key'), 10_000, { output: w1.output })

    await appendMessage(inbox, signedIn('leadSig', old, 10))
    await appendMessage(inbox, signedIn('lead_sig', old, 20))
    await waitRefusals(w1, 'UNVERIFIED', 2)
    expect(await budgetOf('w1')).toBe(2)

    const next = await loadLeadPrivateKey(TEAM, fx.env)
    await appendMessage(inbox, signedIn('lead_sig', next, 1))
    await waitBudget(w1, 'w1', 3)
    await appendMessage(inbox, signedIn('leadSig', next, 1))
    await waitBudget(w1, 'w1', 4)
  })
})

function run(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: fx.env, cwd: fx.cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    child.on('exit', (code) => resolve({ code, out }))
  })
}
