import path from 'node:path'

/**
 * Implementation workers of a coordinator declare the files they will change. Workers whose sets
 * overlap run one after another, in the order they were started; disjoint ones run at once. Two
 * paths overlap when they are equal or one is a directory holding the other.
 */
export class FileSetScheduler {
  private held: string[][] = []
  private waiting: Array<{ files: string[]; grant(): void }> = []

  constructor(private readonly cwd: string) {}

  /** Resolves once `files` may be changed; call the returned function when done. */
  async acquire(files: readonly string[], signal: AbortSignal): Promise<() => void> {
    const set = files.map((f) => path.resolve(this.cwd, f))
    if (!this.blocked(set, this.waiting.length)) return this.take(set)
    return new Promise((resolve, reject) => {
      const waiter = { files: set, grant: () => resolve(this.take(set)) }
      this.waiting.push(waiter)
      signal.addEventListener(
        'abort',
        () => {
          const i = this.waiting.indexOf(waiter)
          if (i < 0) return
          this.waiting.splice(i, 1)
          reject(new Error('stopped while waiting for its files'))
          this.pump()
        },
        { once: true },
      )
    })
  }

  /** Paths (absolute) held by running workers. */
  busy(): string[] {
    return this.held.flat()
  }

  private take(set: string[]): () => void {
    this.held.push(set)
    let released = false
    return () => {
      if (released) return
      released = true
      this.held.splice(this.held.indexOf(set), 1)
      this.pump()
    }
  }

  /** Overlaps a running set, or one of the first `before` waiters (who were first). */
  private blocked(set: string[], before: number): boolean {
    return this.held.some((h) => overlaps(h, set)) || this.waiting.slice(0, before).some((w) => overlaps(w.files, set))
  }

  private pump(): void {
    for (let i = 0; i < this.waiting.length; i++) {
      const w = this.waiting[i]!
      if (this.blocked(w.files, i)) continue
      this.waiting.splice(i--, 1)
      w.grant()
    }
  }
}

export function overlaps(a: readonly string[], b: readonly string[]): boolean {
  return a.some((x) => b.some((y) => x === y || x.startsWith(y + path.sep) || y.startsWith(x + path.sep)))
}

/** The file check of a finished worker: what it changed beyond what it declared. */
export function checkDeclaredFiles(cwd: string, declared: readonly string[], changed: readonly string[]): { ok: boolean; text: string } {
  const decl = declared.map((f) => path.resolve(cwd, f))
  const undeclared = changed.filter((c) => !decl.some((d) => c === d || c.startsWith(d + path.sep)))
  const rel = (f: string): string => path.relative(cwd, f) || f
  if (undeclared.length)
    return { ok: false, text: `changed files it did not declare: ${undeclared.map(rel).join(', ')} (declared: ${decl.map(rel).join(', ')})` }
  return { ok: true, text: changed.length ? `changed only declared files: ${changed.map(rel).join(', ')}` : 'changed no files' }
}
