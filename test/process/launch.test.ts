import { spawn } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CommandTimeoutError, launchProcess, runCommand, shellExitCode, startInTerminal } from '../../src/process/launch.js'
import { procStat } from '../../src/process/table.js'
import { isAlive, waitForExit } from '../../src/process/liveness.js'
import { killTree, processTree } from '../../src/process/tree.js'
import { FIXTURES } from '../backends/harness.js'
import { runsProgram } from '../support/proc.js'
import { waitFor } from '../support/wait.js'

describe('util/process', () => {
  it('runCommand returns code and output, feeds stdin, and reports a missing program as 127', async () => {
    expect(await runCommand('sh', ['-c', 'cat; echo err >&2; exit 3'], { input: 'in' })).toEqual({ code: 3, stdout: 'in', stderr: 'err\n' })
    expect((await runCommand('no-such-program-swarm', [])).code).toBe(127)
  })

  it('startInTerminal runs a program in this process group, hands it fd 3, and says why one never started', async () => {
    const started = startInTerminal('sh', ['-c', 'test "$(cat <&3)" = "seccomp bytes" && kill -TERM $$; exit 1'], {
      fd3: new TextEncoder().encode('seccomp bytes'),
    })
    expect(started.pid).toBeGreaterThan(0)
    // The foreground of this terminal: our group, not one of its own (it owns the keyboard with us).
    expect(procStat(started.pid!)?.pgid).toBe(procStat('self')?.pgid)
    const status = await started.exited
    expect(status).toEqual({ code: null, signal: 'SIGTERM' }) // it read the bytes on fd 3, then died by the signal
    expect(shellExitCode(status)).toBe(143)

    const missing = await startInTerminal('no-such-program-swarm', []).exited
    expect(missing).toMatchObject({ code: 127, error: expect.stringContaining('no-such-program-swarm ENOENT') })
    expect(shellExitCode(missing)).toBe(127)
  })

  it('launchProcess says why a program never started', async () => {
    const missing = await launchProcess('no-such-program-swarm', []).exited
    expect(missing).toMatchObject({ code: 127, signal: null, error: expect.stringContaining('ENOENT') })
  })

  it('runCommand kills the whole group on timeout, and does not wait for a grandchild holding stdout', async () => {
    // The bounds only tell "returned" from "waited for the sleep": far apart, so a loaded machine's slowness fits between.
    const started = Date.now()
    await expect(runCommand('sh', ['-c', 'sleep 60 & echo $!; wait'], { timeoutMs: 200 })).rejects.toBeInstanceOf(CommandTimeoutError)
    expect(Date.now() - started).toBeLessThan(20_000)
    // The command is done, its background child still holds stdout: we return anyway.
    const t = Date.now()
    const r = await runCommand('sh', ['-c', 'sleep 60 & echo $!'], { timeoutMs: 40_000 })
    expect(Date.now() - t).toBeLessThan(20_000)
    const sleeper = Number(r.stdout.trim())
    expect(isAlive(sleeper)).toBe(true)
    await killTree(sleeper, { graceMs: 0 })
  })

  it('killTree takes down the group and descendants that left it, escalating to SIGKILL', async () => {
    // A child ignoring SIGTERM, plus a grandchild in a session of its own.
    const p = launchProcess('sh', ['-c', "trap '' TERM; setsid sleep 600 & sleep 600 & wait"])
    // Both sleeps forked and exec'd (the setsid one has left the group by then).
    const tree = await waitFor('the sh and its two sleeps', async () => {
      const t = await processTree(p.pid)
      return t.filter((pid) => runsProgram(pid, 'sleep')).length === 2 && t
    })
    expect(tree.length).toBeGreaterThanOrEqual(3)
    const started = Date.now()
    await killTree(p.pid, { graceMs: 200 })
    expect(await waitForExit(tree, 10_000)).toBe(true)
    // Not after the sleeps' 600 s: SIGKILL came after the grace.
    expect(Date.now() - started).toBeLessThan(20_000)
    expect(tree.some(isAlive)).toBe(false)
  })

  it('processTree never includes this process or its ancestors', async () => {
    expect(await processTree(process.pid)).not.toContain(process.pid)
    expect(await processTree(process.ppid)).not.toContain(process.pid)
  })

  it('drains the live children, within the time limit, when swarm gets SIGTERM', async () => {
    const child = spawn(process.execPath, [path.join(FIXTURES, 'process-drain.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] })
    const line = await new Promise<string>((resolve) => child.stdout.once('data', (d) => resolve(String(d))))
    const { pids } = JSON.parse(line) as { pids: number[] }
    // The pids are printed right after the launch: the sh's have yet to fork their three sleeps.
    const trees = await waitFor('both trees with their three sleeps', async () => {
      const t = (await Promise.all(pids.map(processTree))).flat()
      return t.filter((pid) => runsProgram(pid, 'sleep')).length === 3 && t
    })
    expect(trees.length).toBeGreaterThanOrEqual(4)
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    child.kill('SIGTERM')
    expect(await exited).toBe(143)
    expect(await waitForExit(trees, 10_000)).toBe(true)
  })
})
