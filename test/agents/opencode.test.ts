import { describeAgentCli } from './suite.js'

describeAgentCli({
  kind: 'opencode',
  bin: 'opencode',
  model: 'loopback',
  // opencode asks before every bash call (its permission is "ask" for bash and edit).
  shell: (cmd) => ({ tool: 'bash', args: { command: cmd, description: 'run a shell command' } }),
  // opencode names an MCP server's tools <server>_<tool>.
  mcpSend: (message) => ({ tool: 'swarm_SendMessage', args: { to: 'team-lead', message } }),
})
