import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describeAgentCli } from './suite.js'

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'codex-yaml.yaml')

// The same checks, with the CLI known to swarm only through .claude/swarm-agents/codex-yaml.yaml.
describeAgentCli({
  kind: 'codex-yaml',
  bin: 'codex',
  model: 'loopback',
  shell: (cmd, escalate) => ({
    tool: 'exec_command',
    args: { cmd, ...(escalate && { sandbox_permissions: 'require_escalated', justification: 'the test asks for it' }) },
  }),
  async setup(t) {
    const dir = path.join(t.work, '.claude', 'swarm-agents')
    await fs.mkdir(dir, { recursive: true })
    await fs.copyFile(FIXTURE, path.join(dir, 'codex-yaml.yaml'))
  },
})
