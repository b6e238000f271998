import { describe, expect, it } from 'vitest'
import { bwrapArgs } from '../../src/sandbox/bwrap.js'
import { seccompArgs, seccompProgram } from '../../src/sandbox/seccomp.js'
import { defaultSandboxConfig, mergeSandboxSettings } from '../../src/sandbox/sandbox-settings.js'

/**
 * The seccomp program's bytes, run on a small classic-BPF interpreter against the seccomp_data of
 * the calls that matter (the kernel's own checks: every jump in range, the last insn a return).
 */

const ALLOW = 0x7fff0000
const EPERM = 0x00050001
const KILL = 0x80000000
const X64 = { audit: 0xc000003e, socket: 41, socketpair: 53, ioctl: 16, ioUring: 425, getpid: 39 }
const ARM64 = { audit: 0xc00000b7, socket: 198, socketpair: 199, ioctl: 29, ioUring: 425, getpid: 172 }

interface Insn {
  code: number
  jt: number
  jf: number
  k: number
}

function decode(buf: Buffer): Insn[] {
  expect(buf.length % 8).toBe(0)
  return Array.from({ length: buf.length / 8 }, (_, i) => ({
    code: buf.readUInt16LE(i * 8),
    jt: buf.readUInt8(i * 8 + 2),
    jf: buf.readUInt8(i * 8 + 3),
    k: buf.readUInt32LE(i * 8 + 4),
  }))
}

/** struct seccomp_data, little-endian: nr, arch, instruction_pointer, args[6] (64-bit each). */
function seccompData(arch: number, nr: number, args: bigint[] = []): Buffer {
  const d = Buffer.alloc(64)
  d.writeUInt32LE(nr >>> 0, 0)
  d.writeUInt32LE(arch >>> 0, 4)
  for (const [i, a] of args.entries()) d.writeBigUInt64LE(a, 16 + 8 * i)
  return d
}

/** Runs the only instructions the program may use: ld [k], jeq/jge #k, ret #k. */
function run(prog: Insn[], data: Buffer): number {
  let acc = 0
  for (let pc = 0; pc < prog.length; pc++) {
    const { code, jt, jf, k } = prog[pc]!
    if (code === 0x20) acc = data.readUInt32LE(k)
    else if (code === 0x15) pc += acc === k ? jt : jf
    else if (code === 0x35) pc += acc >= k ? jt : jf
    else if (code === 0x06) return k
    else throw new Error(`unexpected BPF code 0x${code.toString(16)} at ${pc}`)
  }
  throw new Error('fell off the end of the program')
}

function program(arch: 'x64' | 'arm64', blockUnixSockets: boolean): Insn[] {
  const buf = seccompProgram({ blockUnixSockets }, arch)
  expect(buf).toBeInstanceOf(Buffer)
  const prog = decode(buf!)
  prog.forEach((insn, i) => {
    if (insn.code === 0x15 || insn.code === 0x35) {
      expect(i + 1 + insn.jt, `jt of insn ${i}`).toBeLessThan(prog.length)
      expect(i + 1 + insn.jf, `jf of insn ${i}`).toBeLessThan(prog.length)
    }
  })
  expect(prog.at(-1)!.code).toBe(0x06)
  return prog
}

const AF_UNIX = 1n
const AF_INET = 2n
const TIOCSTI = 0x5412n
const TIOCLINUX = 0x541cn
const TCGETS = 0x5401n

for (const [arch, n] of [
  ['x64', X64],
  ['arm64', ARM64],
] as const) {
  describe(`seccomp program (${arch})`, () => {
    it('checks the architecture first: any other one is killed, whatever the call', () => {
      const prog = program(arch, true)
      expect(prog[0]).toEqual({ code: 0x20, jt: 0, jf: 0, k: 4 })
      expect(prog[1]).toMatchObject({ code: 0x15, k: n.audit, jt: 0 })
      for (const other of [0x40000003 /* i386 */, 0x40000028 /* arm */, X64.audit ^ ARM64.audit ^ n.audit]) {
        for (const nr of [n.getpid, 1, 0]) expect(run(prog, seccompData(other, nr))).toBe(KILL)
      }
    })

    it('refuses socket(AF_UNIX) and io_uring_setup with EPERM; other domains, socketpair and the rest pass', () => {
      const prog = program(arch, true)
      expect(run(prog, seccompData(n.audit, n.socket, [AF_UNIX, 1n, 0n]))).toBe(EPERM)
      // The domain is an int: high bits the kernel drops do not hide AF_UNIX.
      expect(run(prog, seccompData(n.audit, n.socket, [0xffffffff00000001n]))).toBe(EPERM)
      expect(run(prog, seccompData(n.audit, n.socket, [AF_INET, 1n, 0n]))).toBe(ALLOW)
      expect(run(prog, seccompData(n.audit, n.socketpair, [AF_UNIX, 1n, 0n]))).toBe(ALLOW)
      expect(run(prog, seccompData(n.audit, n.ioUring, [8n]))).toBe(EPERM)
      expect(run(prog, seccompData(n.audit, n.getpid))).toBe(ALLOW)
    })

    it('refuses ioctl TIOCSTI and TIOCLINUX with EPERM, comparing only the low 32 bits of the cmd', () => {
      for (const block of [true, false]) {
        const prog = program(arch, block)
        expect(run(prog, seccompData(n.audit, n.ioctl, [0n, TIOCSTI]))).toBe(EPERM)
        expect(run(prog, seccompData(n.audit, n.ioctl, [0n, TIOCLINUX]))).toBe(EPERM)
        expect(run(prog, seccompData(n.audit, n.ioctl, [0n, 0xdeadbeef00000000n | TIOCSTI]))).toBe(EPERM)
        expect(run(prog, seccompData(n.audit, n.ioctl, [0n, TCGETS]))).toBe(ALLOW)
      }
    })

    it('allowAllUnixSockets drops the socket and io_uring rules only', () => {
      const prog = program(arch, false)
      expect(run(prog, seccompData(n.audit, n.socket, [AF_UNIX, 1n, 0n]))).toBe(ALLOW)
      expect(run(prog, seccompData(n.audit, n.ioUring, [8n]))).toBe(ALLOW)
      expect(run(prog, seccompData(0x40000003, n.getpid))).toBe(KILL)
    })
  })
}

describe('seccomp program, x86_64 specifics and other arches', () => {
  it('kills x32 calls (the 0x40000000 bit) but lets nr -1 through (a tracer skipping a call)', () => {
    const prog = program('x64', true)
    expect(run(prog, seccompData(X64.audit, 0x40000000 | X64.getpid))).toBe(KILL)
    expect(run(prog, seccompData(X64.audit, 0x40000000 | X64.socket, [AF_UNIX]))).toBe(KILL)
    expect(run(prog, seccompData(X64.audit, 0xffffffff))).toBe(ALLOW)
    expect(prog).toHaveLength(16)
    expect(program('x64', false)).toHaveLength(12)
    expect(program('arm64', true)).toHaveLength(14)
  })

  it('has no program for an architecture it has no numbers for', () => {
    for (const arch of ['ia32', 'arm', 'riscv64', 'ppc64', 's390x']) expect(seccompProgram({ blockUnixSockets: true }, arch)).toBeUndefined()
  })

  it('bwrapArgs passes the program as --seccomp 3 before the command, and not without one', () => {
    const plan = { command: 'true', cwd: '/', writable: [], readOnly: [], hidden: [], network: true, setenv: {} }
    const withFilter = bwrapArgs({ ...plan, seccomp: seccompProgram({ blockUnixSockets: true }, 'x64') })
    const at = withFilter.indexOf('--seccomp')
    expect(withFilter.slice(at, at + 2)).toEqual(['--seccomp', '3'])
    expect(at).toBeLessThan(withFilter.indexOf('--'))
    expect(bwrapArgs(plan)).not.toContain('--seccomp')
    expect(seccompArgs({})).toEqual([])
  })
})

describe('sandbox.network Unix socket settings', () => {
  const file = { path: 's.json', baseDir: '/p' }

  it('allowAllUnixSockets turns the socket rule off; a later file can turn it on again', () => {
    const c = defaultSandboxConfig()
    expect(c.allowAllUnixSockets).toBe(false)
    const notes: string[] = []
    mergeSandboxSettings(c, { network: { allowAllUnixSockets: true } }, file, notes)
    expect(c.allowAllUnixSockets).toBe(true)
    mergeSandboxSettings(c, { network: { allowAllUnixSockets: false } }, file, notes)
    expect(c.allowAllUnixSockets).toBe(false)
    expect(notes).toEqual([])
  })

  it('allowUnixSockets by path is noted (swarm cannot allow by path) and allows nothing', () => {
    const c = defaultSandboxConfig()
    const notes: string[] = []
    mergeSandboxSettings(c, { network: { allowUnixSockets: ['/var/run/docker.sock'] } }, file, notes)
    expect(c.allowAllUnixSockets).toBe(false)
    expect(notes).toEqual([
      's.json: sandbox.network.allowUnixSockets: swarm cannot allow Unix sockets by path (seccomp sees no paths), so sandboxed commands get none — set sandbox.network.allowAllUnixSockets to allow them all',
    ])
    const both: string[] = []
    mergeSandboxSettings(c, { network: { allowUnixSockets: ['/x.sock'], allowAllUnixSockets: true } }, file, both)
    expect(both).toEqual([])
  })
})
