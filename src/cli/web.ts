import fs from 'node:fs/promises'
import type { Command } from 'commander'
import { UsageError } from '../errors.js'
import { nextStopSignal } from '../process/handlers.js'
import { println } from '../terminal/output.js'
import { terminalSafe } from '../terminal/neutralize.js'
import { refuseFromTeammate } from './lead-only.js'

interface WebOpts {
  port?: string
  host?: string
  readOnly?: boolean
  passphraseFile?: string
}

/** `swarm web [--port N] [--host ADDR] [--read-only] [--passphrase-file FILE]` */
export function registerWebCommand(program: Command): void {
  program
    .command('web')
    .description('serve a page (phone-sized too) with every team, live panes and pending requests, answered through the same broker')
    .option('--port <n>', 'port to listen on (default: any free one)')
    .option('--host <addr>', 'address to bind (default 127.0.0.1; any other needs a passphrase)')
    .option('--read-only', 'watch only: no answer or send routes')
    .option('--passphrase-file <file>', 'the passphrase for a non-loopback bind (else $SWARM_WEB_PASSPHRASE)')
    .action((opts: WebOpts) => webCommand(opts))
}

export async function webCommand(opts: WebOpts): Promise<void> {
  // The page answers and speaks as team-lead: what a teammate's shell may not do, it may not serve.
  if (!opts.readOnly) refuseFromTeammate()
  const port = opts.port === undefined ? 0 : Number(opts.port)
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError(`--port must be a port number, not ${JSON.stringify(opts.port)}`)
  const passphrase = opts.passphraseFile ? (await fs.readFile(opts.passphraseFile, 'utf8')).trim() : process.env.SWARM_WEB_PASSPHRASE || undefined
  const { startWebServer } = await import('../web/server.js')
  const log = (line: string) => println(terminalSafe(`${new Date().toISOString().slice(11, 19)} ${line}`, { singleLine: true }))
  const server = await startWebServer({
    env: process.env,
    ...(opts.host !== undefined ? { host: opts.host } : {}),
    port,
    readOnly: opts.readOnly === true,
    ...(passphrase ? { passphrase } : {}),
    log,
  })
  println(`swarm web${opts.readOnly ? ' (read-only)' : ''}: open ${server.url}`)
  println('the token in this URL lets whoever holds it answer requests as team-lead; Ctrl-C stops the server')
  await nextStopSignal()
  await server.close()
}
