import { afterEach, describe, expect, it } from 'vitest'
import fs from 'node:fs/promises'
import path from 'node:path'
import { runTool } from '../../src/agent/tool.js'
import { bashTool, MAX_BASH_OUTPUT_CHARS } from '../../src/agent/tools/bash.js'
import { isAlive } from '../../src/process/liveness.js'
import { HeadTailBuffer } from '../../src/agent/tools/shell.js'
import { makeContext } from './helpers.js'
import { isolatedEnv, useTempDir } from '../support/home.js'
import { waitFor } from '../support/wait.js'

let dir: string
const started: number[] = []
useTempDir('swarm-agent-', (d) => (dir = d))
afterEach(() => {
  // Reap anything a failing test left behind (before the directory goes).
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone: the expected case
    }
  }
})

async function readPid(file: string): Promise<number> {
  const pid = await waitFor(`a pid in ${file}`, async () => Number((await fs.readFile(file, 'utf8').catch(() => '')).trim()))
  started.push(pid)
  return pid
}

describe('Bash', () => {
  it('runs in ctx.cwd with ctx.env and returns stdout and stderr', async () => {
    const ctx = makeContext(dir, { env: isolatedEnv(dir, { GREETING: 'hello' }) })
    const result = await runTool(bashTool, { command: 'pwd; echo "$GREETING"; echo oops >&2' }, ctx)
    expect(result).toEqual({ content: `${dir}\nhello\noops`, isError: false })
  })

  it('reports a non-zero exit code as an error result', async () => {
    const result = await runTool(bashTool, { command: 'echo partial; exit 3' }, makeContext(dir))
    expect(result).toEqual({ content: 'partial\nExit code: 3', isError: true })
  })

  it('says when there was no output', async () => {
    expect(await runTool(bashTool, { command: 'true' }, makeContext(dir))).toEqual({ content: '(no output)', isError: false })
  })

  it('kills the whole process group on timeout, grandchildren included', async () => {
    const pidFile = path.join(dir, 'pid')
    // The timeout leaves a loaded machine time to start bash and write the pid first.
    const result = await runTool(bashTool, { command: `sleep 100 & echo $! > ${pidFile}; echo started; sleep 100`, timeout: 1_500 }, makeContext(dir))
    expect(result.isError).toBe(true)
    expect(result.content).toBe('started\nCommand timed out after 1500 ms; it and its child processes were killed.')
    expect(isAlive(await readPid(pidFile))).toBe(false)
  })

  it('escalates to SIGKILL for a group that ignores SIGTERM', async () => {
    const pidFile = path.join(dir, 'pid')
    const command = `trap '' TERM; (trap '' TERM; sleep 100) & echo $! > ${pidFile}; sleep 100`
    const ctx = makeContext(dir)
    const result = await runTool(bashTool, { command, timeout: 1_500 }, ctx)
    expect(result.content).toMatch(/timed out/)
    expect(isAlive(await readPid(pidFile))).toBe(false)
  })

  it('kills the group when the call is aborted', async () => {
    const pidFile = path.join(dir, 'pid')
    const controller = new AbortController()
    const running = runTool(bashTool, { command: `sleep 100 & echo $! > ${pidFile}; wait` }, makeContext(dir, { signal: controller.signal }))
    const pid = await readPid(pidFile)
    controller.abort()
    const result = await running
    expect(result).toEqual({ content: '(no output)\nCommand was aborted; it and its child processes were killed.', isError: true })
    expect(isAlive(pid)).toBe(false)
  })

  it('does not let background jobs outlive the call', async () => {
    const pidFile = path.join(dir, 'pid')
    const result = await runTool(bashTool, { command: `sleep 100 >/dev/null 2>&1 & echo $! > ${pidFile}; echo done` }, makeContext(dir))
    expect(result).toEqual({ content: 'done', isError: false })
    expect(isAlive(await readPid(pidFile))).toBe(false)
  })

  it('returns even when a background job holds the output pipe', async () => {
    const pidFile = path.join(dir, 'pid')
    const result = await runTool(bashTool, { command: `sleep 100 & echo $! > ${pidFile}; echo quick` }, makeContext(dir))
    expect(result.content).toBe('quick')
    expect(isAlive(await readPid(pidFile))).toBe(false)
  })

  it('caps long output, keeping the start and the end', async () => {
    const result = await runTool(bashTool, { command: 'echo START; seq 1 20000; echo END' }, makeContext(dir))
    expect(result.content.startsWith('START\n1\n')).toBe(true)
    expect(result.content).toMatch(/END\n\(output truncated: \d+ characters were cut from the middle\)$/)
    expect(result.content.length).toBeLessThan(MAX_BASH_OUTPUT_CHARS + 300)
  })

  it('streams output to onProgress', async () => {
    const chunks: string[] = []
    await runTool(bashTool, { command: 'echo a; echo b' }, makeContext(dir, { onProgress: (t) => chunks.push(t) }))
    expect(chunks.join('')).toBe('a\nb\n')
  })

  it('fails clearly when the working directory is gone', async () => {
    const result = await runTool(bashTool, { command: 'true' }, makeContext(path.join(dir, 'missing')))
    expect(result).toMatchObject({ isError: true, content: expect.stringMatching(/working directory does not exist/) })
  })

  it('clamps the timeout to the maximum and rejects a non-positive one', async () => {
    const result = await runTool(bashTool, { command: 'true', timeout: 0 }, makeContext(dir))
    expect(result).toMatchObject({ isError: true, content: expect.stringMatching(/^Invalid input for Bash: timeout/) })
  })
})

describe('HeadTailBuffer', () => {
  it('keeps everything under the cap', () => {
    const b = new HeadTailBuffer(10)
    b.append('abc')
    b.append('def')
    expect(b.text()).toBe('abcdef')
  })

  it('keeps the first and last halves of longer text, across many small appends', () => {
    const b = new HeadTailBuffer(10)
    for (const c of 'abcdefghijklmnopqrstuvwxyz') b.append(c)
    expect(b.text()).toBe('abcde\n\n[… 16 characters of output truncated …]\n\nvwxyz')
    expect(b.dropped).toBe(16)
  })
})
