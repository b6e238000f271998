import { defineConfig } from 'vitest/config'

/** `npm run test:interop`: the tests against the real Claude Code binary (scripts/interop.mjs fetches it). */
export default defineConfig({
  test: {
    include: ['test/interop/**/*.test.ts'],
    setupFiles: ['test/support/adapters-installed.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Each test runs several Claude Code processes; one file at a time on two cores.
    maxWorkers: 1,
    fileParallelism: false,
    // The build, the run's own TMPDIR/HOME and the home guard (test/support/global-setup.ts).
    globalSetup: ['test/support/global-setup.ts'],
    env: { NO_COLOR: '1' },
  },
})
