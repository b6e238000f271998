import { describeAgentCli } from './suite.js'

describeAgentCli({
  kind: 'pi',
  bin: 'pi',
  model: 'loopback',
  // pi has no sandbox: swarm's extension asks before every bash call.
  shell: (cmd) => ({ tool: 'bash', args: { command: cmd } }),
})
