import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, expect } from 'vitest'
import { readMemberState } from '../../src/store/member-state.js'
import { isAlive } from '../../src/process/liveness.js'
import { type ModelSandbox, modelSandbox, type Sandbox } from '../e2e/helpers.js'
import { waitFor } from '../support/wait.js'

/*
 * Finding 6's fixture: a teammate's Bash command that runs `sleep <a>` in the foreground and a
 * double-forked, setsid'd `sleep <b>` (out of its process group and its tree). The sleeps are
 * found by their unique durations in /proc, not by anything swarm writes.
 */

export interface Job {
  fg: number
  escaped: number
  command: string
}

/** Two durations no other test uses. */
export function newJob(): Job {
  const base = 600_000 + Math.floor(Math.random() * 300_000) * 2
  const fg = base
  const escaped = base + 1
  return { fg, escaped, command: `(setsid sh -c 'exec sleep ${escaped}' &); exec sleep ${fg}` }
}

/** Pids of processes whose command line is exactly `sleep <seconds>`. */
export function sleepers(seconds: number): number[] {
  const out: number[] = []
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue
    try {
      if (fs.readFileSync(`/proc/${e}/cmdline`, 'utf8') === `sleep\0${seconds}\0` && isAlive(Number(e))) out.push(Number(e))
    } catch {
      // gone
    }
  }
  return out
}

/** The scripted teammate: on "start the job" it runs the job's Bash command. */
export function jobScenario(name: string, job: Job) {
  return {
    agents: {
      [name]: [
        { content: [{ type: 'tool_use' as const, name: 'Bash', input: { command: job.command } }], when: { lastUserIncludes: 'start the job' } },
        { text: 'job done' },
      ],
    },
    fallback: { text: 'Noted.' },
  }
}

/** Waits until both sleeps of `job` run, approving any permission request on the way. */
export async function waitForJob(sb: Sandbox, team: string, job: Job): Promise<{ fg: number; escaped: number }> {
  return waitFor(
    'the job running (both sleeps)',
    async () => {
      const fg = sleepers(job.fg)[0]
      const escaped = sleepers(job.escaped)[0]
      if (fg && escaped) return { fg, escaped }
      const r = await sb.swarm(['perms', team, '--json'])
      const pending = r.code === 0 ? (JSON.parse(r.stdout) as { requests: Array<{ id: string }> }).requests : []
      for (const p of pending) await sb.swarm(['perms', 'approve', team, p.id])
      return undefined
    },
    30_000,
  )
}

/** SIGKILLs the process in `name`'s state file and waits for it to be gone. */
export async function sigkillMember(sb: Sandbox, team: string, name: string): Promise<number> {
  const pid = (await readMemberState(team, name, sb.env))?.pid
  expect(pid, `${name} has a pid`).toBeGreaterThan(0)
  process.kill(pid!, 'SIGKILL')
  await waitFor(`${name} gone`, () => !isAlive(pid!), 15_000)
  return pid!
}

/** Kills leftovers of a failed run (so a failing test does not leak sleeps). */
export function killSleepers(job: Job): void {
  for (const pid of [...sleepers(job.fg), ...sleepers(job.escaped)]) process.kill(pid, 'SIGKILL')
}

/**
 * Per test: a new job, a loopback model playing it for `bob`, and a sandbox using that model;
 * everything (the sleeps included, should a test fail) is reaped after each test.
 */
export function jobFixture(make: () => Job = newJob): () => Promise<{ sb: Sandbox; job: Job }> {
  let t: ModelSandbox | undefined
  let job: Job | undefined
  afterEach(async () => {
    if (job) killSleepers(job)
    await t?.close()
    t = job = undefined
  })
  return async () => {
    job = make()
    t = await modelSandbox(jobScenario('bob', job))
    const { sb } = t
    // Without the Bash sandbox (off, or bwrap missing): bwrap's --die-with-parent and pid
    // namespace would take the orphans down with their agent; the reaper is what is tested here.
    fs.mkdirSync(sb.env.SWARM_HOME!, { recursive: true })
    fs.writeFileSync(path.join(sb.env.SWARM_HOME!, 'settings.json'), JSON.stringify({ sandbox: { enabled: false } }))
    return { sb, job }
  }
}

/** Everything a child prints (stdout and stderr), so far. */
export function output(child: ChildProcess): () => string {
  let text = ''
  child.stdout?.on('data', (d) => (text += String(d)))
  child.stderr?.on('data', (d) => (text += String(d)))
  return () => text
}

/** `team create crew --agents bob` on `backend`, Bash allowed without asking, in the project. */
export function createArgs(sb: Sandbox, backend: 'tmux' | 'in-process'): string[] {
  return ['team', 'create', 'crew', '--agents', 'bob', '--backend', backend, '--mode', 'bypassPermissions', '--cwd', sb.project]
}
