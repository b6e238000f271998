import fs from 'node:fs'
import type { Command } from 'commander'
import pc from 'picocolors'
import { readTranscript, transcriptPath, type TranscriptEvent } from '../agent/transcript.js'
import { formatEvent } from '../agent/transcript-format.js'
import { errorMessage, NotFoundError } from '../errors.js'
import { nextStopSignal } from '../process/handlers.js'
import { agentDir, validateAgentName, validateName } from '../home/paths.js'
import { getMember } from '../teams/team-store.js'
import { useColor } from '../terminal/output.js'
import { WATCH_INTERVALS } from '../watch/intervals.js'
import { watchPath } from '../watch/path-watch.js'

/** `swarm logs <team> <name> [--follow]` */
export function registerLogsCommand(program: Command): void {
  program
    .command('logs <team> <name>')
    .description("show an agent's transcript readably: messages, tool calls, state changes, errors")
    .option('-f, --follow', 'keep printing new events until Ctrl-C')
    .option('--json', 'print the raw events (JSON lines)')
    .action((team: string, name: string, opts: { follow?: boolean; json?: boolean }) => logsCommand(team, name, opts))
}

export async function logsCommand(team: string, name: string, opts: { follow?: boolean; json?: boolean }): Promise<void> {
  validateName(team)
  validateAgentName(name)
  await getMember(team, name)
  const file = transcriptPath(team, name)
  const c = pc.createColors(useColor() && !opts.json)
  const print = (e: TranscriptEvent) => process.stdout.write((opts.json ? JSON.stringify(e) : formatEvent(e, c)) + '\n')
  let seen = 0
  const flush = async () => {
    const events = await readTranscript(file)
    for (const e of events.slice(seen)) print(e)
    seen = events.length
  }
  await flush()
  if (!opts.follow) {
    if (seen === 0 && !fs.existsSync(file))
      throw new NotFoundError(`${name} has no transcript yet (${file})`, { hint: 'it is written once the agent starts' })
    return
  }
  fs.mkdirSync(agentDir(team, name), { recursive: true, mode: 0o700 })
  let chain = Promise.resolve()
  const kick = () => {
    chain = chain.then(flush)
  }
  const dir = agentDir(team, name)
  const unwatched = (err: unknown) =>
    process.stderr.write(`swarm: warning: not watching ${dir} (${errorMessage(err)}); looking every ${WATCH_INTERVALS.logsFollow / 1000} s\n`)
  const watch = watchPath(dir, kick, { pollMs: WATCH_INTERVALS.logsFollow, onError: unwatched })
  if (!watch.armed) unwatched(watch.error)
  await nextStopSignal()
  watch.close()
}
