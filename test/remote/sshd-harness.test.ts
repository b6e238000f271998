import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isolatedHome, type IsolatedHome } from '../support/home.js'
import { hasSshd, startTestHost, type TestHost } from '../support/sshd.js'

let h: IsolatedHome
let host: TestHost
beforeAll(async () => {
  h = isolatedHome('swarm-sshd-')
  host = await startTestHost(h.base)
})
afterAll(async () => {
  await host?.stop()
  await h?.cleanup()
})

describe.skipIf(!hasSshd)('the test host', () => {
  it(`answers over key-only ssh with its own HOME (netns with delay when possible; the mode is printed)`, async () => {
    const ssh = (...cmd: string[]) =>
      execa('ssh', ['-F', host.sshConfig, '-o', 'BatchMode=yes', host.alias, ...cmd], { reject: false, stdin: 'ignore' })
    const r = await ssh('echo $HOME; command -v swarm')
    expect(r.stdout.split('\n')).toEqual([host.remoteHome, expect.stringContaining('remote-bin/swarm')])
    // A password is never offered: key-only.
    const pw = await execa('ssh', ['-F', host.sshConfig, '-o', 'BatchMode=yes', '-o', 'PubkeyAuthentication=no', host.alias, 'true'], {
      reject: false,
      stdin: 'ignore',
    })
    expect(pw.exitCode).toBe(255)
    if (host.delayMs > 0) {
      const t0 = Date.now()
      await ssh('true')
      // A fresh connection is several round trips of 2 × 50 ms.
      expect(Date.now() - t0).toBeGreaterThan(300)
    }
    console.log(`test host: ${host.mode} ${host.host}`)
  })
})
