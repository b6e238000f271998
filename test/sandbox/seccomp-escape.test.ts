import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runTool } from '../../src/agent/tool.js'
import { bashTool } from '../../src/agent/tools/bash.js'
import { runCommand } from '../../src/process/launch.js'
import { bwrapArgs, findBwrap } from '../../src/sandbox/bwrap.js'
import { createBashSandbox, sandboxAvailability } from '../../src/sandbox/sandbox.js'
import { defaultSandboxConfig } from '../../src/sandbox/sandbox-settings.js'
import { makeContext } from '../agent/helpers.js'
import { type IsolatedHome, isolatedHome } from '../support/home.js'
import { hasTmux, reapTmux } from '../support/tmux.js'
import { waitFor } from '../support/wait.js'
import { GIT_ENV, initRepo } from '../worktrees/git-repo.js'

/**
 * The seccomp filter through the real Bash tool and createBashSandbox: a sandboxed command can
 * neither drive a tmux server through its socket (run-shell, send-keys) nor connect to any Unix
 * socket, nor push keystrokes into its terminal (TIOCSTI); with allowAllUnixSockets the same
 * commands reach the sockets, and outside the sandbox TIOCSTI works — the controls, same run.
 */

const available = await sandboxAvailability(defaultSandboxConfig(), process.env)
const HAS_PYTHON = spawnSync('python3', ['-c', 'import pty, fcntl, termios, ctypes, mmap']).status === 0
/** Kernels before 6.2 have no such switch and always allow TIOCSTI on one's own terminal. */
const LEGACY_TIOCSTI = (() => {
  try {
    return fs.readFileSync('/proc/sys/dev/tty/legacy_tiocsti', 'utf8').trim() !== '0'
  } catch {
    return true
  }
})()

/** In a pty of its own (its controlling terminal), pushes one key with TIOCSTI and says what happened. */
const TIOCSTI_PY = `
import os, pty, fcntl, termios, errno
pid, fd = pty.fork()
if pid == 0:
    try:
        fcntl.ioctl(0, termios.TIOCSTI, b'Z')
        r = 'injected'
    except OSError as e:
        r = 'refused ' + errno.errorcode[e.errno]
    os.write(1, (r + '\\n').encode())
    os._exit(0)
out = b''
while True:
    try:
        b = os.read(fd, 1024)
    except OSError:
        break
    if not b:
        break
    out += b
os.waitpid(pid, 0)
print(out.decode().strip())
`

/** x86_64 only: an i386 call (int 0x80), an x32 call, and nr -1, each from a 64-bit process. */
const FOREIGN_PY = `
import ctypes, mmap, sys
if sys.argv[1] == 'int80':
    m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    m.write(bytes([0xb8, 20, 0, 0, 0, 0xcd, 0x80, 0xc3]))  # mov eax, 20 (i386 getpid); int 0x80; ret
    print('returned', ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))())
else:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    r = libc.syscall(ctypes.c_long({'x32': 0x40000000 | 39, 'minus1': -1}[sys.argv[1]]))
    print('returned', r, 'errno', ctypes.get_errno())
`

const CLIENT_JS = `
const s = require('net').connect(process.argv[2])
s.on('data', (d) => { console.log('connected', d.toString().trim()); process.exit(0) })
s.on('error', (e) => { console.log('refused', e.code); process.exit(3) })
`

const PIPES_JS = `
const cp = require('child_process')
const upper = cp.execSync('echo hi | tr a-z A-Z').toString().trim()
const cat = cp.spawnSync('sh', ['-c', 'cat'], { input: 'through a pipe' }).stdout.toString()
cp.exec('echo async', (err, out) => console.log(upper, cat, out.trim(), err ? err.message : 'ok'))
`

let iso: IsolatedHome
let scripts: string
beforeEach(() => {
  iso = isolatedHome('swarm-seccomp-', GIT_ENV)
  scripts = path.join(iso.base, 'scripts')
  fs.mkdirSync(scripts)
  for (const [name, text] of Object.entries({ 'tiocsti.py': TIOCSTI_PY, 'foreign.py': FOREIGN_PY, 'client.js': CLIENT_JS, 'pipes.js': PIPES_JS }))
    fs.writeFileSync(path.join(scripts, name), text)
})
/** Environments of the tmux servers a test started, reaped by their socket. */
const servers: NodeJS.ProcessEnv[] = []
afterEach(async () => {
  for (const env of servers.splice(0)) await reapTmux(env, 'victim')
  await iso.cleanup()
})

/** One Bash tool call in a fresh sandbox that may write only the project directory. */
async function sandboxedBash(command: string, o: { allowAllUnixSockets?: boolean } = {}): Promise<string> {
  const sandbox = createBashSandbox({
    config: { ...defaultSandboxConfig(), allowAllUnixSockets: o.allowAllUnixSockets ?? false },
    env: iso.env,
    label: 'seccomp-test',
    hidden: [],
    readOnly: [],
    writableDirs: () => [iso.project],
  })
  try {
    expect((await sandbox.statusFor(command)).status).toBe('sandboxed')
    return (await runTool(bashTool, { command }, makeContext(iso.project, { sandbox, env: iso.env }))).content
  } finally {
    await sandbox.close()
  }
}

const exists = (p: string) => fs.existsSync(p)

describe.skipIf(available.status !== 'sandboxed')(`seccomp filter in the Bash sandbox (${available.reason})`, () => {
  it('the probe loads the filter', () => {
    expect(available.reason).toContain('with the seccomp filter')
  })

  // The mounts hide the default tmux socket directories and the pane's own socket; a server on any
  // other path (here its own TMUX_TMPDIR) is stopped by the filter alone.
  it.skipIf(!hasTmux)(
    'tmux run-shell and send-keys through a server socket fail and create nothing; allowAllUnixSockets lets them through',
    async () => {
      const serverEnv = { ...iso.env, TMUX_TMPDIR: path.join(iso.base, 'other-tmux') }
      fs.mkdirSync(serverEnv.TMUX_TMPDIR)
      servers.push(serverEnv)
      const sock = path.join(serverEnv.TMUX_TMPDIR, `tmux-${process.getuid?.() ?? 0}`, 'victim')
      execFileSync('tmux', ['-L', 'victim', 'new-session', '-d', '-s', 'victim', '-c', iso.base, 'bash --norc --noprofile'], { env: serverEnv })
      const attack = (tag: string) =>
        `tmux -S ${sock} run-shell 'touch ${iso.base}/ran-${tag}'; tmux -S ${sock} send-keys -t victim 'touch ${iso.base}/typed-${tag}' Enter`

      const blocked = await sandboxedBash(attack('blocked'))
      expect(blocked).toContain(`error connecting to ${sock} (Operation not permitted)`)

      await sandboxedBash(attack('allowed'), { allowAllUnixSockets: true })
      await waitFor(
        'the allowed escape to run in the tmux server',
        () => exists(`${iso.base}/ran-allowed`) && exists(`${iso.base}/typed-allowed`),
        10_000,
      )
      // The allowed call came later and landed: had the blocked one reached the server, its files would be there.
      expect(exists(`${iso.base}/ran-blocked`)).toBe(false)
      expect(exists(`${iso.base}/typed-blocked`)).toBe(false)
    },
  )

  it('a Unix socket served outside cannot be connected to from inside (EPERM); allowAllUnixSockets connects', async () => {
    const sockPath = path.join(iso.base, 'agent.sock')
    let connections = 0
    const server = net.createServer((s) => {
      connections++
      s.end('hello\n')
    })
    await new Promise<void>((resolve) => server.listen(sockPath, resolve))
    try {
      const command = `node ${scripts}/client.js ${sockPath}`
      const blocked = await sandboxedBash(command)
      expect(blocked).toContain('refused EPERM')
      expect(connections).toBe(0)
      expect(await sandboxedBash(command, { allowAllUnixSockets: true })).toContain('connected hello')
      expect(connections).toBe(1)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it.skipIf(!HAS_PYTHON || !LEGACY_TIOCSTI)(
    'TIOCSTI on its own terminal is refused inside (allowAllUnixSockets too); outside, and in bwrap without the filter, it works',
    async () => {
      const script = path.join(scripts, 'tiocsti.py')
      expect(execFileSync('python3', [script], { env: iso.env, encoding: 'utf8' })).toContain('injected')
      const plan = { command: `python3 ${script}`, cwd: iso.project, writable: [iso.project], readOnly: [], hidden: [], network: true, setenv: {} }
      const unfiltered = await runCommand(findBwrap(process.env)!, bwrapArgs(plan), { env: iso.env, timeoutMs: 10_000 })
      expect(unfiltered.stdout).toContain('injected')

      expect(await sandboxedBash(`python3 ${script}`)).toContain('refused EPERM')
      expect(await sandboxedBash(`python3 ${script}`, { allowAllUnixSockets: true })).toContain('refused EPERM')
    },
  )

  it('pipes, child processes, git and bash pipelines still work inside', async () => {
    initRepo(iso.project, iso.env)
    const out = await sandboxedBash(
      [
        `node ${scripts}/pipes.js`,
        'git status --short --branch && echo x > new.txt && git status --porcelain',
        'seq 1 1000 | sort -rn | head -1 | (read n; echo "max=$n")',
        'echo "sub=$(echo inner | wc -c)"',
      ].join(' && '),
    )
    expect(out).toContain('HI through a pipe async ok')
    expect(out).toContain('## main')
    expect(out).toContain('?? new.txt')
    expect(out).toContain('max=1000')
    expect(out).toContain('sub=6')
    expect(out).not.toContain('Exit code')
  })

  it.skipIf(process.arch !== 'x64' || !HAS_PYTHON)(
    'an i386 (int 0x80) or x32 call from inside kills the process with SIGSYS; nr -1 passes',
    async () => {
      const script = path.join(scripts, 'foreign.py')
      const outside = spawnSync('python3', [script, 'x32'], { env: iso.env, encoding: 'utf8' })
      expect(outside.status).toBe(0)
      const out = await sandboxedBash(`for w in int80 x32 minus1; do python3 ${script} $w; echo "$w exit $?"; done`)
      expect(out).toContain('int80 exit 159') // 128 + SIGSYS
      expect(out).toContain('x32 exit 159')
      expect(out).toMatch(/returned -1 errno 38\nminus1 exit 0/) // ENOSYS from the kernel, not the filter
      expect(out).toContain('Bad system call')
    },
  )
})
