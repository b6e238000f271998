import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLoopbackServer, type LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { createTeam } from '../../src/teams/team-store.js'
import { ensureTeamKeys } from '../../src/trust/keys.js'
import { teamDir } from '../../src/home/paths.js'
import { findMarked } from '../../src/process/marker.js'
import { readArgv } from '../../src/process/argv.js'
import { swarmVersion } from '../../src/remote/version.js'
import { sandbox, type Sandbox } from '../e2e/helpers.js'
import { hasSshd, startTestHost, type TestHost } from '../support/sshd.js'
import { requireBuilt } from '../support/repo.js'
import { waitFor } from '../support/wait.js'

/**
 * `swarm hosts install <host>` against Debian's real sshd (test/support/sshd.ts): this checkout
 * packed (scripts/pack.mjs), streamed over the connection, unpacked under the host's state root;
 * from then on every call runs that copy — the handshake, and a member spawned there, which asks
 * its model from the installed package. The host reaches no registry (its namespace has only the
 * link to this side) and has no node_modules beside the copy: the CLI bundle carries them.
 */

const TEAM = 'install-t'
let host: TestHost
let sb: Sandbox
let model: LoopbackServer
let env: NodeJS.ProcessEnv

const swarm = (args: string[]) => sb.swarm(args, { env, timeout: 300_000 })

beforeAll(async () => {
  requireBuilt('dist/remote/install.js')
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

describe.skipIf(!hasSshd)(
  `swarm hosts install, over a real sshd (${process.getuid?.() === 0 ? 'network namespace when the kernel allows' : 'loopback'})`,
  () => {
    const installed = () => path.join(host.remoteSwarmHome, 'swarm-helper', swarmVersion(), 'package', 'bin', 'swarm.js')

    it('before: the host runs the swarm on its PATH', async () => {
      const r = await swarm(['hosts', 'check', host.host, '--json'])
      expect(r.code, r.stderr).toBe(0)
      expect(JSON.parse(r.stdout).bin).not.toBe(installed())
    })

    it('installs the packed tarball there; the handshake then runs the installed copy', async () => {
      const r = await swarm(['hosts', 'install', host.host, '--json'])
      expect(r.code, r.stderr).toBe(0)
      const report = JSON.parse(r.stdout)
      expect(report).toMatchObject({ version: swarmVersion(), bin: installed() })
      console.log(`install: ${report.bytes} bytes in ${report.ms} ms (${host.mode})`)
      expect(fs.existsSync(path.join(path.dirname(installed()), '..', 'node_modules'))).toBe(false)
      const c = await swarm(['hosts', 'check', host.host, '--json'])
      expect(c.code, c.stderr).toBe(0)
      expect(JSON.parse(c.stdout)).toMatchObject({ bin: installed(), versionMatches: true })
    })

    it('a member spawned there runs from the installed copy and asks its model', async () => {
      const r = await swarm(['spawn', TEAM, 'alice', '--host', host.host, '--prompt', 'hello from the lead'])
      expect(r.code, r.stderr).toBe(0)
      await waitFor(
        'alice to ask her model',
        () => model.requests.find((q) => q.agent === 'alice' && JSON.stringify(q.body).includes('hello from the lead')),
        60_000,
        { intervalMs: 200 },
      )
      const there = await findMarked(teamDir(TEAM, { ...env, SWARM_HOME: host.remoteSwarmHome }))
      const argvs = there.map((p) => (readArgv(p.pid) ?? []).join(' '))
      expect(
        argvs.some((a) => a.includes(installed())),
        argvs.join('\n'),
      ).toBe(true)
    })

    it('installing again replaces the copy in place', async () => {
      const r = await swarm(['hosts', 'install', host.host])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toMatch(new RegExp(`swarm ${swarmVersion().replace(/\./g, '\\.')} installed at `))
      expect(fs.existsSync(`${path.resolve(path.dirname(installed()), '..', '..')}.new`)).toBe(false)
    })
  },
)
