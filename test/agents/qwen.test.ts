import { describeAgentCli } from './suite.js'

describeAgentCli({
  kind: 'qwen',
  bin: 'qwen',
  model: 'loopback',
  // Qwen Code runs in its `default` approval mode: its PermissionRequest hook asks the lead before the shell runs.
  shell: (cmd) => ({ tool: 'run_shell_command', args: { command: cmd } }),
  mcpSend: (message) => ({ tool: 'mcp__swarm__SendMessage', args: { to: 'team-lead', message } }),
})
