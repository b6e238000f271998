import { describeAgentCli } from './suite.js'

describeAgentCli({
  kind: 'opencode',
  bin: 'opencode',
  model: 'loopback',
  // Busy (working) from the prompt's submission; its model request follows, late under load.
  workingLeadMs: 10_000,
  // opencode asks before every bash call (its permission is "ask" for bash and edit).
  shell: (cmd) => ({ tool: 'bash', args: { command: cmd, description: 'run a shell command' } }),
  // opencode names an MCP server's tools <server>_<tool>.
  mcpSend: (message) => ({ tool: 'swarm_SendMessage', args: { to: 'team-lead', message } }),
})
