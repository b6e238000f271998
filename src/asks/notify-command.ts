import path from 'node:path'
import { z } from 'zod'
import { errorMessage } from '../errors.js'
import { rootDir } from '../home/paths.js'
import { shortRequestId } from '../home/request-id.js'
import { runCommand } from '../process/launch.js'
import { parseJsonFile, readFileIfExists } from '../util/fs.js'
import { notificationText } from './notify.js'

/**
 * The `notify` setting: a command of the user's run once for each new permission or plan request
 * (ntfy, a chat webhook, a phone push service), so swarm depends on none of them. It is an argv,
 * run without a shell; the request reaches it only as data — environment variables and a JSON
 * document on stdin — never spliced into a command line.
 */

export const NotifySetting = z.strictObject({
  /** The program and its arguments, e.g. `["ntfy", "publish", "my-topic"]`. */
  command: z.array(z.string().min(1)).min(1),
  /** Killed (its process group) after this long. */
  timeoutMs: z.number().int().positive().max(120_000).optional(),
})
export type NotifySetting = z.infer<typeof NotifySetting>

const UserSettings = z.looseObject({ notify: NotifySetting.optional() })

const DEFAULT_TIMEOUT_MS = 10_000

/** The request as the command is told of it. */
export interface NotifiedRequest {
  team: string
  id: string
  kind: 'permission' | 'plan'
  agent: string
  toolName: string
  /** The whole input, neutralised, line by line. */
  inputLines: string[]
  /** The rules "always" would add. */
  always: string[]
}

/** `<root>/settings.json`'s `notify`, if set. A file that does not parse is a CorruptFileError naming it. */
export async function readNotifySetting(env: NodeJS.ProcessEnv): Promise<NotifySetting | undefined> {
  const file = path.join(rootDir(env), 'settings.json')
  const text = await readFileIfExists(file)
  return text === undefined ? undefined : parseJsonFile(file, text, UserSettings).notify
}

/**
 * Runs the `notify` command for `request`, if one is set: `SWARM_REQUEST_TEAM`, `_ID`, `_SHORT_ID`,
 * `_KIND`, `_AGENT`, `_TOOL` and `SWARM_REQUEST_TEXT` (one line, as the console's notification
 * says it) in its environment, the request as JSON on stdin. Resolves with its exit code
 * (undefined: no command set); a failure is reported to `onProblem`, never thrown — a
 * notification is best effort, the request goes on.
 */
export async function runNotifyCommand(
  request: NotifiedRequest,
  options: { env: NodeJS.ProcessEnv; onProblem?(line: string): void },
): Promise<number | undefined> {
  try {
    const setting = await readNotifySetting(options.env)
    if (!setting) return undefined
    const summary = request.inputLines.join('\n')
    const vars = {
      SWARM_REQUEST_TEAM: request.team,
      SWARM_REQUEST_ID: request.id,
      SWARM_REQUEST_SHORT_ID: shortRequestId(request.id),
      SWARM_REQUEST_KIND: request.kind,
      SWARM_REQUEST_AGENT: request.agent,
      SWARM_REQUEST_TOOL: request.toolName,
      SWARM_REQUEST_TEXT: notificationText({ ...request, summary }),
    }
    const [file, ...args] = setting.command
    const r = await runCommand(file, args, {
      env: { ...options.env, ...vars },
      input: JSON.stringify(request) + '\n',
      timeoutMs: setting.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    })
    if (r.code !== 0) options.onProblem?.(`notify command ${file} exited ${r.code}${r.stderr ? `: ${r.stderr.trim().split('\n')[0]}` : ''}`)
    return r.code
  } catch (err) {
    options.onProblem?.(`notify command failed: ${errorMessage(err)}`)
    return undefined
  }
}
