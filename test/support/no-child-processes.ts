import childProcess from 'node:child_process'
import { syncBuiltinESMExports } from 'node:module'

/**
 * Setup of the unit project: a unit test that starts a child process fails at once, naming the
 * call, so `npm run test:unit` stays fast and free of processes (such a test belongs in e2e).
 */
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const) {
  Object.defineProperty(childProcess, name, {
    value: () => {
      throw new Error(`child_process.${name} in a unit test: move the test to the e2e project (vitest.config.ts)`)
    },
  })
}
syncBuiltinESMExports()
