import type { Command } from 'commander'
import { NotFoundError, UsageError } from '../errors.js'
import { println } from '../terminal/output.js'
import { runInTerminal } from '../process/launch.js'

/** `swarm attach <team>` */
export function registerAttachCommand(program: Command): void {
  program
    .command('attach')
    .description("attach to the team's tmux session (swarm-<team> on the swarm server)")
    .argument('<team>', 'team name')
    .action((team: string) => runAttach(team))
}

/**
 * Finds the team's panes (on the server its members recorded, else `tmux -L swarm`) and attaches;
 * inside tmux on that same server it switches to the team's window instead of nesting.
 */
export async function runAttach(team: string): Promise<void> {
  const [{ validateName }, client, panes, { sessionName }, teams] = await Promise.all([
    import('../home/paths.js'),
    import('../backends/tmux-client.js'),
    import('../backends/tmux-panes.js'),
    import('../backends/tmux.js'),
    import('../teams/team-store.js'),
  ])
  validateName(team)
  const env = process.env
  const config = (await teams.teamExists(team, env)) ? await teams.readTeam(team, env) : undefined
  const recorded = config?.members.map((m) => m.tmuxSocket).find((s): s is string => typeof s === 'string' && s !== '')
  if (config && !recorded && config.members.some((m) => m.backendType === 'iterm2')) {
    throw new NotFoundError(`team ${team} runs in iTerm2 panes: there is no tmux session to attach to`)
  }
  const socket = recorded ? { path: recorded } : client.swarmSocket(env)
  const tmux = new client.TmuxClient({ socket, env })
  const leader = panes.teamLeader(await panes.listPanes(tmux), team)
  const plain = `${client.describeSocket(socket)} attach -t ${sessionName(team)}`
  if (!leader) {
    throw new NotFoundError(`team ${team} has no tmux session on ${client.describeSocket(socket)}`, {
      hint: `start it with "swarm team create ${team}" or "swarm spawn ${team} <name>"`,
    })
  }
  const insideSameServer = env.TMUX && env.TMUX.split(',')[0] === leader.socketPath
  if (insideSameServer) {
    const r = await tmux.exec(['switch-client', '-t', leader.paneId])
    // No client attached to that server (a detached session, a script run inside tmux): the team runs; say how to reach it.
    if (r.code !== 0 && /no current client/.test(r.stderr)) {
      println(`no tmux client is attached to switch to team ${team}; attach with: ${client.describeSocket(socket)} attach -t ${leader.paneId}`)
      return
    }
    if (r.code !== 0) throw tmux.failure('switch-client', r.stderr)
    return
  }
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new UsageError('attach needs a terminal', { hint: `run it from a terminal: ${plain}` })
  }
  // Attaching from inside another tmux nests them; tmux refuses that while $TMUX is set.
  const childEnv = { ...env }
  delete childEnv.TMUX
  if (env.TMUX) println(`attaching inside your tmux (nested); detach with the prefix key twice then d`)
  process.exitCode = await runInTerminal('tmux', [...client.socketArgs(socket), 'attach-session', '-t', leader.paneId], { env: childEnv })
}
