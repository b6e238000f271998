import { relayEndpointFile } from '../../src/adapters/relay-frames.js'
import { type Relay, startRelay } from '../../src/adapters/relay-server.js'
import { agentHomeDir } from '../../src/home/paths.js'
import { createTeam } from '../../src/teams/team-store.js'
import { type IsolatedHome, isolatedHome } from './home.js'
import { requireBuilt } from './repo.js'

/**
 * The relay tests' world: an isolated home with team `t`, its Gemini CLI member `gem`, and gem's
 * relay on real loopback TCP with its endpoint file in gem's home.
 */
export interface RelayWorld {
  h: IsolatedHome
  relay: Relay
  endpoint: string
}

export async function startRelayWorld(prefix: string): Promise<RelayWorld> {
  requireBuilt('dist/cli/main.js')
  const h = isolatedHome(prefix)
  await createTeam({ name: 't', cwd: h.project, members: [{ name: 'gem', agent: 'gemini', cwd: h.project }] }, h.env)
  const endpoint = relayEndpointFile(agentHomeDir('t', 'gem', h.env))
  const relay = await startRelay({ team: 't', name: 'gem', agent: 'gemini', endpointFile: endpoint, env: h.env, cwd: h.project })
  return { h, relay, endpoint }
}

export async function stopRelayWorld(w: Partial<RelayWorld>): Promise<void> {
  await w.relay?.close()
  await w.h?.cleanup()
}
