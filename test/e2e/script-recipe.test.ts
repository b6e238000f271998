import fs from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, it } from 'vitest'
import { readInbox } from '../../src/mailbox/inbox.js'
import { readArchive } from '../../src/mailbox/archive.js'
import { inboxPath, teamDir } from '../../src/home/paths.js'
import { BIN, useModelSandbox, type Sandbox } from './helpers.js'

/**
 * The README's three commands in a script (no terminal: the team runs in-process, its leader in
 * the background job whose stdin is /dev/null). Its stdin ends at once; the team must live on
 * until `team delete`, and a `swarm send` to a team whose leader is gone must say so.
 */
describe('the create / send / delete recipe in a script', () => {
  let sb: Sandbox
  useModelSandbox({ fallback: { text: 'Noted.' } }, (t) => ({ sb } = t))

  it('the in-process team outlives its closed stdin: send reaches a running teammate, delete stops the leader', async () => {
    const script = `
      set -u
      swarm() { node ${JSON.stringify(BIN)} "$@"; }
      swarm team create refactor --agents researcher,implementer,reviewer --cwd ${JSON.stringify(sb.project)} > create.log 2>&1 &
      leader=$!
      for i in $(seq 150); do grep -q 'input closed' create.log && break; sleep 0.1; done
      swarm send refactor researcher "map every caller of login()"; echo "send=$?"
      sleep 2
      kill -0 $leader 2>/dev/null && echo "leader=alive" || echo "leader=gone"
      swarm team delete refactor --timeout 5 > delete.log 2>&1; echo "delete=$?"
      wait $leader; echo "create=$?"
    `
    const r = await execa('bash', ['-c', script], { env: sb.env, cwd: sb.root, reject: false, timeout: 60_000, stdin: 'ignore' })
    const log = fs.readFileSync(path.join(sb.root, 'create.log'), 'utf8')
    const report = `${r.stdout}\n${r.stderr}\n--- create.log\n${log}`
    expect(r.stdout, report).toContain('sent to researcher')
    expect(r.stdout, report).toContain('send=0')
    expect(r.stdout, report).toContain('leader=alive')
    expect(r.stdout, report).toContain('delete=0')
    expect(r.stdout, report).toContain('create=0')
    expect(log).toContain(
      'input closed: this console reads no more; team refactor keeps running until `swarm team delete refactor` or SIGTERM (answer requests with `swarm perms refactor`)',
    )
    expect(fs.existsSync(teamDir('refactor', sb.env))).toBe(false)
  }, 90_000)

  it('swarm send to an in-process teammate whose leader is not running: exit 7, one line, the message kept in its inbox', async () => {
    const created = await sb.swarm(['team', 'create', 'idle', '--agents', 'alice', '--backend', 'in-process', '--no-start', '--cwd', sb.project])
    expect(created.code, created.stderr).toBe(0)
    const r = await sb.swarm(['send', 'idle', 'alice', 'are you there?'])
    expect(r.code).toBe(7)
    expect(r.stdout).toBe('')
    expect(r.stderr.trim()).toBe(
      "swarm: team idle has no running leader, and alice lives inside it: the message is kept in alice's inbox, unread until the leader runs — start it with: swarm team resume idle",
    )
    const file = inboxPath('idle', 'alice', sb.env)
    const kept = [...(await readArchive(file).catch(() => [])), ...(await readInbox(file))]
    expect(kept.map((m) => m.text)).toContain('are you there?')
    // A team whose teammates run in panes of their own (or not yet anywhere) takes messages as before.
    expect((await sb.swarm(['team', 'create', 'later', '--agents', 'bob', '--no-start', '--cwd', sb.project])).code).toBe(0)
    expect((await sb.swarm(['send', 'later', 'bob', 'when you start'])).code).toBe(0)
  }, 30_000)
})
