import { defineConfig } from 'vitest/config'

/** `npm run test:pack`: the packed tarball installed into a temp prefix (needs the npm registry for its dependencies). */
export default defineConfig({
  test: {
    include: ['test/pack/**/*.test.ts'],
    testTimeout: 240_000,
    hookTimeout: 180_000,
    maxWorkers: 1,
    env: { NO_COLOR: '1' },
  },
})
