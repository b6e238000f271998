import type { Command } from 'commander'
import { PLUMBING } from './options.js'

/** `swarm relay <endpoint> -- <command…>`: a sandboxed CLI teammate's way to its team (written into its hooks by spawn). */
export function registerRelayCommand(program: Command): void {
  program
    .command('relay')
    .helpGroup(PLUMBING)
    .description("run a teammate's swarm command through its pane wrapper's relay (used inside a CLI teammate's sandbox)")
    .argument('<endpoint>', "the relay's endpoint file (<agent home>/relay/endpoint.json)")
    .argument('<argv...>', 'the swarm command and its arguments (after --)')
    .action(async (endpoint: string, argv: string[]) => {
      const { runRelayClient } = await import('../adapters/relay-client.js')
      process.exitCode = await runRelayClient(endpoint, argv)
    })
}
