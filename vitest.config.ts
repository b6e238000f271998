import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Against the real Claude Code binary: `npm run test:interop` (vitest.interop.config.ts).
    exclude: ['test/interop/**', '**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests start real processes and a real tmux server; two cores cannot run many at once.
    maxWorkers: 2,
    fileParallelism: true,
    env: { NO_COLOR: '1' },
  },
})
