import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { installedHandlers, nextStopSignal, onCleanup, onCrash, onExit, onStopSignal } from '../../src/process/handlers.js'
import { CLEANUP_TIME_LIMIT_MS } from '../../src/process/signals.js'
import { waitFor } from '../support/wait.js'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const FIXTURE = path.join(HERE, '../fixtures/process-handlers.mjs')
const SRC = path.join(HERE, '../../src')

function start(mode: string) {
  const child = spawn(process.execPath, [FIXTURE, mode], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  const saw = (text: string) => waitFor(`the fixture to print "${text}"`, () => out.includes(text), 15_000, { output: () => out })
  return { child, exited, saw }
}

describe('process-wide handlers', () => {
  it('are installed with the first hook and removed with the last', () => {
    const before = { exit: process.listenerCount('exit'), term: process.listenerCount('SIGTERM'), crash: process.listenerCount('uncaughtException') }
    expect(installedHandlers()).toEqual({ exit: false, signals: false, crash: false })
    const a = onExit(() => {})
    const b = onExit(() => {})
    const c = onStopSignal(() => {})
    const d = onCrash(() => false)
    expect(installedHandlers()).toEqual({ exit: true, signals: true, crash: true })
    expect(process.listenerCount('exit')).toBe(before.exit + 1)
    expect(process.listenerCount('SIGTERM')).toBe(before.term + 1)
    a()
    expect(installedHandlers().exit).toBe(true)
    b()
    b() // twice is harmless
    c()
    d()
    expect(installedHandlers()).toEqual({ exit: false, signals: false, crash: false })
    expect(process.listenerCount('exit')).toBe(before.exit)
    expect(process.listenerCount('SIGTERM')).toBe(before.term)
    expect(process.listenerCount('uncaughtException')).toBe(before.crash)
    const e = onCleanup(() => {})
    expect(installedHandlers().signals).toBe(true)
    e()
    expect(installedHandlers().signals).toBe(false)
  })

  it('nextStopSignal releases its claim when its AbortSignal fires', async () => {
    const done = new AbortController()
    const waiting = nextStopSignal(done.signal)
    expect(installedHandlers().signals).toBe(true)
    done.abort()
    expect(await waiting).toBeUndefined()
    expect(installedHandlers().signals).toBe(false)
  })

  it('a claimed signal goes to the program; a second one exits at once with 128+N', async () => {
    const p = start('claim')
    expect(await p.saw('ready')).toBe(true)
    p.child.kill('SIGTERM')
    expect(await p.saw('stopping SIGTERM')).toBe(true)
    p.child.kill('SIGINT')
    expect(await p.exited).toEqual({ code: 130, signal: null })
  })

  it('an unclaimed signal runs the cleanups, then exits 128+N', async () => {
    const p = start('cleanup')
    expect(await p.saw('ready')).toBe(true)
    p.child.kill('SIGHUP')
    expect(await p.exited).toEqual({ code: 129, signal: null })
    expect(await p.saw('cleanup')).toBe(true)
  })

  it('a cleanup that never finishes is cut off at the hard time limit', async () => {
    const p = start('hang')
    expect(await p.saw('ready')).toBe(true)
    const t0 = Date.now()
    p.child.kill('SIGTERM')
    expect(await p.exited).toEqual({ code: 143, signal: null })
    const took = Date.now() - t0
    expect(took).toBeGreaterThanOrEqual(CLEANUP_TIME_LIMIT_MS - 100)
    expect(took, 'cut off, not left to hang: the margin is for a loaded machine').toBeLessThan(CLEANUP_TIME_LIMIT_MS + 6_000)
  }, 15_000)

  it('is the only module in src/ that listens to the process itself', () => {
    const offenders: string[] = []
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, e.name)
        if (e.isDirectory()) walk(file)
        else if (file.endsWith('.ts') && file !== path.join(SRC, 'process/handlers.ts')) {
          if (/\bprocess\.(on|once|off|addListener|prependListener|removeListener|removeAllListeners)\(/.test(fs.readFileSync(file, 'utf8')))
            offenders.push(path.relative(SRC, file))
        }
      }
    }
    walk(SRC)
    expect(offenders).toEqual([])
  })
})
