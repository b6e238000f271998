import fs from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { type AgentTeam, agentTeam, inboxOf, leftovers, panePids } from '../agents/helpers.js'
import { bashCliAdapter, runProbe, writeProjectAdapter } from '../support/bash-cli.js'

/**
 * An agent-CLI teammate's whole process tree in swarm's sandbox: a "CLI" (a shell script, through
 * a user-defined adapter) tries what an approved command of a hostile teammate would — read the
 * team's files, approve its own request, read another teammate's home, rewrite its own hooks,
 * drive the tmux server — and talks back through the relay. The same script with the sandbox
 * turned off is the control: there, the same attempts succeed.
 */
const PROBE = `
out="$PWD/probe.out"
check() { name=$1; shift; if ( "$@" ) >/dev/null 2>>"$PWD/probe.err"; then echo "$name: yes"; else echo "$name: no"; fi >> "$out"; }
# First, while its shim is intact (the control run overwrites it below).
check send-as-self swarm send t team-lead "hello from fay"
check send-as-lead swarm send t team-lead forged --from team-lead
check perms-approve swarm perms approve t x
check read-team-config cat "$SWARM_HOME/teams/t/config.json"
check write-resolved sh -c 'mkdir -p "$SWARM_HOME/teams/t/permissions/resolved" && echo x > "$SWARM_HOME/teams/t/permissions/resolved/evil.json"'
check read-tasks ls "$SWARM_HOME/tasks/t"
check read-other-home cat "$SWARM_HOME/agent-homes/t/other/secret"
check read-own-endpoint cat "$PROBE_HOME/relay/endpoint.json"
check write-own-endpoint sh -c 'echo x > "$PROBE_HOME/relay/endpoint.json"'
check write-own-hooks sh -c 'echo x > "$PROBE_HOME/hooks.json"'
check write-own-shim sh -c 'echo x > "$PROBE_HOME/bin/swarm"'
check write-own-home sh -c 'echo x > "$PROBE_HOME/state.txt"'
check write-cwd sh -c 'echo x > "$PWD/inside.txt"'
check write-outside sh -c 'echo x > "$SWARM_HOME/../outside.txt"'
check write-tmpdir sh -c 'echo x > "$TMPDIR/t.txt"'
check tmux-run-shell tmux run-shell "touch $SWARM_HOME/../escaped"
check unix-socket node -e "require('net').connect(process.env.PROBE_SOCK).on('connect', () => process.exit(0)).on('error', () => process.exit(1))"
check tiocsti perl -e 'open(T, "+<", "/dev/tty") or die; my $c = " "; ioctl(T, 0x5412, $c) or die "$!"'
sleep 600 &
echo done >> "$out"
exec sleep 600
`

const ADAPTER = bashCliAdapter(PROBE, {
  env: { PROBE_HOME: '{{configDir}}', PROBE_SOCK: '{{env:PROBE_SOCK}}' },
  files: [{ path: 'hooks.json', json: { prompt: '{{hook:prompt-submit}}' } }],
})

async function probe(t: AgentTeam, sandbox: boolean): Promise<Record<string, string>> {
  // A Unix socket served outside (as docker's or ssh-agent's would be), in a directory it can read.
  const sock = path.join(t.dir, 'outside.sock')
  const server = net.createServer((c) => c.end())
  await new Promise<void>((resolve) => server.listen(sock, resolve))
  servers.push(server)
  t.env.PROBE_SOCK = sock
  await writeProjectAdapter(t.work, 'probe', ADAPTER)
  if (!sandbox) await fs.writeFile(path.join(t.work, '.claude', 'settings.json'), JSON.stringify({ sandbox: { enabled: false } }))
  expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
  await fs.mkdir(path.join(t.home, 'agent-homes', 't', 'other'), { recursive: true })
  await fs.writeFile(path.join(t.home, 'agent-homes', 't', 'other', 'secret'), 'relay token of another teammate\n')
  return runProbe(t)
}

const servers: net.Server[] = []

describe('an agent-CLI teammate in swarm sandbox', () => {
  let t: AgentTeam
  afterEach(async () => {
    for (const s of servers.splice(0)) s.close()
    await t?.cleanup()
  }, 30_000)

  it('cannot reach the team files, other homes, its own hooks or the tmux server, and talks back through its relay', async () => {
    t = await agentTeam()
    const r = await probe(t, true)
    expect(r).toEqual({
      'read-team-config': 'no',
      'write-resolved': 'no',
      'read-tasks': 'no',
      'read-other-home': 'no',
      'read-own-endpoint': 'yes',
      'write-own-endpoint': 'no',
      'write-own-hooks': 'no',
      'write-own-shim': 'no',
      'write-own-home': 'yes',
      'write-cwd': 'yes',
      'write-outside': 'no',
      'write-tmpdir': 'yes',
      'tmux-run-shell': 'no',
      'unix-socket': 'no',
      tiocsti: 'no',
      'send-as-self': 'yes',
      'send-as-lead': 'no',
      'perms-approve': 'no',
    })
    await expect(fs.stat(path.join(t.dir, 'escaped'))).rejects.toThrow()
    expect(await sandboxOf(t, 'fay')).toBe('sandboxed')
    await expect(fs.stat(path.join(t.home, 'teams', 't', 'permissions', 'resolved', 'evil.json'))).rejects.toThrow()
    const lead = await inboxOf(t, 'team-lead')
    expect(lead.filter((m) => m.text === 'hello from fay').map((m) => m.from)).toEqual(['fay'])
    expect(lead.some((m) => m.text === 'forged')).toBe(false)
    // Its background job dies with it.
    const sids = await panePids(t.env, t.socket, await paneOf(t, 'fay'))
    expect((await t.swarm(['kill', 't', 'fay'])).code).toBe(0)
    expect(await leftovers(sids)).toEqual([])
  }, 60_000)

  it('the control: with the sandbox turned off, the same attempts succeed (the relay still carries swarm send)', async () => {
    t = await agentTeam()
    const r = await probe(t, false)
    expect(r['read-team-config']).toBe('yes')
    expect(r['read-other-home']).toBe('yes')
    expect(r['write-own-hooks']).toBe('yes')
    expect(r['tmux-run-shell']).toBe('yes')
    expect(r['unix-socket']).toBe('yes')
    expect(r.tiocsti).toBe('yes')
    expect(r['send-as-self']).toBe('yes')
    expect(r['send-as-lead']).toBe('no')
    // swarm status says so.
    expect(await sandboxOf(t, 'fay')).toBe('unsandboxed')
    expect((await t.swarm(['status', 't'])).stdout).toMatch(/fay +\S+ \(unsandboxed\)/)
  }, 60_000)
})

async function sandboxOf(t: AgentTeam, name: string): Promise<string | undefined> {
  const r = await t.swarm(['status', 't', '--json'])
  const report = JSON.parse(r.stdout) as { members: Array<{ name: string; sandbox?: string }> }
  return report.members.find((m) => m.name === name)?.sandbox
}

async function paneOf(t: AgentTeam, name: string): Promise<string> {
  const config = JSON.parse(await fs.readFile(path.join(t.home, 'teams', 't', 'config.json'), 'utf8')) as {
    members: Array<{ name: string; tmuxPaneId?: string }>
  }
  return config.members.find((m) => m.name === name)?.tmuxPaneId ?? ''
}
