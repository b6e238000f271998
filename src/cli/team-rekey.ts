import { validateName } from '../home/paths.js'
import { refuseFromTeammate } from './lead-only.js'
import { rekeyTeam } from '../leader/rekey.js'
import { printJson, println } from '../terminal/output.js'

/** `swarm team rekey <team>`: a new lead key pair, handed to (or restarting) the running teammates. */
export async function teamRekey(name: string, opts: { json?: boolean }): Promise<void> {
  refuseFromTeammate()
  const report = await rekeyTeam(validateName(name, 'team'))
  if (opts.json) return printJson(report)
  const how = report.oldKey === 'used' ? 'signed by the old key' : `the old key is ${report.oldKey === 'corrupt' ? 'corrupt (kept aside)' : 'gone'}`
  println(`team ${report.team}: new lead key pair (${how})`)
  if (report.handedTo.length) println(`handed the new public key to: ${report.handedTo.join(', ')}`)
  if (report.restarted.length) println(`restarted with the new key: ${report.restarted.join(', ')}`)
  for (const n of report.notReached) println(`not reached: ${n.name} — ${n.reason}`)
  if (!report.handedTo.length && !report.restarted.length && !report.notReached.length)
    println('no teammate is running; each gets the new key when it starts')
}
