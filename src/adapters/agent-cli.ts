/**
 * `swarm agent-cli`: what a CLI teammate's pane runs. It starts the agent CLI in the foreground of
 * the pane's terminal (stdio inherited, same process group, so the CLI owns the keyboard), runs the
 * courier beside it, quits the CLI its own way on a verified shutdown_request, records `exited`
 * with the CLI's code, and reaps whatever the CLI left in the pane's session.
 */
import { ownPaneIo } from '../backends/registry.js'
import type { PaneIo } from '../backends/pane-io.js'
import { errorMessage } from '../errors.js'
import { LEAD_NAME, agentHomeDir } from '../home/paths.js'
import { encodeStructured } from '../mailbox/messages.js'
import { delay } from '../process/delay.js'
import { ignoreSignal, onStopSignal } from '../process/handlers.js'
import { shellExitCode, startInTerminal } from '../process/launch.js'
import { waitForExit } from '../process/liveness.js'
import { sendSignal } from '../process/signals.js'
import { processTable } from '../process/table.js'
import { killPids, killTree } from '../process/tree.js'
import { ownSession, sessionProcesses } from '../process/process-session.js'
import { sendTeamMessage } from '../teams/messaging.js'
import { meterCli } from './cli-meter.js'
import { confineCli } from './confine.js'
import { Courier } from './courier.js'
import { runHook, setStatus } from './hook.js'
import { AGENT_PATH_ENV } from './launch-plan.js'
import { relayEndpointFile } from './relay-frames.js'
import { startRelay } from './relay-server.js'
import type { AgentAdapter } from './types.js'
import type { Env } from '../home/env.js'

export interface AgentCliOptions {
  team: string
  name: string
  adapter: AgentAdapter
  argv: string[]
  promptInArgv: boolean
  env: Env
  /** The CLI runs in swarm's sandbox (`confinement: 'swarm'`), with these paths read-only. */
  sandbox?: { readOnly: string[] }
}

export async function runAgentCli(o: AgentCliOptions): Promise<number> {
  // A CLI on its own inbox (Claude Code) keeps its state in the team file itself; swarm writes none.
  const ownState = o.adapter.delivery.method === 'inbox'
  if (!ownState) await setStatus(o, 'starting', o.adapter.kind)
  const paneEnv = o.env[AGENT_PATH_ENV] ? { ...o.env, PATH: o.env[AGENT_PATH_ENV] } : o.env
  // Its model requests through the metering proxy first: its budgets hold from its first request.
  const metered = await meterCli({ team: o.team, name: o.name, adapter: o.adapter, argv: o.argv, env: paneEnv, ownState }).catch(
    async (err: unknown) => {
      if (!ownState) await setStatus(o, 'dead', `could not meter its model requests: ${errorMessage(err)}`).catch(() => undefined)
      throw err
    },
  )
  const env = metered?.env ?? paneEnv
  const argv = metered?.argv ?? o.argv
  // Its relay first (its first hook may come at once), then the sandbox the whole CLI runs in.
  const confined = o.sandbox
    ? await confineCli({
        team: o.team,
        name: o.name,
        agent: o.adapter.kind,
        argv,
        cwd: process.cwd(),
        env,
        readOnly: o.sandbox.readOnly,
        adapter: o.adapter,
      }).catch(async (err: unknown) => {
        await setStatus(o, 'dead', `could not confine it: ${errorMessage(err)}`).catch(() => undefined)
        throw err
      })
    : undefined
  // A CLI its launcher confines (Claude Code) keeps its team's files but not swarm's: its shell's
  // `swarm` reaches the team through a relay of its own, as a CLI in swarm's sandbox does.
  const launcherRelay =
    !confined && o.adapter.confinement === 'launcher'
      ? await startRelay({
          team: o.team,
          name: o.name,
          agent: o.adapter.kind,
          endpointFile: relayEndpointFile(agentHomeDir(o.team, o.name, env)),
          env,
          cwd: process.cwd(),
        })
      : undefined
  if (confined) {
    const { status, reason } = confined.process
    // `swarm status` shows a CLI teammate that runs without it.
    await setStatus(o, 'starting', o.adapter.kind, { sandbox: status })
    if (status !== 'sandboxed') process.stderr.write(`swarm: warning: ${o.name} (${o.adapter.kind}) runs without the OS sandbox: ${reason}\n`)
  }
  const [file, args] = confined ? [confined.process.file, confined.process.args] : [argv[0], argv.slice(1)]
  // The sandbox's seccomp program goes to bwrap on fd 3, which reads it to its end.
  const fd3 = confined?.process.fd3
  const child = startInTerminal(file, args, { env, ...(fd3 && { fd3 }) })
  const exited = child.exited.then((status) => {
    if (status.error) process.stderr.write(`swarm: could not start ${o.argv[0]}: ${status.error} — is ${o.adapter.binary} installed and on PATH?\n`)
    return shellExitCode(status)
  })
  // Ctrl-C in the pane is for the CLI; a hang-up or TERM (pane killed, team deleted) ends both.
  ignoreSignal('SIGINT')
  let stopping = false
  const stop = () => {
    if (stopping) return
    stopping = true
    if (child.pid) void killTree(child.pid)
  }
  onStopSignal(stop)

  // A CLI with a control channel of its own (opencode's HTTP API): its events run the hooks, it may take the prompts.
  const channel = o.adapter.channel?.open({
    team: o.team,
    name: o.name,
    env: o.env,
    runHook: (h) => runHook({ ...h, team: o.team, name: o.name, agent: o.adapter.kind, env: o.env }),
  })
  const promptBox = o.adapter.delivery.method === 'http' ? channel?.promptBox : undefined
  // Through the executor that runs this member: its backend is named in the env it was started with.
  const pane = ownPaneIo(o.env)
  if (!pane && !ownState) process.stderr.write(`swarm: warning: ${o.name} runs in no pane swarm can type into: no message will reach it\n`)
  const courier = pane
    ? new Courier({
        team: o.team,
        name: o.name,
        adapter: o.adapter,
        pane,
        env: o.env,
        promptInArgv: o.promptInArgv,
        ...(promptBox && { promptBox }),
        onShutdown: async (requestId) => {
          await sendTeamMessage({
            team: o.team,
            from: o.name,
            to: LEAD_NAME,
            text: encodeStructured({ type: 'shutdown_approved', requestId, from: o.name, timestamp: new Date().toISOString() }),
            env: o.env,
          })
          await quit(o.adapter, pane, child.pid, confined?.process.status === 'sandboxed')
        },
      })
    : undefined
  courier?.start()
  const code = await exited
  await courier?.close().catch(() => undefined) // the CLI is gone; nothing is left to deliver to
  await channel?.close().catch(() => undefined) // nor any event to read
  await launcherRelay?.close().catch(() => undefined) // the CLI is gone: nothing is left to relay for
  await metered?.close().catch((err: unknown) => process.stderr.write(`swarm: ${errorMessage(err)}\n`))
  const moved = await confined?.close().catch((err: unknown) => [`(could not settle its sandbox: ${errorMessage(err)})`])
  for (const m of moved ?? []) process.stderr.write(`swarm: moved aside a protected path ${o.name} created: ${m}\n`)
  if (!ownState)
    // `{}`: not made again for a teammate taken off the roster (or a team deleted) meanwhile.
    await setStatus(o, code === 0 || stopping ? 'exited' : 'dead', `exit ${code}`, {}, {}).catch((err: unknown) =>
      process.stderr.write(`swarm: ${errorMessage(err)}\n`),
    )
  await reapSession()
  return code
}

/** The CLI's own way out (its keys / command), then its signal, then the kill. */
async function quit(adapter: AgentAdapter, pane: PaneIo, pid: number | undefined, sandboxed: boolean): Promise<void> {
  if (!pid) return
  const q = adapter.quit
  if (q.keys?.length) await pane.keys(q.keys).catch(() => undefined) // a closed pane means it is gone anyway
  if (q.text) {
    await pane.paste(q.text).catch(() => undefined)
    await delay(300)
    await pane.keys(['Enter']).catch(() => undefined)
  }
  if (await waitForExit([pid], q.graceMs)) return
  if (q.signal) {
    // bwrap passes no signal on: the CLI inside gets it itself.
    for (const target of sandboxed ? await sandboxedProgram(pid) : [pid]) sendSignal(target, q.signal)
    if (await waitForExit([pid], q.graceMs)) return
  }
  await killTree(pid)
}

/**
 * The program bwrap runs, seen from here: bwrap forks its pid namespace's init, which forks the
 * program — `pid`'s grandchildren. `pid` itself when there are none (it is exiting).
 */
async function sandboxedProgram(pid: number): Promise<number[]> {
  const rows = await processTable()
  const init = rows.filter((r) => r.ppid === pid).map((r) => r.pid)
  const program = rows.filter((r) => init.includes(r.ppid)).map((r) => r.pid)
  return program.length ? program : [pid]
}

/** Whatever the CLI left in this pane's session (helpers that outlive it): TERM, then KILL. */
async function reapSession(): Promise<void> {
  const sid = ownSession()
  // Only inside a pane's session (its leader is our parent, the exit-status shell, or we are).
  if (sid === undefined || (sid !== process.pid && sid !== process.ppid)) return
  await killPids(sessionProcesses(sid).filter((pid) => pid !== process.ppid))
}
