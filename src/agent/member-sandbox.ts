import { agentHomesRoot, sentRoot } from '../home/paths.js'
import { controlPlaneOptions } from '../permissions/rules/control-plane.js'
import { createBashSandbox } from '../sandbox/sandbox.js'
import type { SandboxConfig } from '../sandbox/settings.js'
import type { BashSandbox } from '../sandbox/types.js'

/**
 * The Bash sandbox of one member — a teammate, the lead, a batch worker: the control plane, what
 * the leads sent and CLI teammates' homes hidden; settings and agent definitions read-only;
 * writable only its cwd, its private TMPDIR and `writableDirs`. Subagents and forks use their parent's.
 */
export function memberSandbox(o: {
  config: SandboxConfig
  cwd: string
  env: NodeJS.ProcessEnv
  /** Names its private temp directory. */
  label: string
  writableDirs(): Promise<string[]> | string[]
}): BashSandbox {
  const cp = controlPlaneOptions(o.cwd, o.env)
  return createBashSandbox({
    config: o.config,
    env: o.env,
    label: o.label,
    // Beside the control plane: what the leads sent, and CLI teammates' homes (their relay tokens).
    hidden: [...cp.controlPlaneDirs, sentRoot(o.env), agentHomesRoot(o.env)],
    readOnly: cp.protectedPaths,
    writableDirs: o.writableDirs,
  })
}
