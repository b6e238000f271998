import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { execa } from 'execa'
import { isAlive } from '../../src/process/liveness.js'
import { processTree } from '../../src/process/tree.js'
import { REPO } from './repo.js'
import { waitFor } from './wait.js'

/**
 * A "remote" machine for the remote-teammate suites: Debian's real sshd, started by the test, with
 * key-only auth and its own host key, authorized_keys and config in the test's directory. Where
 * network namespaces work (root, `ip netns`), the host is a namespace of its own reached over a
 * veth pair, with `tc netem` delay on both ends (50 ms each way by default: 100 ms RTT); elsewhere
 * sshd listens on a loopback address and `mode` says so. The remote user is root, but its session
 * gets a HOME, PATH, TMPDIR and TMUX_TMPDIR of the test's own (sshd_config `SetEnv`), so nothing
 * lands in /root or /tmp. Its `swarm` is this checkout's bin/swarm.js on its PATH: the same
 * machine, another HOME — the helper and the local CLI are of one version by construction.
 * The local ssh client uses only the config file and known_hosts written here (`-F`, through
 * SWARM_SSH_CONFIG), never ~/.ssh.
 */
export interface TestHost {
  /**
   * `netns` (a namespace and a veth pair) or `loopback` (no namespace could be made), then how the
   * delay is added: `+netem` (tc on both veth ends) or `+delaying-proxy` (a TCP relay that holds
   * each chunk, where the kernel has no sch_netem).
   */
  mode: string
  /** The `--host` value: `root@<address>[:port]`. */
  host: string
  /** A Host alias of the ssh config that names the same machine (hosts named in ssh config work as they are). */
  alias: string
  /** The address of this side of the link, where the remote reaches the test's servers (a loopback model). */
  localAddress: string
  /** The client's ssh config (SWARM_SSH_CONFIG). */
  sshConfig: string
  /** The remote user's HOME, and its state root (SWARM_HOME unset there: `~/.claude`). */
  remoteHome: string
  remoteSwarmHome: string
  /** The remote's TMUX_TMPDIR. */
  remoteTmux: string
  /** The first directory of the remote's PATH (its `swarm`): a program put here is installed on the host. */
  remoteBin: string
  /** One-way delay added on each veth end (0 on loopback). */
  delayMs: number
  /** Stops sshd and every process under it (a wedged host: SIGSTOP, `unwedge` SIGCONT). */
  wedge(): Promise<void>
  unwedge(): Promise<void>
  /** sshd's listener pid. */
  readonly sshdPid: number
  /** Reaps sshd and everything it started, the remote tmux server, the namespace and the veth pair. */
  stop(): Promise<void>
}

const canNetns = (() => {
  if (process.getuid?.() !== 0) return false
  try {
    fs.accessSync('/usr/sbin/ip', fs.constants.X_OK)
    return true
  } catch {
    return false
  }
})()

/** Whether sshd is installed here (the remote suites skip, by this explicit condition, without it). */
export const hasSshd = fs.existsSync('/usr/sbin/sshd') && fs.existsSync('/usr/bin/ssh')

async function run(file: string, args: string[]): Promise<void> {
  const r = await execa(file, args, { reject: false, stdin: 'ignore' })
  if (r.exitCode !== 0) throw new Error(`${file} ${args.join(' ')}: exit ${r.exitCode}: ${r.stderr}`)
}

async function netns(name: string, hostIf: string, remoteIf: string, net: number, delayMs: number): Promise<'none' | 'netns' | 'netem'> {
  try {
    await run('ip', ['netns', 'add', name])
    await run('ip', ['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', remoteIf])
    await run('ip', ['link', 'set', remoteIf, 'netns', name])
    await run('ip', ['addr', 'add', `10.231.${net}.1/30`, 'dev', hostIf])
    await run('ip', ['link', 'set', hostIf, 'up'])
    await run('ip', ['netns', 'exec', name, 'ip', 'addr', 'add', `10.231.${net}.2/30`, 'dev', remoteIf])
    await run('ip', ['netns', 'exec', name, 'ip', 'link', 'set', remoteIf, 'up'])
    await run('ip', ['netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up'])
  } catch {
    await removeNetns(name, hostIf)
    return 'none'
  }
  if (delayMs === 0) return 'netns'
  try {
    await run('tc', ['qdisc', 'add', 'dev', hostIf, 'root', 'netem', 'delay', `${delayMs}ms`])
    await run('ip', ['netns', 'exec', name, 'tc', 'qdisc', 'add', 'dev', remoteIf, 'root', 'netem', 'delay', `${delayMs}ms`])
    return 'netem'
  } catch {
    // No sch_netem in this kernel ("Specified qdisc kind is unknown"): the delay is a proxy's.
    return 'netns'
  }
}

/**
 * A TCP relay on 127.0.0.1 that holds every chunk `delayMs` in each direction, in order: the
 * delay where the kernel has no netem. Cutting its connections is not needed by any test.
 */
function delayingProxy(target: { host: string; port: number }, delayMs: number): Promise<{ port: number; close(): void }> {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host)
    sockets.add(client).add(upstream)
    const pipe = (from: net.Socket, to: net.Socket) => {
      from.on('data', (d) => setTimeout(() => to.destroyed || to.write(d), delayMs))
      from.on('end', () => setTimeout(() => to.end(), delayMs))
      from.on('error', () => to.destroy())
      from.on('close', () => {
        sockets.delete(from)
        setTimeout(() => to.destroy(), delayMs)
      })
    }
    pipe(client, upstream)
    pipe(upstream, client)
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: (server.address() as net.AddressInfo).port,
        close() {
          for (const s of sockets) s.destroy()
          server.close()
        },
      }),
    ),
  )
}

async function removeNetns(name: string, hostIf: string): Promise<void> {
  await execa('ip', ['link', 'del', hostIf], { reject: false, stdin: 'ignore' })
  await execa('ip', ['netns', 'del', name], { reject: false, stdin: 'ignore' })
}

/** Starts the test host under `base` (the test's temp directory); `stop()` it in afterAll. */
export async function startTestHost(base: string, opts: { delayMs?: number } = {}): Promise<TestHost> {
  const dir = path.join(base, 'sshd')
  const remoteHome = path.join(dir, 'remote-home')
  const remoteTmp = path.join(dir, 'remote-tmp')
  const remoteTmux = path.join(dir, 'remote-tmux')
  const remoteBin = path.join(dir, 'remote-bin')
  for (const d of [dir, remoteHome, remoteTmp, remoteTmux, remoteBin]) fs.mkdirSync(d, { recursive: true, mode: 0o700 })
  // The remote's `swarm`: this checkout, run by this node.
  fs.writeFileSync(path.join(remoteBin, 'swarm'), `#!/bin/sh\nexec ${process.execPath} ${path.join(REPO, 'bin/swarm.js')} "$@"\n`, { mode: 0o755 })
  const hostKey = path.join(dir, 'host_ed25519')
  const clientKey = path.join(dir, 'id_ed25519')
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey])
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', clientKey])
  fs.copyFileSync(`${clientKey}.pub`, path.join(dir, 'authorized_keys'))

  const tag = randomBytes(3).toString('hex')
  const name = `swt-${tag}`
  const hostIf = `swh${tag}`
  const subnet = 1 + (randomBytes(1)[0]! % 250)
  const delayMs = opts.delayMs ?? 50
  const made = canNetns ? await netns(name, hostIf, `swr${tag}`, subnet, delayMs) : 'none'
  const inNetns = made !== 'none'
  const address = inNetns ? `10.231.${subnet}.2` : '127.0.0.1'
  const port = inNetns ? 22 : 20_000 + (randomBytes(2).readUInt16BE() % 20_000)
  const pidFile = path.join(dir, 'sshd.pid')
  // /run/sshd: sshd's privilege-separation directory (Debian's service makes it; a bare sshd needs it).
  fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 })
  const env = [
    `HOME=${remoteHome}`,
    `PATH=${remoteBin}:/usr/local/bin:/usr/bin:/bin`,
    `TMPDIR=${remoteTmp}`,
    `TMUX_TMPDIR=${remoteTmux}`,
    `XDG_CONFIG_HOME=${remoteHome}/.config`,
    `XDG_DATA_HOME=${remoteHome}/.local/share`,
    `XDG_STATE_HOME=${remoteHome}/.local/state`,
    `XDG_CACHE_HOME=${remoteHome}/.cache`,
    `GIT_CONFIG_GLOBAL=${remoteHome}/.gitconfig`,
    'GIT_CONFIG_NOSYSTEM=1',
    'NO_COLOR=1',
  ]
  const config = path.join(dir, 'sshd_config')
  fs.writeFileSync(
    config,
    [
      `Port ${port}`,
      `ListenAddress ${address}`,
      `HostKey ${hostKey}`,
      `PidFile ${pidFile}`,
      `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      'PermitRootLogin prohibit-password',
      'UsePAM no',
      'StrictModes no',
      'PrintMotd no',
      'PrintLastLog no',
      'AcceptEnv none',
      `SetEnv ${env.join(' ')}`,
      '',
    ].join('\n'),
  )
  fs.writeFileSync(path.join(remoteHome, '.gitconfig'), '[user]\n\tname = Swarm Remote\n\temail = remote@example.invalid\n')
  const sshd: ChildProcess = inNetns
    ? spawn('ip', ['netns', 'exec', name, '/usr/sbin/sshd', '-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'], detached: true })
    : spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'], detached: true })
  let sshdLog = ''
  sshd.stderr?.on('data', (d: Buffer) => (sshdLog += d.toString()))

  const proxy = made === 'netem' || delayMs === 0 ? undefined : await delayingProxy({ host: address, port }, delayMs)
  const dial = proxy ? { address: '127.0.0.1', port: proxy.port } : { address, port }
  const knownHosts = path.join(dir, 'known_hosts')
  const hostPub = fs.readFileSync(`${hostKey}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ')
  const alias = 'swarm-test-remote'
  const keyName = `swarm-test-host-${tag}`
  fs.writeFileSync(knownHosts, `${keyName} ${hostPub}\n`)
  const sshConfig = path.join(dir, 'ssh_config')
  const common = [
    '  User root',
    `  IdentityFile ${clientKey}`,
    '  IdentitiesOnly yes',
    `  UserKnownHostsFile ${knownHosts}`,
    '  GlobalKnownHostsFile /dev/null',
    '  StrictHostKeyChecking yes',
    '  CheckHostIP no',
    `  HostKeyAlias ${keyName}`,
  ]
  // `Host <name>` for the alias, and for `root@<name>:<port>` (the --host form) a name that resolves nowhere but here.
  const hostName = `remote-${tag}.swarm-test`
  fs.writeFileSync(sshConfig, [`Host ${alias} ${hostName}`, `  HostName ${dial.address}`, `  Port ${dial.port}`, ...common, ''].join('\n'))

  const sshdPid = await waitFor(
    'sshd to write its pid file',
    () => fs.existsSync(pidFile) && Number(fs.readFileSync(pidFile, 'utf8').trim()),
    10_000,
    {
      output: () => sshdLog,
    },
  )
  await waitFor(
    'sshd to accept the key',
    async () =>
      (await execa('ssh', ['-F', sshConfig, '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=3', alias, 'true'], { reject: false, stdin: 'ignore' }))
        .exitCode === 0,
    15_000,
    { intervalMs: 100, output: () => sshdLog },
  )
  const tree = async () => [sshdPid, ...(await processTree(sshdPid))].filter(isAlive)
  return {
    mode: `${inNetns ? 'netns' : 'loopback'}${made === 'netem' ? '+netem' : proxy ? '+delaying-proxy' : ''}`,
    host: `root@${hostName}:${dial.port}`,
    alias,
    localAddress: inNetns ? `10.231.${subnet}.1` : '127.0.0.1',
    sshConfig,
    remoteHome,
    remoteSwarmHome: path.join(remoteHome, '.claude'),
    remoteTmux,
    remoteBin,
    delayMs: made === 'netem' || proxy ? delayMs : 0,
    sshdPid,
    async wedge() {
      for (const pid of await tree()) process.kill(pid, 'SIGSTOP')
    },
    async unwedge() {
      for (const pid of await tree()) process.kill(pid, 'SIGCONT')
    },
    async stop() {
      const pids = await tree()
      for (const pid of pids) process.kill(pid, 'SIGCONT')
      // The remote's tmux servers (started by sshd sessions, living on after them).
      for (const sub of fs.existsSync(remoteTmux) ? fs.readdirSync(remoteTmux) : []) {
        for (const sock of fs.readdirSync(path.join(remoteTmux, sub))) {
          await execa('tmux', ['-S', path.join(remoteTmux, sub, sock), 'kill-server'], { reject: false, stdin: 'ignore' })
        }
      }
      for (const pid of pids) if (isAlive(pid)) process.kill(pid, 'SIGKILL')
      if (sshd.exitCode === null) sshd.kill('SIGKILL')
      proxy?.close()
      if (inNetns) await removeNetns(name, hostIf)
    },
  }
}

/**
 * A directory with an `ssh` that logs each command line it is given to a file, then runs the real
 * one: put first on PATH, it is how a remote test sees what swarm (or git through swarm's master)
 * ran over ssh. `lines(text)` are the logged lines containing `text`; `calls(words)` counts the
 * remote commands made of those words (swarm quotes each argument).
 */
export function sshCallLog(root: string): { dir: string; lines(text: string): string[]; calls(words: string[]): number } {
  const dir = path.join(root, 'shims')
  const log = path.join(root, 'ssh-calls.log')
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, 'ssh'), `#!/bin/sh\necho "$*" >> ${log}\nexec /usr/bin/ssh "$@"\n`, { mode: 0o755 })
  const lines = (text: string) =>
    fs.existsSync(log)
      ? fs
          .readFileSync(log, 'utf8')
          .split('\n')
          .filter((l) => l.includes(text))
      : []
  return { dir, lines, calls: (words) => lines(words.map((w) => `'${w}'`).join(' ')).length }
}
