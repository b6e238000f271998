#!/usr/bin/env node
import('../dist/cli/main.js').then((m) => m.main(process.argv)).catch((err) => {
  process.stderr.write(`swarm: failed to start — run "npm run build" first (${err && err.message})\n`)
  process.exit(70)
})
