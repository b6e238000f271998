import { CorruptFileError, FilesystemError, type SwarmError } from '../errors.js'

/*
 * What the filesystem refused, said in one line naming the path: the errno errors of swarm's own
 * file work (ENOSPC, EROFS, a directory or a symbolic link where swarm keeps a file) become
 * SwarmErrors with the README's exit codes. The CLI funnel applies it to any raw errno error.
 */

/**
 * The SwarmError for an errno error, or undefined for the others. `fallbackPath` names where the
 * write went when the error names no path (a failed write(2) has none): the state root.
 */
export function explainErrno(err: unknown, fallbackPath: string): SwarmError | undefined {
  const e = err as NodeJS.ErrnoException
  if (!e || typeof e !== 'object' || typeof e.code !== 'string') return undefined
  const where = e.path ?? fallbackPath
  switch (e.code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return new FilesystemError('SWARM_DISK_FULL', `disk full: cannot write ${where}`, {
        cause: err,
        hint: 'free space on that disk (or point SWARM_HOME at another), then retry',
      })
    case 'EROFS':
      return new FilesystemError('SWARM_READ_ONLY', `read-only file system: cannot write ${where}`, {
        cause: err,
        hint: 'point SWARM_HOME at a writable directory, or remount the disk read-write',
      })
    case 'EISDIR':
      return new CorruptFileError(where, 'a directory where swarm keeps a file', {
        cause: err,
        hint: 'move the directory aside; swarm will not touch it',
      })
    case 'ENOTDIR':
      return new CorruptFileError(where, 'a file where swarm keeps a directory', { cause: err, hint: 'move the file aside; swarm will not touch it' })
    case 'ELOOP':
      return symlinkRefused(where, err)
    default:
      return undefined
  }
}

/** What refusing a symbolic link where swarm keeps a file says (exit 5); the link is neither followed nor replaced. */
export function symlinkRefused(file: string, cause?: unknown): CorruptFileError {
  return new CorruptFileError(file, SYMLINK_DETAIL, { ...(cause !== undefined && { cause }), hint: 'remove the link' })
}

const SYMLINK_DETAIL = 'a symbolic link where swarm keeps a file; not followed'

/** True for symlinkRefused's error: a link is left where it is, never moved aside as a corrupt file is. */
export function isSymlinkRefusal(err: unknown): boolean {
  return err instanceof CorruptFileError && err.message === `corrupt file ${err.file} (${SYMLINK_DETAIL})`
}
