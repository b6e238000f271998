#!/usr/bin/env node
// CLAUDE_CODE_PROCESS_WRAPPER=<this file>: Claude Code runs each self-spawn (split-pane teammates,
// background sessions) as `<this file> <claude> <args…>`; swarm runs it in its sandbox.
// CommonJS (bin/package.json): the launcher loads the ESM build with import().
'use strict'
import('../dist/adapters/claude-launcher.js')
  .then(({ runClaudeLauncher }) => runClaudeLauncher(process.argv.slice(2), process.env))
  .then((code) => process.exit(code))
