/**
 * The sandbox's seccomp filter: a classic-BPF program (bwrap's `--seccomp FD` reads it to EOF)
 * that refuses, in the kernel, what no mount can: creating AF_UNIX sockets (tmux, docker, ssh-agent
 * and D-Bus sockets stay connectable on a read-only mount) and pushing keystrokes into a terminal.
 */

/** The fd bwrap reads the program from; the spawner writes the bytes into a pipe there. */
const SECCOMP_FD = 3

interface ArchTable {
  audit: number
  socket: number
  ioctl: number
  ioUringSetup: number
  /** x86_64 only: the x32 ABI's syscall numbers carry this bit under the same AUDIT_ARCH. */
  x32Bit?: number
}

/** Node's `process.arch` → the kernel's numbers (asm/unistd.h, linux/audit.h). */
const ARCHES: Record<string, ArchTable> = {
  x64: { audit: 0xc000003e, socket: 41, ioctl: 16, ioUringSetup: 425, x32Bit: 0x40000000 },
  arm64: { audit: 0xc00000b7, socket: 198, ioctl: 29, ioUringSetup: 425 },
}

const AF_UNIX = 1
const TIOCSTI = 0x5412
const TIOCLINUX = 0x541c
const EPERM = 1

// linux/filter.h, linux/seccomp.h
const LD_W_ABS = 0x20
const JEQ_K = 0x15
const JGE_K = 0x35
const RET_K = 0x06
const RET_ALLOW = 0x7fff0000
const RET_ERRNO = 0x00050000
const RET_KILL_PROCESS = 0x80000000
// struct seccomp_data: nr, arch, instruction_pointer, args[6]; an arg's low 32 bits come first (little-endian).
const NR = 0
const ARCH = 4
const argLow = (i: number) => 16 + 8 * i

type Target = 'next' | 'native' | 'ioctl' | 'allow' | 'deny' | 'kill'
type Step = { code: number; k: number; jt?: Target; jf?: Target; label?: Target }

/**
 * The program, or undefined on an architecture it has no numbers for (the caller says so).
 * Layout: foreign arch (i386 `int 0x80`, arm32 compat) → kill; x32 numbers → kill; io_uring_setup
 * and socket(AF_UNIX) → EPERM unless Unix sockets are allowed; ioctl TIOCSTI/TIOCLINUX → EPERM;
 * everything else → allow. A foreign-arch or x32 call is never legitimate here, and a 32-bit
 * program refused each call (exit included) would run on in an undefined state: it is killed
 * whole (SIGSYS, "Bad system call"). io_uring goes with the socket rule because IORING_OP_SOCKET
 * creates sockets without the socket syscall, so seccomp would never see them.
 */
export function seccompProgram(o: { blockUnixSockets: boolean }, arch: string = process.arch): Buffer | undefined {
  const a = ARCHES[arch]
  if (!a) return undefined
  const steps: Step[] = [
    { code: LD_W_ABS, k: ARCH },
    { code: JEQ_K, k: a.audit, jf: 'kill' },
    { code: LD_W_ABS, k: NR },
  ]
  if (a.x32Bit !== undefined) {
    // Of the numbers past the x32 bit only -1 passes: what a ptrace tracer sets to skip a call (libseccomp does the same).
    steps.push({ code: JGE_K, k: a.x32Bit, jf: 'native' }, { code: JEQ_K, k: 0xffffffff, jt: 'allow', jf: 'kill' })
  }
  steps.push({ code: JEQ_K, k: a.ioctl, jf: o.blockUnixSockets ? 'next' : 'allow', jt: 'ioctl', label: 'native' })
  if (o.blockUnixSockets) {
    steps.push(
      { code: JEQ_K, k: a.ioUringSetup, jt: 'deny' },
      { code: JEQ_K, k: a.socket, jf: 'allow' },
      { code: LD_W_ABS, k: argLow(0) }, // the domain is an int
      { code: JEQ_K, k: AF_UNIX, jt: 'deny', jf: 'allow' },
    )
  }
  steps.push(
    { code: LD_W_ABS, k: argLow(1), label: 'ioctl' }, // the cmd is an unsigned int: the kernel ignores the high half
    { code: JEQ_K, k: TIOCSTI, jt: 'deny' },
    { code: JEQ_K, k: TIOCLINUX, jt: 'deny', jf: 'allow' },
    { code: RET_K, k: RET_ALLOW, label: 'allow' },
    { code: RET_K, k: RET_ERRNO | EPERM, label: 'deny' },
    { code: RET_K, k: RET_KILL_PROCESS, label: 'kill' },
  )
  return assemble(steps)
}

/** Resolves the named jump targets to the relative offsets BPF wants (u8, counted from the next insn). */
function assemble(steps: Step[]): Buffer {
  const at = new Map<Target, number>(steps.flatMap((s, i) => (s.label ? [[s.label, i] as const] : [])))
  const offset = (i: number, t: Target | undefined) => {
    if (t === undefined || t === 'next') return 0
    const d = at.get(t)! - i - 1
    if (!(d >= 0 && d < 256)) throw new Error(`seccomp: jump to ${t} out of range`)
    return d
  }
  const buf = Buffer.alloc(steps.length * 8)
  steps.forEach((s, i) => {
    buf.writeUInt16LE(s.code, i * 8)
    buf.writeUInt8(offset(i, s.jt), i * 8 + 2)
    buf.writeUInt8(offset(i, s.jf), i * 8 + 3)
    buf.writeUInt32LE(s.k >>> 0, i * 8 + 4)
  })
  return buf
}

/** bwrap's argv for the plan's filter (empty without one): the caller puts the bytes at SECCOMP_FD. */
export function seccompArgs(plan: { seccomp?: Buffer }): string[] {
  return plan.seccomp ? ['--seccomp', String(SECCOMP_FD)] : []
}
