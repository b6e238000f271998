import { defineConfig } from 'vitest/config'
import { UNIT } from './vitest.config.js'

/**
 * `npm run test:trust`: the trust matrix (test/security, docs/security.md "What the tests cover"):
 * every finding through every kind of member — teammate, lead, subagent, fork, batch worker, agent
 * CLI — in every mode, bwrap present and absent; real sandboxes, real processes, real git. Its own
 * suite because it is half of the time of all the others together; .ci/run runs it after `npm test`.
 * The two pure files of test/security stay in `npm test`'s unit project.
 */
export default defineConfig({
  test: {
    include: ['test/security/**/*.test.ts'],
    exclude: [...UNIT, '**/node_modules/**'],
    setupFiles: ['test/support/adapters-installed.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    maxWorkers: 2,
    fileParallelism: true,
    globalSetup: ['test/support/global-setup.ts'],
    env: { NO_COLOR: '1' },
  },
})
