#!/usr/bin/env node
// Every command has finished its work when main() resolves (long-running ones await inside it):
// exit then, instead of waiting for the event loop to wind down (file handles closing lazily cost
// ~90 ms per command). stdout and stderr are synchronous on POSIX pipes, files and TTYs.
import('../dist/cli/main.js')
  .then((m) => m.main(process.argv))
  .then(
    () => process.exit(process.exitCode ?? 0),
    (err) => {
      process.stderr.write(`swarm: failed to start — run "npm run build" first (${err && err.message})\n`)
      process.exit(70)
    },
  )
