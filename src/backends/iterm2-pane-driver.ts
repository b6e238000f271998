/**
 * iTerm2's keyboard and screen of one session (a PaneDriver; callers get it wrapped in a PaneIo),
 * through the it2 CLI: `it2 session send` types bytes into the session as if from the keyboard,
 * `it2 session read` prints its screen. it2 has no paste of its own, so a paste is sent between
 * the bracketed-paste markers a terminal itself sends; the text may hold no ESC to end it early
 * (PaneIo made every control visible). it2 takes the text only as an argument: unlike tmux, a
 * pasted message is in the argv of that one it2 process while it runs.
 */
import { ExitCode, SwarmError, UsageError } from '../errors.js'
import { type CommandResult, runCommand } from '../process/launch.js'
import type { PaneAddress, PaneDriver } from './types.js'
import type { Env } from '../home/env.js'

/** Each it2 call starts a Python process that talks to iTerm2: allow it time. */
export const IT2_TIMEOUT_MS = 10_000

const PASTE_START = '\x1b[200~'
const PASTE_END = '\x1b[201~'

/** The bytes a terminal sends for the key names PaneIo accepts (tmux's names). */
const KEYS: Record<string, string> = {
  Enter: '\r',
  Escape: '\x1b',
  Tab: '\t',
  BTab: '\x1b[Z',
  BSpace: '\x7f',
  Space: ' ',
  Up: '\x1b[A',
  Down: '\x1b[B',
  Right: '\x1b[C',
  Left: '\x1b[D',
  Home: '\x1b[H',
  End: '\x1b[F',
}

/** One it2 call; exit 127 with nothing said means there is no it2 to run. */
export async function runIt2(args: string[], env: Env, bin = 'it2'): Promise<CommandResult> {
  const r = await runCommand(bin, args, { env, timeoutMs: IT2_TIMEOUT_MS })
  if (r.code === 127 && !r.stderr)
    throw new SwarmError('SWARM_IT2_MISSING', 'the it2 CLI is not installed (or not on PATH)', { exitCode: ExitCode.backendUnavailable })
  return r
}

/** `key`'s bytes: a name of KEYS, or `C-x` (a control character). */
function keyBytes(key: string): string {
  const named = KEYS[key]
  if (named !== undefined) return named
  const ctrl = /^C-([a-zA-Z@[\\\]^_])$/.exec(key)?.[1]
  if (ctrl) return String.fromCharCode(ctrl.toUpperCase().charCodeAt(0) ^ 0x40)
  throw new UsageError(`the key ${JSON.stringify(key)} cannot be sent to an iTerm2 session`, {
    hint: `use one of ${Object.keys(KEYS).join(', ')} or C-<letter>`,
  })
}

export function itermPaneDriver(pane: PaneAddress, env: Env, bin?: string): PaneDriver {
  const session = pane.paneId
  const it2 = async (args: string[], what: string): Promise<string> => {
    const r = await runIt2(args, env, bin)
    if (r.code !== 0)
      throw new SwarmError('SWARM_IT2_FAILED', `it2 session ${what} failed: ${r.stderr.trim() || r.stdout.trim() || 'no error output'}`, {
        exitCode: ExitCode.processFailure,
      })
    return r.stdout
  }
  // `--`: a text that starts with `-` is text, not an option of it2's.
  const send = (bytes: string) => it2(['session', 'send', '-s', session, '--', bytes], 'send')
  return {
    async paste(piece) {
      await send(PASTE_START + piece + PASTE_END)
    },
    async keys(keys) {
      await send(keys.map(keyBytes).join(''))
    },
    async type(text) {
      await send(text)
    },
    screen: () => it2(['session', 'read', '-s', session], 'read'),
  }
}
