/**
 * What `swarm doctor` says about agent CLIs: per adapter, whether its binary is installed (binary.ts),
 * its version, and whether its hooks can work — the hook entry point runs and answers a dry call —
 * or its control channel works (the adapter's probe), plus adapter files that could not be read.
 * Every probe runs in a throwaway home (probe-home.ts).
 */
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { swarmArgv } from '../backends/teammate-launch.js'
import { runCommand } from '../process/launch.js'
import { locateAgentBinary } from './binary.js'
import { withProbeHome } from './probe-home.js'
import { relayEndpointFile } from './relay-frames.js'
import { startRelay } from './relay-server.js'
import { loadAdapters } from './registry.js'
import type { AgentAdapter } from './types.js'

export interface AgentCliStatus {
  kind: string
  source: string
  binary: string
  /** Absolute path, when installed. */
  path?: string
  /** Why it was not found, when it was not. */
  missing?: string
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
      const found = locateAgentBinary(a, env)
      const version = found.found ? await versionOf(found.path, a, env) : undefined
      const control = found.found && a.probe ? await withProbeHome(env, (probeEnv) => a.probe!(found.path, probeEnv), a.configEnv) : undefined
      return {
        kind: a.kind,
        source: a.source,
        binary: a.binary,
        ...(found.found ? { path: found.path } : { missing: found.reason }),
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

async function versionOf(file: string, a: Pick<AgentAdapter, 'versionArgs' | 'configEnv'>, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const r = await withProbeHome(env, (probeEnv) => runCommand(file, [...a.versionArgs], { env: probeEnv, timeoutMs: 15_000 }), a.configEnv).catch(
    () => undefined,
  )
  if (r?.code !== 0) return undefined
  return (r!.stdout.trim() || r.stderr.trim()).split('\n').pop()?.trim() || undefined
}

/**
 * A CLI teammate's hooks run `swarm relay <endpoint> -- hook …` (or `swarm hook …` for Codex):
 * both refuse an unknown event with exit 2 — proof that the entry point, and the relay that carries
 * a sandboxed CLI's hooks to its pane wrapper, work here.
 */
async function hookEntryHealth(env: NodeJS.ProcessEnv): Promise<string> {
  const [node, ...bin] = swarmArgv()
  const probe = ['hook', 'doctor-probe', '--team', 'x', '--name', 'x', '--agent', 'x']
  const ask = (probeEnv: NodeJS.ProcessEnv, argv: string[]) => runCommand(node, [...bin, ...argv], { env: probeEnv, timeoutMs: 15_000, input: '' })
  const refused = (r: { code: number | null; stderr: string }) => r.code === 2 && r.stderr.includes('unknown hook event')
  const failed = (what: string, r: { code: number | null; stderr: string }) => `${what} failed (exit ${r.code}): ${r.stderr.trim().split('\n')[0]}`
  return withProbeHome(env, async (probeEnv) => {
    const direct = await ask(probeEnv, probe)
    if (!refused(direct)) return failed('the hook entry point', direct)
    // A throwaway endpoint, never under the user's swarm root.
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-doctor-relay-'))
    const endpointFile = relayEndpointFile(dir)
    const relay = await startRelay({ team: 'x', name: 'x', agent: 'x', endpointFile, env: probeEnv, cwd: dir })
    try {
      const relayed = await ask(probeEnv, ['relay', endpointFile, '--', ...probe])
      return refused(relayed) ? 'ok' : failed('the relay', relayed)
    } finally {
      await relay.close()
      await fs.rm(dir, { recursive: true, force: true })
    }
  }).catch((err: Error) => `the hook entry point failed: ${err.message}`)
}
