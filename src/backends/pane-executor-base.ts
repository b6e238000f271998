/**
 * What the pane executors (tmux, iTerm2) share: the panes they remember, finding the others
 * through the team's directory (a fresh `swarm status` process started none of them), and
 * messaging, stopping and probing a teammate the same way whatever shows its pane.
 */
import type { NewMessage } from '../mailbox/entry.js'
import type { InboxMessage } from '../mailbox/types.js'
import { gracefulStop, sendToInbox } from './shutdown.js'
import type { ExecutorOptions, PaneRef, ProcessState, SpawnedTeammate, TeammateSpawnConfig, TerminateOptions, TerminateOutcome } from './types.js'

export abstract class PaneExecutorBase<O extends ExecutorOptions> {
  readonly kind = 'pane' as const
  /** Panes this executor started or found, by agent id. */
  protected readonly refs = new Map<string, PaneRef>()

  constructor(protected readonly opts: O) {}

  protected get env(): NodeJS.ProcessEnv {
    return this.opts.env ?? process.env
  }

  abstract status(agentIds: string[]): Promise<Map<string, ProcessState>>
  abstract kill(agentId: string): Promise<void>
  abstract spawn(config: TeammateSpawnConfig): Promise<SpawnedTeammate>

  /** Every teammate's kill at once; a backend that can close many panes in one call overrides it (tmux). */
  async killMany(agentIds: string[]): Promise<void> {
    await Promise.all(agentIds.map((id) => this.kill(id)))
  }

  /** Every config's spawn at once; a backend that can make many panes in one call overrides it (tmux). */
  spawnMany(configs: TeammateSpawnConfig[]): Promise<Array<PromiseSettledResult<SpawnedTeammate>>> {
    return Promise.allSettled(configs.map((c) => this.spawn(c)))
  }

  sendMessage(agentId: string, message: NewMessage | InboxMessage): Promise<void> {
    return sendToInbox(agentId, message, this.opts)
  }

  terminate(agentId: string, reason?: string, opts: TerminateOptions = {}): Promise<TerminateOutcome> {
    return gracefulStop(this, agentId, reason, opts, this.opts)
  }

  async isActive(agentId: string): Promise<boolean> {
    return (await this.status([agentId])).get(agentId)?.state === 'alive'
  }

  /** The recorded panes of `agentIds`: remembered ones first, the rest from the directory. */
  protected async lookup(agentIds: string[]): Promise<Map<string, PaneRef>> {
    const found = new Map<string, PaneRef>()
    const missing = agentIds.filter((id) => {
      const ref = this.refs.get(id)
      if (ref) found.set(id, ref)
      return !ref
    })
    if (missing.length && this.opts.directory) for (const [id, ref] of await this.opts.directory.lookup(missing)) found.set(id, ref)
    return found
  }
}
