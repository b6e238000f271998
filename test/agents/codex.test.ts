import { describeAgentCli } from './suite.js'

describeAgentCli({
  kind: 'codex',
  bin: 'codex',
  model: 'loopback',
  // Escalated: the command leaves Codex's sandbox, which is what Codex asks permission for.
  shell: (cmd, escalate) => ({
    tool: 'exec_command',
    args: { cmd, ...(escalate && { sandbox_permissions: 'require_escalated', justification: 'the test asks for it' }) },
  }),
  mcpSend: (message) => ({ tool: 'SendMessage', namespace: 'mcp__swarm', args: { to: 'team-lead', message } }),
  // Its own sandbox (a permission profile swarm writes); an approved escalated command leaves it.
  inSwarmSandbox: false,
})
