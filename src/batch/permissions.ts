import { evaluatePermission } from '../permissions/rules/evaluate.js'
import { controlPlaneOptions } from '../permissions/rules/control-plane.js'
import { loadPermissionSettings, type LoadedSettings } from '../permissions/rules/settings.js'
import { bashSandboxQuery } from '../permissions/rules/sandbox-query.js'
import type { PermissionModeName } from '../permissions/rules/modes.js'
import type { PermissionCheck } from '../agent/tool.js'

/**
 * The permission check of `swarm batch`, where nobody is there to answer: the settings' rules and
 * the mode decide, and what they would ask is denied with a line saying how to allow it.
 */
export async function batchPermissions(
  repoDir: string,
  env: NodeJS.ProcessEnv,
  mode: PermissionModeName,
): Promise<{ checkPermission: PermissionCheck; sandboxConfig: LoadedSettings['sandbox'] }> {
  const settings = await loadPermissionSettings({ cwd: repoDir, env, cli: { mode } })
  const checkPermission: PermissionCheck = async (tool, input, ctx) => {
    const decision = evaluatePermission({
      toolName: tool.name,
      input,
      kind: tool.kind,
      mode,
      rules: settings.rules,
      cwd: ctx.cwd,
      allowedPaths: settings.additionalDirectories,
      ...controlPlaneOptions(ctx.cwd, env),
      ...(env.HOME ? { home: env.HOME } : {}),
      denyRead: settings.sandbox.denyRead,
      // The worker's own sandbox: where it cannot run, the call is asked — and so denied here.
      ...(tool.name === 'Bash' ? await bashSandboxQuery(ctx.sandbox, input) : {}),
    })
    if (decision.behavior === 'allow') return { behavior: 'allow' }
    if (decision.behavior === 'deny') return { behavior: 'deny', message: decision.reason }
    return {
      behavior: 'deny',
      message: `${decision.reason}; nobody answers permission requests in a batch — allow it with a rule (permissions.allow in .claude/settings.json, e.g. "Bash(npm test:*)") or run the batch with --mode bypassPermissions`,
    }
  }
  return { checkPermission, sandboxConfig: settings.sandbox }
}
