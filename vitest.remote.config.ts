import { defineConfig } from 'vitest/config'

/**
 * `npm run test:remote`: teammates on another machine, against Debian's real sshd started by the
 * tests (test/support/sshd.ts) in a network namespace with 50 ms of delay each way. One file at a
 * time: each starts its own sshd, tmux servers on both sides and whole teams, and the machine has two cores.
 * remote-codex.test.ts runs the pinned Codex CLI from $SWARM_AGENT_CLI_CACHE, which `npm run
 * test:agents` installs (.ci/run runs it first); without it that file is skipped, naming the cache.
 */
export default defineConfig({
  test: {
    include: ['test/remote/**/*.test.ts'],
    setupFiles: ['test/support/adapters-installed.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    maxWorkers: 1,
    fileParallelism: false,
    globalSetup: ['test/support/global-setup.ts'],
    env: { NO_COLOR: '1' },
  },
})
