/**
 * Finds a Claude Code teammate's own session, to continue it with `--resume`: Claude Code 2.1.332
 * keeps each session at `<config dir>/projects/<cwd, every non-alphanumeric as ->/<session id>.jsonl`,
 * and a teammate's lines carry its `teamName` and `agentName`. The newest matching file wins.
 */
import fs from 'node:fs/promises'
import path from 'node:path'

export interface ClaudeSession {
  sessionId: string
  file: string
  /** Its last write, ms: the teammate's last activity. */
  mtimeMs: number
}

export function claudeProjectDir(configDir: string, cwd: string): string {
  return path.join(configDir, 'projects', cwd.replace(/[^a-zA-Z0-9]/g, '-'))
}

const SESSION_FILE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl$/

export async function findClaudeSession(configDir: string, cwd: string, team: string, name: string): Promise<ClaudeSession | undefined> {
  const dir = claudeProjectDir(configDir, cwd)
  const names = await fs.readdir(dir).catch(() => [] as string[])
  const marks = [`"teamName":${JSON.stringify(team)}`, `"agentName":${JSON.stringify(name)}`]
  let best: ClaudeSession | undefined
  for (const n of names.filter((f) => SESSION_FILE.test(f))) {
    const file = path.join(dir, n)
    const stat = await fs.stat(file).catch(() => undefined)
    if (!stat || (best && stat.mtimeMs <= best.mtimeMs)) continue
    const head = await readHead(file, 64 * 1024)
    if (marks.every((m) => head.includes(m))) best = { sessionId: n.slice(0, -'.jsonl'.length), file, mtimeMs: stat.mtimeMs }
  }
  return best
}

async function readHead(file: string, bytes: number): Promise<string> {
  const handle = await fs.open(file, 'r').catch(() => undefined)
  if (!handle) return ''
  try {
    const buf = Buffer.alloc(bytes)
    const { bytesRead } = await handle.read(buf, 0, bytes, 0)
    return buf.subarray(0, bytesRead).toString('utf8')
  } finally {
    await handle.close()
  }
}
