/**
 * Domain errors: a stable `code`, the class name as `name`, an exit code for the CLI funnel,
 * and an optional hint that tells the user what to do next.
 */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  notFound: 3,
  conflict: 4,
  corrupt: 5,
  lockTimeout: 6,
  backendUnavailable: 7,
  processFailure: 8,
  timeout: 9,
  filesystem: 10,
  internal: 70,
} as const
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

export interface SwarmErrorOptions {
  hint?: string
  cause?: unknown
  exitCode?: ExitCode
}

export class SwarmError extends Error {
  readonly code: string
  readonly exitCode: ExitCode
  readonly hint?: string
  constructor(code: string, message: string, options: SwarmErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    this.code = code
    this.exitCode = options.exitCode ?? ExitCode.failure
    this.hint = options.hint
  }
}

export class UsageError extends SwarmError {
  constructor(message: string, options: SwarmErrorOptions = {}) {
    super('SWARM_USAGE', message, { exitCode: ExitCode.usage, ...options })
  }
}

export class InvalidNameError extends SwarmError {
  constructor(kind: string, name: string, why: string) {
    super('SWARM_INVALID_NAME', `invalid ${kind} name ${JSON.stringify(name)}: ${why}`, {
      exitCode: ExitCode.usage,
      hint: 'use 1-64 characters of A-Z a-z 0-9 . _ - not starting with . or -',
    })
  }
}

export class NotFoundError extends SwarmError {
  constructor(message: string, options: SwarmErrorOptions = {}) {
    super('SWARM_NOT_FOUND', message, { exitCode: ExitCode.notFound, ...options })
  }
}

export class ConflictError extends SwarmError {
  constructor(code: string, message: string, options: SwarmErrorOptions = {}) {
    super(code, message, { exitCode: ExitCode.conflict, ...options })
  }
}

/** A file on disk that does not parse. `movedTo` is set when a writer moved it aside. */
export class CorruptFileError extends SwarmError {
  readonly file: string
  readonly movedTo?: string
  constructor(file: string, detail: string, options: SwarmErrorOptions & { movedTo?: string } = {}) {
    super(
      'SWARM_CORRUPT_FILE',
      options.movedTo ? `corrupt file ${file} (${detail}); moved aside to ${options.movedTo}` : `corrupt file ${file} (${detail})`,
      {
        exitCode: ExitCode.corrupt,
        hint: options.movedTo ? 'the original bytes are kept in the moved-aside file' : 'inspect or move the file aside; swarm will not overwrite it',
        ...options,
      },
    )
    this.file = file
    this.movedTo = options.movedTo
  }
}

export class LockTimeoutError extends SwarmError {
  constructor(file: string, options: SwarmErrorOptions = {}) {
    super('SWARM_LOCK_TIMEOUT', `could not take the lock on ${file}`, {
      exitCode: ExitCode.lockTimeout,
      hint: 'another process holds it; a dead holder is recovered after a few seconds — retry',
      ...options,
    })
  }
}

export class BackendUnavailableError extends SwarmError {
  constructor(message: string, options: SwarmErrorOptions = {}) {
    super('SWARM_BACKEND_UNAVAILABLE', message, { exitCode: ExitCode.backendUnavailable, ...options })
  }
}

/** The filesystem refused a write: disk full (ENOSPC, EDQUOT) or read-only (EROFS). */
export class FilesystemError extends SwarmError {
  constructor(code: string, message: string, options: SwarmErrorOptions = {}) {
    super(code, message, { exitCode: ExitCode.filesystem, ...options })
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
