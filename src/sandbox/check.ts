import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { runCommand } from '../process/launch.js'
import { createBashSandbox, sandboxAvailability } from './sandbox.js'
import { defaultSandboxConfig, type SandboxConfig } from './sandbox-settings.js'

/**
 * `swarm doctor`'s sandbox check: not "is bwrap installed" but "does it confine here" — one real
 * sandboxed command that must write in its directory, fail to write beside it and not see a
 * hidden directory.
 */
export interface SandboxCheck {
  ok: boolean
  /** Turned on in the settings of the current directory. */
  enabled: boolean
  detail: string
}

export async function checkSandbox(env: NodeJS.ProcessEnv, config: SandboxConfig = defaultSandboxConfig()): Promise<SandboxCheck> {
  const available = await sandboxAvailability(config, env)
  if (available.status !== 'sandboxed') return { ok: false, enabled: config.enabled, detail: available.reason }
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-doctor-')))
  try {
    const [work, hidden] = [path.join(base, 'work'), path.join(base, 'teams')]
    await Promise.all([fs.mkdir(work), fs.mkdir(hidden)])
    await fs.writeFile(path.join(hidden, 'lead.key'), 'secret\n')
    const sandbox = createBashSandbox({
      config: { ...config, enabled: true, excludedCommands: [] },
      env,
      label: 'doctor',
      hidden: [hidden],
      readOnly: [],
      writableDirs: () => [],
    })
    const probe = `echo ok > inside && ! test -e ${JSON.stringify(path.join(hidden, 'lead.key'))} && ! (echo x > ../outside) 2>/dev/null && echo confined`
    // Closed also when the launch fails: the sandbox's private TMPDIR is made before its argv.
    const r = await sandbox
      .launch(probe, work)
      .then((launch) =>
        runCommand(launch.file, launch.args, {
          cwd: work,
          env: { ...env, ...launch.env },
          timeoutMs: 10_000,
          ...(launch.fd3 && { fd3: launch.fd3 }),
        }),
      )
      .finally(() => sandbox.close())
    const wrote = await fs.readFile(path.join(work, 'inside'), 'utf8').catch(() => '')
    const leaked = await fs.stat(path.join(base, 'outside')).then(
      () => true,
      () => false,
    )
    if (r.code === 0 && r.stdout.includes('confined') && wrote === 'ok\n' && !leaked) {
      return {
        ok: true,
        enabled: config.enabled,
        detail: `${available.reason}; a test command wrote only its own directory and did not see the hidden one`,
      }
    }
    return {
      ok: false,
      enabled: config.enabled,
      detail: `a sandboxed test command was not confined (exit ${r.code}): ${(r.stderr || r.stdout).trim().split('\n').at(-1) ?? ''}`,
    }
  } finally {
    await fs.rm(base, { recursive: true, force: true })
  }
}
