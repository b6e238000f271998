import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { allowAll, type ToolContext } from '../../src/agent/tool.js'
import { unsandboxed } from '../../src/sandbox/unsandboxed.js'
import { unmetered } from '../../src/agent/spend-meter.js'

/** A fresh temp directory (realpath, so paths compare equal on macOS too). */
export async function tempDir(prefix = 'swarm-agent-'): Promise<string> {
  return fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), prefix)))
}

export function makeContext(cwd: string, overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    cwd,
    signal: new AbortController().signal,
    agentName: 'tester',
    teamName: 'team',
    checkPermission: allowAll,
    sandbox: unsandboxed('a test context'),
    meter: unmetered('a test context'),
    ...overrides,
  }
}
