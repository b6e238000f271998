import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createExecutor } from '../../src/backends/registry.js'
import { currentTeammate } from '../../src/backends/teammate-context.js'
import type { InProcessExecutor, TeammateContext } from '../../src/backends/types.js'
import { FIXTURES, tempDir } from './harness.js'
import { isolatedEnv } from '../support/home.js'

const run = promisify(execFile)

describe('in-process backend', () => {
  let executor: InProcessExecutor
  let output: string[]
  let home: string
  const base = { team: 'inp', cwd: '/' }
  beforeEach(() => {
    output = []
    home = tempDir('swarm-inp-')
    executor = createExecutor('in-process', { env: isolatedEnv(home, { SWARM_HOME: home }), output: (t) => output.push(t) })
  })
  afterEach(async () => {
    await executor.killAll()
    fs.rmSync(home, { recursive: true, force: true })
  })

  it('gives each teammate its own identity, cwd and signal, across awaits and timers', async () => {
    const seen: Record<string, string[]> = {}
    const body = async (ctx: TeammateContext) => {
      const at = () => `${currentTeammate()?.name}:${currentTeammate()?.cwd}`
      seen[ctx.name] = [at()]
      await new Promise((r) => setTimeout(r, 10))
      seen[ctx.name].push(at())
      await new Promise<void>((r) =>
        setImmediate(() => {
          seen[ctx.name].push(at())
          r()
        }),
      )
      return 0
    }
    await Promise.all(['a', 'b', 'c'].map((name) => executor.spawn({ ...base, name, cwd: `/w/${name}`, run: body })))
    await Promise.all(['a', 'b', 'c'].map((n) => executor.wait(`${n}@inp`)))
    for (const n of ['a', 'b', 'c']) expect(seen[n]).toEqual(Array(3).fill(`${n}:/w/${n}`))
    expect(currentTeammate()).toBeUndefined()
  })

  it('kill aborts one teammate only; a throw or a rejection ends only the one that failed', async () => {
    const forever = (ctx: TeammateContext) => new Promise<number>((resolve) => ctx.signal.addEventListener('abort', () => resolve(0)))
    let steadySignal: AbortSignal | undefined
    await executor.spawn({ ...base, name: 'victim', run: forever })
    await executor.spawn({
      ...base,
      name: 'steady',
      run: (ctx) => {
        steadySignal = ctx.signal
        return forever(ctx)
      },
    })
    await executor.spawn({
      ...base,
      name: 'thrower',
      run: () => {
        throw new Error('sync boom')
      },
    })
    await executor.spawn({
      ...base,
      name: 'rejecter',
      run: async () => {
        await Promise.resolve()
        throw new Error('async boom')
      },
    })
    await executor.kill('victim@inp')
    expect(await executor.wait('thrower@inp')).toEqual({ state: 'dead', reason: 'crashed: sync boom' })
    expect(await executor.wait('rejecter@inp')).toEqual({ state: 'dead', reason: 'crashed: async boom' })
    const status = await executor.status(['victim@inp', 'steady@inp'])
    expect(status.get('victim@inp')).toEqual({ state: 'dead', reason: 'killed' })
    expect(status.get('steady@inp')).toEqual({ state: 'alive' })
    expect(steadySignal?.aborted).toBe(false)
    expect(output.join('')).toMatch(/thrower │ crashed: Error: sync boom/)
  })

  it("neutralises terminal control in what a teammate prints (a crash's message), on the leader's terminal and in a hosted view", async () => {
    const hostile = 'x\x1b[2J\x1b]0;owned\x07\x9b31m'
    await executor.spawn({ ...base, name: 'wild', run: () => Promise.reject(new Error(hostile)) })
    await executor.wait('wild@inp')
    const viewed: string[] = []
    const hosted = createExecutor('in-process', { env: isolatedEnv(home, { SWARM_HOME: home }), outputFor: () => (t) => viewed.push(t) })
    await hosted.spawn({ ...base, name: 'wild2', run: () => Promise.reject(new Error(hostile)) })
    await hosted.wait('wild2@inp')
    await hosted.killAll()
    for (const text of [output.join(''), viewed.join('')]) {
      expect(text).toContain('x␛[2J␛]0;owned␇')
      // biome-ignore lint/suspicious/noControlCharactersInRegex: no control byte may reach a terminal
      expect(text).not.toMatch(/[\x1b\x07\x9b]/)
    }
  })

  it('prefixes every output line with the teammate name', async () => {
    await executor.spawn({
      ...base,
      name: 'talker',
      color: 'green',
      run: (ctx) => {
        ctx.print('one\ntwo')
        return 0
      },
    })
    expect(await executor.wait('talker@inp')).toEqual({ state: 'exited', code: 0 })
    expect(output.join('')).toBe('talker │ one\ntalker │ two\n')
  })

  it('refuses a second teammate with a running name', async () => {
    await executor.spawn({ ...base, name: 'dup', run: (ctx) => new Promise((r) => ctx.signal.addEventListener('abort', () => r(0))) })
    await expect(executor.spawn({ ...base, name: 'dup', run: () => 0 })).rejects.toThrow(/already running/)
  })

  it('an uncaught error or a floating rejection in one teammate leaves the leader and the others running', async () => {
    const { stdout } = await run(process.execPath, [path.join(FIXTURES, 'in-process-leader.mjs')], {
      env: isolatedEnv(home),
      timeout: 10_000,
    })
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!)
    expect(result.states['timer-crash']).toEqual({ state: 'dead', reason: 'crashed: boom' })
    expect(result.states.floating).toEqual({ state: 'dead', reason: 'crashed: float' })
    expect(result.states.steady).toEqual({ state: 'exited', code: 0 })
    expect(result.lines.join('')).toContain('steady │ I am steady')
    expect(result.leader).toBe(true)
  })
})
