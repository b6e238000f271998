import { defineConfig } from 'vitest/config'

/**
 * Two projects. `unit`: no tmux, no child processes (a setup file refuses them), seconds. `e2e`:
 * everything else — real processes, a real isolated tmux server, whole teams through bin/swarm.js.
 * `npm test` runs both; `npm run test:unit` / `npm run test:e2e` one each. The trust matrix
 * (test/security, but its two pure files) is `npm run test:trust` (vitest.trust.config.ts).
 */
export const UNIT = [
  'test/permissions/rules/**/*.test.ts',
  'test/agent/{definitions,tool,tool-filter,file-tools,search-tools}.test.ts',
  'test/mailbox/{archive,bell,inbox-tail,inbox,fence-token}.test.ts',
  'test/trust/{keys,swarm-scheme,claude-scheme,ledger,gate}.test.ts',
  'test/loopback-model/**/*.test.ts',
  'test/backends/detect.test.ts',
  'test/security/{protected-paths,sandbox-evaluate}.test.ts',
  'test/sandbox/seccomp-program.test.ts',
  'test/terminal/wrap.test.ts',
  'test/backends/tmux-layout-plan.test.ts',
  'test/support/home-guard.test.ts',
  'test/docs/links.test.ts',
]

const shared = {
  testTimeout: 30_000,
  hookTimeout: 30_000,
  env: { NO_COLOR: '1' },
}

export default defineConfig({
  test: {
    // Integration tests start real processes and a real tmux server; two cores cannot run many at once.
    maxWorkers: 2,
    fileParallelism: true,
    globalSetup: ['test/support/global-setup.ts'],
    projects: [
      { test: { ...shared, name: 'unit', include: UNIT, setupFiles: ['test/support/no-child-processes.ts', 'test/support/adapters-installed.ts'] } },
      {
        test: {
          ...shared,
          name: 'e2e',
          setupFiles: ['test/support/adapters-installed.ts'],
          include: ['test/**/*.test.ts'],
          exclude: [...UNIT, 'test/security/**', 'test/interop/**', 'test/agents/**', 'test/pack/**', 'test/remote/**', '**/node_modules/**'],
        },
      },
    ],
  },
})
