import type { Command } from 'commander'
import { PLUMBING } from './options.js'
import type { HostedWorktreeFlags } from './remote-host.js'
import { printJson, println } from '../terminal/output.js'

/** `swarm hosts check <host>` and the plumbing of teammates on other machines (`swarm remote …`, run by swarm over ssh). */
export function registerRemoteCommands(program: Command): void {
  const hosts = program.command('hosts').description('machines that run teammates (`swarm spawn --host`)')
  hosts
    .command('check')
    .description('connect to a host and say what it has for teammates (swarm, tmux, node, git, agent CLIs) and what is missing')
    .argument('<host>', 'user@host[:port], or a Host of your ssh config')
    .option('--json', 'print the report as JSON')
    .action((host: string, opts: { json?: boolean }) => runHostsCheck(host, opts))

  hosts
    .command('install')
    .description(
      "install this swarm on a host as its helper, over the connection (packed here, unpacked under the host's state root; the host needs node and tar, no registry)",
    )
    .argument('<host>', 'user@host[:port], or a Host of your ssh config')
    .option('--json', 'print what was installed as JSON')
    .action((host: string, opts: { json?: boolean }) => runHostsInstall(host, opts))

  const remote = program.command('remote').helpGroup(PLUMBING).description("a host's side of teammates on other machines (run by swarm over ssh)")
  remote
    .command('hello')
    .description("this machine's report for the handshake")
    .action(() => hostSide().then((m) => m.remoteHello(process.env)))
  remote
    .command('spawn')
    .description('start members of a mirror team here (the request on stdin)')
    .action(async () => (await hostSide()).remoteSpawn(await readStdin(), process.env))
  remote
    .command('status')
    .requiredOption('--team <team>')
    .action(async (o: { team: string }) => (await hostSide()).remoteStatus(o.team, process.env))
  remote
    .command('kill')
    .requiredOption('--team <team>')
    .requiredOption('--name <name>')
    .action(async (o: { team: string; name: string }) => (await hostSide()).remoteKill(o.team, o.name, process.env))
  remote
    .command('stop-team')
    .requiredOption('--team <team>')
    .action(async (o: { team: string }) => (await hostSide()).remoteStopTeam(o.team, process.env))
  remote
    .command('relay')
    .description("a team's relay on this host, for the link that runs it (one at a time: another link's is refused, exit 4)")
    .requiredOption('--team <team>')
    .requiredOption('--link <id>', "the link's id (its link.id)")
    .action(async (o: { team: string; link: string }) => (await hostSide()).remoteRelay(o.team, o.link, process.env))
  remote
    .command('worktree-open')
    .description("a team's repository here for one lead repository (made when missing), and its branch's commit")
    .requiredOption('--team <team>')
    .requiredOption('--repo-id <id>')
    .requiredOption('--branch <branch>')
    .action(async (o: HostedWorktreeFlags) => (await hostSide()).remoteWorktreeOpen(o, process.env))
  remote
    .command('worktree-add')
    .description("a member's worktree of its branch here (pushed by the lead already)")
    .requiredOption('--team <team>')
    .requiredOption('--repo-id <id>')
    .requiredOption('--branch <branch>')
    .requiredOption('--slug <slug>')
    .option('--subdir <dir>', 'where in it the member starts', '')
    .action(async (o: HostedWorktreeFlags) => (await hostSide()).remoteWorktreeAdd(o, process.env))
  remote
    .command('worktree-remove')
    .description("a member's worktree here, unless it holds uncommitted changes; its branch while it is at --tip")
    .requiredOption('--team <team>')
    .requiredOption('--repo-id <id>')
    .requiredOption('--branch <branch>')
    .requiredOption('--slug <slug>')
    .option('--tip <sha>', 'the commit the lead fetched')
    .option('--discard', 'also with uncommitted changes, and the branch wherever it points')
    .action(async (o: HostedWorktreeFlags) => (await hostSide()).remoteWorktreeRemove(o, process.env))
  remote
    .command('home')
    .argument('<team>')
    .action(async (team: string) => (await hostSide()).remoteHome(team))
  remote
    .command('link')
    .description("a team's link to a host (started by spawn, stopped with the team)")
    .requiredOption('--team <team>')
    .requiredOption('--host <host>')
    .action((o: { team: string; host: string }) => runLinkCommand(o.team, o.host))
}

const hostSide = () => import('./remote-host.js')

async function readStdin(): Promise<string> {
  let text = ''
  for await (const chunk of process.stdin) text += String(chunk)
  return text
}

async function runLinkCommand(team: string, hostSpec: string): Promise<void> {
  const [{ parseHost }, { runLink }, { nextStopSignal }] = await Promise.all([
    import('../remote/host.js'),
    import('../remote/link.js'),
    import('../process/handlers.js'),
  ])
  const stop = new AbortController()
  void nextStopSignal(stop.signal).then(() => stop.abort())
  await runLink(team, parseHost(hostSpec), process.env, stop.signal, { log: (line) => println(`${new Date().toISOString()} ${line}`) })
}

/** The tools a teammate may need, and what their absence costs. */
const NEEDED: Record<string, string> = {
  tmux: "required: members' panes run in tmux there",
  git: 'needed for worktrees',
  bwrap: 'the sandbox of Bash and agent CLIs (without it every command is asked)',
  codex: 'only for --agent codex',
  claude: 'only for --agent claude',
  gemini: 'only for --agent gemini',
}

async function runHostsCheck(host: string, opts: { json?: boolean }): Promise<void> {
  const [{ connectionTo }, { hello }, { swarmVersion }] = await Promise.all([
    import('../remote/connection.js'),
    import('../remote/helper.js'),
    import('../remote/version.js'),
  ])
  const conn = connectionTo(host, process.env)
  const started = Date.now()
  await conn.ensure()
  const report = await hello(conn, process.env)
  const versionOk = report.version === swarmVersion()
  if (opts.json) {
    printJson({ host: conn.host.spec, connectMs: Date.now() - started, ...report, versionMatches: versionOk, local: swarmVersion() })
  } else {
    println(`${conn.host.spec}: connected (${Date.now() - started} ms), ${report.platform}, node ${report.node}, HOME ${report.home}`)
    println(`  swarm ${report.version}${versionOk ? '' : ` — this one is ${swarmVersion()}: install ${swarmVersion()} there`}`)
    for (const [tool, why] of Object.entries(NEEDED))
      println(`  ${report.tools[tool] ? `${tool}: ${report.tools[tool]}` : `${tool}: missing (${why})`}`)
  }
  if (!versionOk || !report.tools.tmux) process.exitCode = 7
}

/**
 * `swarm hosts install <host>`: this swarm packed as users install it (a checkout's
 * scripts/pack.mjs, an installed package's `npm pack`), sent and unpacked there (remote/install.ts),
 * then the handshake with it.
 */
async function runHostsInstall(host: string, opts: { json?: boolean }): Promise<void> {
  const [{ connectionTo }, { handshake }, { installHelper }, { packSelf }] = await Promise.all([
    import('../remote/connection.js'),
    import('../remote/helper.js'),
    import('../remote/install.js'),
    import('./pack-self.js'),
  ])
  if (process.env.SWARM_REMOTE_SWARM) {
    println(`note: SWARM_REMOTE_SWARM is set (${process.env.SWARM_REMOTE_SWARM}): swarm runs that there, not the helper installed now`)
  }
  const conn = connectionTo(host, process.env)
  await conn.ensure()
  const packed = await packSelf(process.env)
  try {
    const installed = await installHelper(conn, packed.tarball)
    const report = await handshake(conn, process.env)
    if (opts.json) printJson({ host: conn.host.spec, version: report.version, ...installed })
    else
      println(
        `${conn.host.spec}: swarm ${report.version} installed at ${installed.bin} (${Math.round(installed.bytes / 1024)} KiB in ${installed.ms} ms)`,
      )
  } finally {
    await packed.cleanup()
  }
}
