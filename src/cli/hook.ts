import type { Command } from 'commander'
import { UsageError, errorMessage } from '../errors.js'
import { SWARM_HOOK_EVENTS, type SwarmHookEvent } from '../adapters/types.js'

interface HookOpts {
  team?: string
  name?: string
  agent?: string
}

/** `swarm hook <event>`: the one entry point every agent CLI's hooks call (see src/adapters/hook.ts). */
export function registerHookCommand(program: Command): void {
  program
    .command('hook <event>')
    .description(`called by an agent CLI's hooks: records its state, bubbles permission requests (${SWARM_HOOK_EVENTS.join(', ')})`)
    .option('--team <team>', 'the team (default $SWARM_TEAM)')
    .option('--name <name>', 'the teammate (default $SWARM_AGENT_NAME)')
    .option('--agent <kind>', 'its adapter (default $SWARM_AGENT_KIND)')
    .action((event: string, opts: HookOpts) => hookCommand(event, opts))
}

export async function hookCommand(event: string, opts: HookOpts): Promise<void> {
  if (!(SWARM_HOOK_EVENTS as readonly string[]).includes(event))
    throw new UsageError(`unknown hook event ${JSON.stringify(event)}`, { hint: `use one of ${SWARM_HOOK_EVENTS.join(', ')}` })
  const team = opts.team ?? process.env.SWARM_TEAM
  const name = opts.name ?? process.env.SWARM_AGENT_NAME
  const agent = opts.agent ?? process.env.SWARM_AGENT_KIND
  if (!team || !name || !agent)
    throw new UsageError('swarm hook needs --team, --name and --agent (or SWARM_TEAM, SWARM_AGENT_NAME, SWARM_AGENT_KIND)')
  const payload = parsePayload(await readStdin())
  const { runHook } = await import('../adapters/hook.js')
  try {
    const reply = await runHook({ event: event as SwarmHookEvent, team, name, agent, payload, env: process.env })
    if (reply.stdout) process.stdout.write(reply.stdout)
    if (reply.stderr) process.stderr.write(reply.stderr)
    process.exitCode = reply.exitCode
  } catch (err) {
    // Exit 2 means "block" to Claude-style CLIs: a failure of ours is reported and exits 1, which
    // they treat as a non-blocking hook error (the CLI then asks in its own pane).
    process.stderr.write(`swarm: hook ${event} failed: ${errorMessage(err)}\n`)
    process.exitCode = 1
  }
}

/** A hook's stdin is the CLI's JSON payload; none (a TTY, or empty) or non-JSON is no payload. */
async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return ''
  const chunks: Buffer[] = []
  for await (const c of process.stdin) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

function parsePayload(text: string): unknown {
  if (!text.trim()) return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return { message: text }
  }
}
