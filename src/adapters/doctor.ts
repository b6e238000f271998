/**
 * What `swarm doctor` says about agent CLIs: per adapter, whether its binary is installed (PATH,
 * then SWARM_AGENT_BIN_DIR), its version, and whether its hooks can work — the hook entry point
 * runs and answers a dry call — or its control channel works (the adapter's probe), plus adapter
 * files that could not be read.
 */
import fs from 'node:fs'
import path from 'node:path'
import { swarmArgv } from '../backends/launch.js'
import { runCommand } from '../process/launch.js'
import { loadAdapters } from './registry.js'

export interface AgentCliStatus {
  kind: string
  source: string
  binary: string
  /** Absolute path, when installed. */
  path?: string
  version?: string
  /** `ok`, `none` (the CLI has no hooks: it is observed otherwise), or what failed. */
  hooks: string
  /** A CLI driven over its own API (opencode): `ok` when a throwaway instance answered on it. */
  control?: string
  delivery: string
}

export interface AgentCliReport {
  agents: AgentCliStatus[]
  problems: string[]
}

export async function agentCliReport(env: NodeJS.ProcessEnv, cwd: string): Promise<AgentCliReport> {
  const { adapters, diagnostics } = await loadAdapters({ cwd, env })
  const hookEntry = await hookEntryHealth(env)
  const agents = await Promise.all(
    [...adapters.values()].map(async (a): Promise<AgentCliStatus> => {
      const found = which(a.binary, env)
      const version = found ? await versionOf(found, a.versionArgs, env) : undefined
      const control = found && a.probe ? await a.probe(found, env) : undefined
      return {
        kind: a.kind,
        source: a.source,
        binary: a.binary,
        ...(found && { path: found }),
        ...(version && { version }),
        hooks: a.states.hooks ? hookEntry : 'none',
        ...(control && { control }),
        delivery:
          a.delivery.method === 'paste'
            ? `paste, confirmed by ${a.delivery.confirm}`
            : a.delivery.method === 'http'
              ? 'its HTTP API, confirmed by its event stream'
              : a.delivery.method,
      }
    }),
  )
  return { agents, problems: diagnostics.map((d) => `${d.file}: ${d.message}`) }
}

/** The CLI's executable on PATH, then SWARM_AGENT_BIN_DIR. */
export function which(binary: string, env: NodeJS.ProcessEnv): string | undefined {
  const dirs = [...(env.PATH ?? '').split(path.delimiter), env.SWARM_AGENT_BIN_DIR].filter((d): d is string => Boolean(d))
  for (const d of dirs) {
    const file = path.join(d, binary)
    try {
      fs.accessSync(file, fs.constants.X_OK)
      return file
    } catch {
      // not in this directory
    }
  }
  return undefined
}

async function versionOf(file: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const r = await runCommand(file, [...args], { env, timeoutMs: 15_000 }).catch(() => undefined)
  if (r?.code !== 0) return undefined
  return (r!.stdout.trim() || r.stderr.trim()).split('\n').pop()?.trim() || undefined
}

/** `swarm hook` refuses an unknown event with exit 2: proof that the entry point every hook calls runs. */
async function hookEntryHealth(env: NodeJS.ProcessEnv): Promise<string> {
  const [node, ...bin] = swarmArgv()
  const r = await runCommand(node, [...bin, 'hook', 'doctor-probe', '--team', 'x', '--name', 'x', '--agent', 'x'], {
    env,
    timeoutMs: 15_000,
    input: '',
  }).catch((err: Error) => ({ code: -1, stdout: '', stderr: err.message }))
  return r.code === 2 && r.stderr.includes('unknown hook event')
    ? 'ok'
    : `the hook entry point failed (exit ${r.code}): ${r.stderr.trim().split('\n')[0]}`
}
