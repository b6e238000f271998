/**
 * Where a command prints and whose environment it runs in: this process's, or — for the calls the
 * leader answers on its socket (cli/leader-answers.ts) — a caller's, its output captured.
 */
import { writeStdout } from '../terminal/output.js'

export interface CallContext {
  env: NodeJS.ProcessEnv
  /** Writes to the caller's stdout. */
  out: (text: string) => void
}

export const THIS_PROCESS: CallContext = { env: process.env, out: writeStdout }
