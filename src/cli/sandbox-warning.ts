/**
 * `team create` and `spawn` say once, on stderr, when teammates' Bash calls cannot be sandboxed
 * here — so nobody learns it only from a stream of permission prompts.
 */
export async function warnIfNoSandbox(cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const [{ sandboxAvailability }, { loadPermissionSettings }] = await Promise.all([
    import('../sandbox/sandbox.js'),
    import('../permissions/rules/settings.js'),
  ])
  // A settings file that does not parse is reported by the teammate that loads it; no warning here.
  const settings = await loadPermissionSettings({ cwd, env }).catch(() => undefined)
  if (settings && !settings.sandbox.enabled) return
  const available = await sandboxAvailability(settings?.sandbox ?? {}, env)
  if (available.status === 'sandboxed') return
  process.stderr.write(
    `swarm: warning: teammates' Bash runs without the OS sandbox: ${available.reason}; until then every Bash call of a teammate is asked\n`,
  )
}
