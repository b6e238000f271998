import fs from 'node:fs'
import path from 'node:path'
import { execa, execaSync } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLoopbackServer, type LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { createTeam } from '../../src/teams/team-store.js'
import { ensureTeamKeys } from '../../src/trust/keys.js'
import { sendTeamMessage } from '../../src/teams/messaging.js'
import { appendMessage, readInbox } from '../../src/mailbox/inbox.js'
import { inboxPath, teamDir } from '../../src/home/paths.js'
import { processesByArgv } from '../../src/process/argv.js'
import { readMemberState } from '../../src/store/member-state.js'
import { sandbox, type Sandbox } from '../e2e/helpers.js'
import { hasSshd, startTestHost, type TestHost } from '../support/sshd.js'
import { requireBuilt } from '../support/repo.js'
import { waitFor } from '../support/wait.js'

/**
 * The relay's journals against Debian's real sshd (test/support/sshd.ts): what both sides acked
 * leaves `out.jsonl` (the files shrink back to nothing), while a connection dropped mid-stream —
 * the far side stopped with items in flight, then the master killed — loses nothing and doubles
 * nothing, either way; the relay left stopped on the host is replaced by its own link's next one.
 * And one relay per team on a host, one link per team and host: a second is refused, exit 4.
 */

const TEAM = 'journal-t'
let host: TestHost
let sb: Sandbox
let model: LoopbackServer
let env: NodeJS.ProcessEnv

const remoteEnv = () => ({ ...env, SWARM_HOME: host.remoteSwarmHome })
const swarm = (args: string[], extra: NodeJS.ProcessEnv = {}) => sb.swarm(args, { env: { ...env, ...extra }, timeout: 120_000 })

beforeAll(async () => {
  requireBuilt('dist/remote/link.js')
  sb = sandbox()
  host = await startTestHost(sb.root)
  model = await startLoopbackServer({ scenario: { fallback: { text: 'Noted.' } }, host: host.localAddress })
  env = { ...sb.env, SWARM_SSH_CONFIG: host.sshConfig, ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: model.url }
  await createTeam({ name: TEAM, cwd: sb.project }, env)
  await ensureTeamKeys(TEAM, env)
}, 60_000)

afterAll(async () => {
  await swarm(['team', 'delete', TEAM, '--force']).catch(() => undefined)
  await host?.stop()
  await model?.close()
  await sb?.cleanup()
})

/** The team's (one) link directory here, and the relay's journal on the host. */
const linkDir = () => {
  const dir = path.join(teamDir(TEAM, env), 'remote')
  return path.join(dir, fs.readdirSync(dir)[0]!)
}
const hostJournal = () => path.join(teamDir(TEAM, remoteEnv()), 'remote-relay')
const lines = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0)
const size = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0)
const linkLog = () => (fs.existsSync(path.join(linkDir(), 'link.log')) ? fs.readFileSync(path.join(linkDir(), 'link.log'), 'utf8') : '(no log)')
const linkPid = () => Number(fs.readFileSync(path.join(linkDir(), 'link.pid'), 'utf8').trim())
/** The team's relay processes on the host (`swarm remote relay --team T --link <this link's id>`, under sshd). */
const relays = () => {
  const id = fs.readFileSync(path.join(linkDir(), 'link.id'), 'utf8').trim()
  return processesByArgv((a) => a.includes('relay') && a.includes(TEAM) && a.includes(id))
}

/** Kills the host's ControlMaster (the drop: every channel through it ends at once). */
async function killMaster(): Promise<void> {
  const dir = path.join(env.SWARM_HOME!, 'ssh')
  let said = ''
  const pid = await waitFor(
    'the master to answer its check',
    () => {
      const socket = fs.readdirSync(dir).find((f) => !f.includes('.'))
      if (!socket) return undefined
      const check = execaSync('ssh', ['-F', host.sshConfig, '-S', path.join(dir, socket), '-O', 'check', 'x'], { reject: false })
      said = `${check.stderr}`
      return Number(/pid=(\d+)/.exec(check.stderr)?.[1]) || undefined
    },
    10_000,
    { intervalMs: 200, output: () => `${said}\n${fs.readdirSync(dir).join(' ')}` },
  )
  process.kill(pid, 'SIGKILL')
}

describe.skipIf(!hasSshd)(
  `the relay's journals, over a real sshd (${process.getuid?.() === 0 ? 'network namespace when the kernel allows' : 'loopback'})`,
  () => {
    it('spawns a member on the host', async () => {
      const r = await swarm(['spawn', TEAM, 'alice', '--host', host.host, '--prompt', 'hello'])
      expect(r.code, r.stderr).toBe(0)
      await waitFor('her state relayed here', async () => (await readMemberState(TEAM, 'alice', env))?.host === host.host, 30_000, {
        output: linkLog,
      })
    })

    it('lead → host: the relay stopped with 10 in flight, the master killed, 10 more sent: 20 there once each, both journals empty again', async () => {
      const [old] = relays()
      expect(old, 'the relay on the host').toBeDefined()
      process.kill(old!.pid, 'SIGSTOP')
      const sent: string[] = []
      const send = async (i: number) =>
        sent.push(...(await sendTeamMessage({ team: TEAM, to: 'alice', text: `down ${i}`, env })).map((m) => m.msg_id!))
      for (let i = 0; i < 10; i++) await send(i)
      const out = path.join(linkDir(), 'out.jsonl')
      let grown = 0
      try {
        await waitFor('10 unacked in the link journal', () => lines(out) >= 10, 10_000, { output: linkLog })
        grown = size(out)
        await killMaster()
      } catch (err) {
        process.kill(old!.pid, 'SIGCONT') // never left stopped on the host past a failure
        throw err
      }
      for (let i = 10; i < 20; i++) await send(i)
      const there = async () => (await readInbox(inboxPath(TEAM, 'alice', remoteEnv()))).filter((m) => m.text.startsWith('down '))
      await waitFor('all 20 on the host', async () => (await there()).length >= 20, 30_000, { output: linkLog })
      // The stopped relay was replaced by the link's next one (SIGTERM, then SIGKILL: it was stopped).
      await waitFor('the stopped relay gone', () => !relays().some((p) => p.pid === old!.pid), 10_000, { output: linkLog })
      await waitFor('the link journal pruned', () => size(out) === 0, 10_000, { output: linkLog })
      expect(grown).toBeGreaterThan(0)
      const ids = (await there()).map((m) => m.msg_id)
      expect(new Set(ids).size).toBe(ids.length)
      expect([...ids].sort()).toEqual([...sent].sort())
      // Scanned again (every 250 ms and on each change), nothing is journaled twice: the keys stay.
      await new Promise((r) => setTimeout(r, 1_000))
      expect(lines(out)).toBe(0)
      expect(lines(path.join(linkDir(), 'keys.txt'))).toBeGreaterThanOrEqual(20)
      expect((await there()).length).toBe(20)
      expect(linkLog()).toMatch(/connected to[\s\S]*relay ended[\s\S]*connected to/)
    })

    it('host → lead: the link stopped with 10 in flight, the master killed: 10 here once each, the host journal empty again', async () => {
      const link = linkPid()
      process.kill(link, 'SIGSTOP')
      const hostsLead = inboxPath(TEAM, 'team-lead', remoteEnv())
      const ids = Array.from({ length: 10 }, (_, i) => `up-${i}-${Date.now()}`)
      try {
        for (const [i, id] of ids.entries()) {
          await appendMessage(hostsLead, { from: 'alice', text: `up ${i}`, timestamp: new Date().toISOString(), msg_id: id })
        }
        const out = path.join(hostJournal(), 'out.jsonl')
        await waitFor('10 unacked in the host journal', () => lines(out) >= 10, 10_000)
        expect(size(out)).toBeGreaterThan(0)
        await killMaster()
      } finally {
        process.kill(link, 'SIGCONT')
      }
      const here = async () => (await readInbox(inboxPath(TEAM, 'team-lead', env))).filter((m) => ids.includes(m.msg_id ?? ''))
      await waitFor('all 10 here', async () => (await here()).length >= 10, 30_000, { output: linkLog })
      await waitFor('the host journal pruned', () => size(path.join(hostJournal(), 'out.jsonl')) === 0, 10_000, { output: linkLog })
      await new Promise((r) => setTimeout(r, 1_000))
      const got = (await here()).map((m) => m.msg_id)
      expect([...got].sort()).toEqual([...ids].sort())
      expect(lines(path.join(hostJournal(), 'keys.txt'))).toBeGreaterThanOrEqual(10)
      expect(linkPid()).toBe(link)
    })

    it('a second relay for the team on the host, for another link, is refused with one line and exit 4; the running one goes on', async () => {
      // The relay the link's last reconnect replaced may still be on its way out.
      const before = await waitFor('one relay on the host', () => (relays().length === 1 ? relays().map((p) => p.pid) : undefined), 10_000, {
        output: () =>
          `${relays()
            .map((p) => `${p.pid}: ${p.argv.join(' ')}`)
            .join('\n')}\n${linkLog()}`,
      })
      const r = await execa(
        'ssh',
        ['-F', host.sshConfig, '-o', 'BatchMode=yes', host.alias, `swarm remote relay --team ${TEAM} --link someone-else`],
        {
          reject: false,
          input: '',
          timeout: 30_000,
        },
      )
      expect(r.exitCode).toBe(4)
      expect(r.stderr.trim().split('\n')[0]).toMatch(
        new RegExp(`team ${TEAM} is relayed on this host already, for another link \\(relay pid ${before[0]}\\)`),
      )
      expect(relays().map((p) => p.pid)).toEqual(before)
      // …and the running one still relays.
      const [m] = await sendTeamMessage({ team: TEAM, to: 'alice', text: 'after the refusal', env })
      await waitFor(
        'it on the host',
        async () => (await readInbox(inboxPath(TEAM, 'alice', remoteEnv()))).some((x) => x.msg_id === m!.msg_id),
        15_000,
        {
          output: linkLog,
        },
      )
    })

    it('a second link for the team and host is refused with one line and exit 4', async () => {
      const r = await swarm(['remote', 'link', '--team', TEAM, '--host', host.host])
      expect(r.code).toBe(4)
      expect(r.stderr.trim().split('\n')[0]).toMatch(
        new RegExp(`team ${TEAM} already has a link to ${host.host.replace(/[.]/g, '\\.')} running \\(pid ${linkPid()}\\)`),
      )
    })
  },
)
