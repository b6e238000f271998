#!/usr/bin/env node
// CLAUDE_CODE_TEAMMATE_COMMAND=<this file>: a Claude Code lead then starts swarm's agent as its
// teammate, with its own teammate argv (`--agent-id n@t --agent-name n --team-name t --lead-verify-key …`).
'use strict'
process.argv.splice(2, 0, 'agent')
require('./swarm.js')
