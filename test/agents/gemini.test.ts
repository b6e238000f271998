import { describeAgentCli } from './suite.js'

describeAgentCli({
  kind: 'gemini',
  bin: 'gemini',
  model: 'loopback',
  // Gemini CLI runs in yolo mode; swarm's BeforeTool hook asks the lead before every shell command.
  shell: (cmd) => ({ tool: 'run_shell_command', args: { command: cmd } }),
  mcpSend: (message) => ({ tool: 'mcp_swarm_SendMessage', args: { to: 'team-lead', message } }),
})
