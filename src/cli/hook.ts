import type { Command } from 'commander'
import { PLUMBING } from './options.js'
import { UsageError, errorMessage } from '../errors.js'
import { onCrash } from '../process/handlers.js'
import { SWARM_HOOK_EVENTS, type HookReply, type SwarmHookEvent } from '../adapters/types.js'

interface HookOpts {
  team?: string
  name?: string
  agent?: string
}

/** `swarm hook <event>`: the one entry point every agent CLI's hooks call (see src/adapters/hook.ts). */
export function registerHookCommand(program: Command): void {
  program
    .command('hook <event>')
    .helpGroup(PLUMBING)
    .description(`called by an agent CLI's hooks: records its state, bubbles permission requests (${SWARM_HOOK_EVENTS.join(', ')})`)
    .option('--team <team>', 'the team (default $SWARM_TEAM)')
    .option('--name <name>', 'the teammate (default $SWARM_AGENT_NAME)')
    .option('--agent <kind>', 'its adapter (default $SWARM_AGENT_KIND)')
    .action((event: string, opts: HookOpts) => hookCommand(event, opts))
}

export async function hookCommand(event: string, opts: HookOpts): Promise<void> {
  if (!(SWARM_HOOK_EVENTS as readonly string[]).includes(event))
    throw new UsageError(`unknown hook event ${JSON.stringify(event)}`, { hint: `use one of ${SWARM_HOOK_EVENTS.join(', ')}` })
  const agent = opts.agent ?? process.env.SWARM_AGENT_KIND
  const { failClosed, isGatingEvent } = await import('../adapters/hook-fail.js')
  const gating = isGatingEvent(event)
  const fail = { event: event as SwarmHookEvent, env: process.env, ...(agent && { agent }) }
  // A tool call waits on a gating hook: even an exception escaping every await is a deny.
  if (gating)
    onCrash((_kind, err) => {
      process.stderr.write(`swarm could not ask the team lead, so the call is denied: ${errorMessage(err)}\n`)
      process.exit(2)
    })
  try {
    const team = opts.team ?? process.env.SWARM_TEAM
    const name = opts.name ?? process.env.SWARM_AGENT_NAME
    if (!team || !name || !agent)
      throw new UsageError('swarm hook needs --team, --name and --agent (or SWARM_TEAM, SWARM_AGENT_NAME, SWARM_AGENT_KIND)')
    const { runHook, parseHookPayload } = await import('../adapters/hook.js')
    const payload = parseHookPayload(await readStdin())
    write(await runHook({ event: event as SwarmHookEvent, team, name, agent, payload, env: process.env }))
  } catch (err) {
    if (gating) {
      write(await failClosed(fail, err))
      return
    }
    // Not a gating event: exit 1, which Claude-style CLIs treat as a non-blocking hook error.
    process.stderr.write(`swarm: hook ${event} failed: ${errorMessage(err)}\n`)
    process.exitCode = 1
  }
}

function write(reply: HookReply): void {
  if (reply.stdout) process.stdout.write(reply.stdout)
  if (reply.stderr) process.stderr.write(reply.stderr)
  process.exitCode = reply.exitCode
}

/** A hook's stdin is the CLI's JSON payload; none (a TTY, or empty) or non-JSON is no payload. */
async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return ''
  const chunks: Buffer[] = []
  for await (const c of process.stdin) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
