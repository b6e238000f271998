import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { BackendType } from '../../src/backends/types.js'
import { readInbox } from '../../src/mailbox/inbox.js'
import { parseStructured } from '../../src/mailbox/messages.js'
import { inboxPath } from '../../src/home/paths.js'
import { isAlive, waitForExit } from '../../src/process/liveness.js'
import { type Harness, TEAMMATE, makeHarness, readJson } from './harness.js'
import { waitFor } from '../support/wait.js'
import { hasTmux } from '../support/tmux.js'

/** Arguments and paths a shell would interpret; every backend must pass them through untouched. */
const NASTY = [
  'a b',
  'semi;colon',
  '$(touch PWNED)',
  "quote's",
  'dq"x',
  'new\nline',
  '#{pane_id}',
  '~',
  'back\\slash',
  '`id`',
  '',
  '%hidden',
  '{x}',
  '* ?',
]

const backends: Array<{ type: BackendType; skip: boolean }> = [
  { type: 'tmux', skip: !hasTmux },
  { type: 'iterm2', skip: false },
  { type: 'in-process', skip: false },
]

for (const { type, skip } of backends) {
  describe.skipIf(skip)(`TeammateExecutor contract: ${type}`, () => {
    let h: Harness
    let team: string
    let n = 0
    beforeEach(async () => {
      h = makeHarness(type)
      team = `t${++n}`
      if (h.executor.kind === 'pane') await h.executor.ensureSession(team, { argv: ['sleep', '600'], cwd: process.cwd() })
    })
    afterEach(async () => {
      await h.cleanup()
    })

    const file = (name: string) => path.join(h.env.SWARM_HOME!, `${name}.json`)

    it('runs the command with its argv, cwd and environment uninterpreted', async () => {
      const cwd = path.join(h.env.SWARM_HOME!, "dir with 'quotes'; $(x) #1")
      fs.mkdirSync(cwd, { recursive: true })
      // A marker of this run only: other processes on the machine may hold an `sk-` of their own.
      const marker = `sk-${process.pid}-${Date.now()}`
      const secret = `${marker}'$(touch PWNED2)';"x"\n\`id\``
      const out = file('record')
      const spawned = await h.start(team, 'rec.or-der_1', ['record', out, ...NASTY], { cwd, env: { SWARM_TEST_SECRET: secret } })
      expect(spawned.agentId).toBe(`rec.or-der_1@${team}`)
      const seen = await waitFor('the teammate to record its argv', () => readJson(out), 15_000)
      expect(seen.argv).toEqual(NASTY)
      expect(fs.realpathSync(seen.cwd)).toBe(fs.realpathSync(cwd))
      expect(seen.env.SWARM_TEST_SECRET).toBe(secret)
      expect(fs.existsSync(path.join(cwd, 'PWNED'))).toBe(false)
      expect(fs.existsSync(path.join(process.cwd(), 'PWNED'))).toBe(false)
      // The secret is in no running process's argv.
      const ps = execFileSync('ps', ['-A', '-o', 'args='], { encoding: 'utf8' })
      expect(ps).not.toContain(marker)
    })

    it('reports alive, then the exit code within 2 seconds of the exit', async () => {
      const out = file('alive')
      await h.start(team, 'alive', ['record', out])
      const exitedAtFile = file('exited-at')
      await h.start(team, 'quitter', ['exit', '3', exitedAtFile])
      const ids = [`alive@${team}`, `quitter@${team}`, `ghost@${team}`]
      await waitFor('exit to be reported', async () => (await h.executor.status(ids)).get(`quitter@${team}`)?.state === 'exited', 10_000)
      expect(Date.now() - Number(fs.readFileSync(exitedAtFile, 'utf8'))).toBeLessThan(2_000)
      const status = await h.executor.status(ids)
      expect(status.get(`alive@${team}`)?.state).toBe('alive')
      expect(status.get(`quitter@${team}`)).toEqual({ state: 'exited', code: 3 })
      expect(status.get(`ghost@${team}`)?.state).toBe('dead')
      expect(await h.executor.isActive(`alive@${team}`)).toBe(true)
      expect(await h.executor.isActive(`quitter@${team}`)).toBe(false)
    })

    it('kill ends the whole process tree, grandchild included, and status says so', async () => {
      const out = file('tree')
      await h.start(team, 'tree', ['tree', out])
      const { pid, grandchild } = await waitFor('the tree fixture', () => readJson(out), 15_000)
      h.track(pid, grandchild)
      expect(isAlive(pid) && isAlive(grandchild)).toBe(true)
      await h.executor.kill(`tree@${team}`)
      expect(await waitForExit([pid, grandchild], 10_000)).toBe(true)
      expect((await h.executor.status([`tree@${team}`])).get(`tree@${team}`)?.state).not.toBe('alive')
    })

    it('kill escalates to SIGKILL for a teammate that ignores SIGTERM', async () => {
      const out = file('stubborn')
      await h.start(team, 'stubborn', ['ignore-term', out])
      const pid = Number(await waitFor('the pid', () => fs.existsSync(out) && fs.readFileSync(out, 'utf8'), 15_000))
      h.track(pid)
      await h.executor.kill(`stubborn@${team}`)
      expect(await waitForExit([pid], 10_000)).toBe(true)
    })

    it('killMany ends every tree it names at once, an unknown id included, and leaves the others running', async () => {
      const names = ['k1', 'k2', 'k3', 'k4', 'k5', 'k6']
      for (const name of names) await h.start(team, name, ['tree', file(name)])
      await h.start(team, 'keep', ['record', file('keep')])
      const trees = await Promise.all(names.map((name) => waitFor(`${name}'s tree`, () => readJson(file(name)), 15_000)))
      const pids = trees.flatMap((t) => [t.pid, t.grandchild])
      h.track(...pids)
      await waitFor('keep to start', () => readJson(file('keep')), 15_000)
      await h.executor.killMany([...names.map((x) => `${x}@${team}`), `ghost@${team}`])
      expect(await waitForExit(pids, 10_000)).toBe(true)
      const after = await h.executor.status([...names, 'keep'].map((x) => `${x}@${team}`))
      expect([...after].filter(([, s]) => s.state === 'alive').map(([id]) => id)).toEqual([`keep@${team}`])
    }, 60_000)

    it('spawns 16 teammates one after another and 16 at once, losing none', async () => {
      const names = Array.from({ length: 16 }, (_, i) => `seq${i}`)
      for (const name of names) await h.start(team, name, ['record', file(name)])
      const burst = Array.from({ length: 16 }, (_, i) => `par${i}`)
      const spawned = await Promise.all(burst.map((name) => h.start(team, name, ['record', file(name)])))
      const ids = [...names, ...burst].map((x) => `${x}@${team}`)
      if (type !== 'in-process') expect(new Set(spawned.map((s) => s.paneId)).size).toBe(16)
      for (const name of [...names, ...burst]) await waitFor(`${name} to start`, () => readJson(file(name)), 10_000)
      const status = await h.executor.status(ids)
      expect([...status.values()].every((s) => s.state === 'alive')).toBe(true)
      await Promise.all(ids.map((id) => h.executor.kill(id)))
      const after = await h.executor.status(ids)
      expect([...after].filter(([, s]) => s.state === 'alive')).toEqual([])
    }, 60_000)

    it('sendMessage puts the message in the inbox; terminate asks and waits for the exit', async () => {
      const inbox = inboxPath(team, 'polite', h.env)
      await h.start(team, 'polite', ['obey-shutdown', inbox])
      await h.executor.sendMessage(`polite@${team}`, { from: 'team-lead', text: 'hello' })
      const outcome = await h.executor.terminate(`polite@${team}`, 'done', { timeoutMs: 5_000 })
      expect(outcome).toEqual({ outcome: 'exited' })
      const messages = await readInbox(inbox)
      expect(messages[0]).toMatchObject({ from: 'team-lead', text: 'hello' })
      const request = parseStructured(messages[1].text)
      expect(request).toMatchObject({ type: 'shutdown_request', from: 'team-lead', reason: 'done' })
      expect(await h.executor.isActive(`polite@${team}`)).toBe(false)
    })

    it('terminate reports an approval whose teammate exits within the same poll', async () => {
      // Claude Code answers shutdown_approved and exits at once: the exit must not hide the answer.
      for (const name of ['agree1', 'agree2', 'agree3']) {
        await h.start(team, name, ['approve-shutdown', inboxPath(team, name, h.env), inboxPath(team, 'team-lead', h.env), name])
        expect(await h.executor.terminate(`${name}@${team}`, 'done', { timeoutMs: 5_000 })).toEqual({ outcome: 'approved' })
      }
    }, 60_000)

    it('terminate times out on a teammate that ignores the request, and leaves it running', async () => {
      const out = file('deaf')
      await h.start(team, 'deaf', ['record', out])
      await waitFor('the teammate', () => readJson(out), 15_000)
      expect(await h.executor.terminate(`deaf@${team}`, undefined, { timeoutMs: 300 })).toEqual({ outcome: 'timeout' })
      expect(await h.executor.isActive(`deaf@${team}`)).toBe(true)
      await h.executor.kill(`deaf@${team}`)
      expect(await h.executor.isActive(`deaf@${team}`)).toBe(false)
    })
  })
}

// Keeps the import used when every backend is skipped.
void TEAMMATE
