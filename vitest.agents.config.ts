import { defineConfig } from 'vitest/config'

/**
 * `npm run test:agents`: the real agent CLIs (installed by scripts/install-agent-clis.mjs) as
 * teammates against the loopback model servers. One file at a time: each starts a real CLI in a
 * real tmux pane, and the machine has two cores.
 */
export default defineConfig({
  test: {
    include: ['test/agents/**/*.test.ts'],
    setupFiles: ['test/support/adapters-installed.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    maxWorkers: 1,
    fileParallelism: false,
    globalSetup: ['test/support/global-setup.ts'],
    env: { NO_COLOR: '1' },
  },
})
