import type { PaneBackend } from './backend.js'
import { RemoteExecutor } from './remote.js'

/** Teammates on other machines over OpenSSH (`--host`): never detected, never the leader's; chosen by a member's host. */
export const remoteBackend: PaneBackend = {
  type: 'ssh',
  kind: 'pane',
  label: 'ssh',
  probe: ['ssh', '-V'],
  standalone: false,
  remote: true,
  inside: () => false,
  probeWhenInside: true,
  installHint: (platform) => (platform === 'darwin' ? 'OpenSSH comes with macOS' : '"sudo apt-get install openssh-client" (or your package manager)'),
  create: (opts) => new RemoteExecutor(opts),
  ownPane: () => undefined,
  paneDriver: () => {
    throw new Error("a remote member's pane is typed into by its own host")
  },
}
