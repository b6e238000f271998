#!/usr/bin/env node
// CLAUDE_CODE_PROCESS_WRAPPER=<this file>: Claude Code runs each self-spawn (split-pane teammates,
// background sessions) as `<this file> <claude> <args…>`; swarm runs it in its sandbox.
const { runClaudeLauncher } = await import('../dist/adapters/claude-launcher.js')
process.exit(await runClaudeLauncher(process.argv.slice(2), process.env))
