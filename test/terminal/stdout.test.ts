import { spawn } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { isolatedEnv, useTempDir } from '../support/home.js'
import { REPO, requireBuilt } from '../support/repo.js'

const OUTPUT = path.join(REPO, 'dist/terminal/output.js')

interface Run {
  code: number | null
  stdout: Buffer
  stderr: string
}

/** Runs `body` (an ES module importing println/writeStdout from the build) in a node child; its stdout a pipe the test reads. */
function child(dir: string, body: string, opts: { readBytes?: number } = {}): Promise<Run> {
  requireBuilt('dist/terminal/output.js')
  const source = `import { println, printJson, writeStdout } from ${JSON.stringify(OUTPUT)}\n${body}`
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--input-type=module', '-e', source], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: isolatedEnv(dir, { NO_COLOR: '1' }),
    })
    const out: Buffer[] = []
    let err = ''
    let got = 0
    const timer = setTimeout(() => p.kill('SIGKILL'), 20_000)
    p.stdout.on('data', (b: Buffer) => {
      out.push(b)
      got += b.length
      // A reader that goes away after its first bytes (`swarm status | head -c N`).
      if (opts.readBytes !== undefined && got >= opts.readBytes) p.stdout.destroy()
    })
    p.stderr.on('data', (b: Buffer) => (err += b.toString()))
    p.on('error', reject)
    p.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout: Buffer.concat(out), stderr: err })
    })
  })
}

/** Prints to stderr whether the child created a stream for its stdout: for a pipe, a net.Socket (the ES module loader has loaded node:stream already). */
const LOADED = "(await import('node:fs')).writeSync(2, JSON.stringify(process.moduleLoadList.filter((m) => m === 'NativeModule net')))"

describe('what commands print (terminal/output.ts writeStdout)', () => {
  let dir: string
  useTempDir('swarm-stdout-', (d) => (dir = d))

  it('reaches a pipe without creating process.stdout (node:net not loaded)', async () => {
    const r = await child(dir, `println('one'); printJson({ two: 2 }); writeStdout('three'); ${LOADED}`)
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.toString()).toBe('one\n{\n  "two": 2\n}\nthree')
    expect(JSON.parse(r.stderr)).toEqual([])
  })

  it('keeps the order when process.stdout is used in between: from then on all of it goes through the stream', async () => {
    const r = await child(
      dir,
      `println('a'); process.stdout.write('b\\n'); println('c'); const big = 'x'.repeat(1 << 20); for (let i = 0; i < 4; i++) { process.stdout.write(String(i)); println(big) }`,
    )
    expect(r.code, r.stderr).toBe(0)
    const text = r.stdout.toString()
    expect(text.slice(0, 6)).toBe('a\nb\nc\n')
    // Each stream write before its println, though the pipe fills (the stream queues on a full non-blocking pipe).
    expect([...text.slice(6).matchAll(/(\d)x+\n/g)].map((m) => m[1])).toEqual(['0', '1', '2', '3'])
    expect(text.length).toBe(6 + 4 * (1 + (1 << 20) + 1))
  })

  it('writes a large output whole to a reader slower than the writer', async () => {
    const r = await child(dir, `for (let i = 0; i < 64; i++) println(String(i).padStart(4, '0') + 'y'.repeat(64 * 1024))`)
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stdout.toString().trimEnd().split('\n')
    expect(lines.map((l) => l.slice(0, 4))).toEqual(Array.from({ length: 64 }, (_, i) => String(i).padStart(4, '0')))
  })

  it('ends, as process.stdout does, when the reader goes away (EPIPE) instead of hanging', async () => {
    const r = await child(dir, `for (let i = 0; i < 256; i++) println('z'.repeat(64 * 1024))`, { readBytes: 1 })
    expect(r.code).not.toBeNull() // exited by itself: not killed by the 20 s guard
    expect(r.stderr).toMatch(/EPIPE/)
  })
})
