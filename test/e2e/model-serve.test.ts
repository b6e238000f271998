import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { readArchive } from '../../src/mailbox/archive.js'
import { readInbox } from '../../src/mailbox/inbox.js'
import { inboxPath } from '../../src/home/paths.js'
import { isAlive } from '../../src/process/liveness.js'
import { processesWithEnv } from '../support/proc.js'
import { REPO } from '../support/repo.js'
import { waitFor } from '../support/wait.js'
import { BIN, sandbox, type Sandbox } from './helpers.js'

/**
 * `swarm model serve` as a newcomer runs it: a real server process whose printed environment a
 * real team then uses (examples/offline-team.yaml, in-process for speed): a message exchanged,
 * tasks, a Bash call bubbled to the leader and answered with `swarm perms`, across a `team resume`
 * with the server restarted too; stopped with SIGINT/SIGTERM, nothing left running.
 */
const EXAMPLE = path.join(REPO, 'examples/offline-team.yaml')

interface Served {
  child: ChildProcess
  env: { ANTHROPIC_BASE_URL: string; ANTHROPIC_API_KEY: string }
  port: number
  output: () => string
}

/** Collects a child's stdout and stderr. */
function collect(child: ChildProcess): () => string {
  let text = ''
  child.stdout!.on('data', (d) => (text += String(d)))
  child.stderr!.on('data', (d) => (text += String(d)))
  return () => text
}

async function serve(sb: Sandbox, args: string[] = []): Promise<Served> {
  const child = sb.start(process.execPath, [BIN, 'model', 'serve', '--scenario', EXAMPLE, '--json', ...args])
  const output = collect(child)
  const line = await waitFor(
    'the printed environment',
    () =>
      output()
        .split('\n')
        .find((l) => l.startsWith('{"url"')),
    15_000,
    { output },
  )
  const ready = JSON.parse(line) as { url: string; port: number; env: Served['env'] }
  expect(ready.env.ANTHROPIC_BASE_URL).toBe(ready.url)
  return { child, env: ready.env, port: ready.port, output }
}

async function stop(served: Served, signal: NodeJS.Signals): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => served.child.once('exit', (code) => resolve(code)))
  served.child.kill(signal)
  return exited
}

describe('swarm model serve', () => {
  let sb: Sandbox | undefined
  afterEach(async () => {
    await sb?.cleanup()
    sb = undefined
  })

  const leadSays = async (s: Sandbox, text: string) => {
    const file = inboxPath('offline', 'team-lead', s.env)
    return [...(await readArchive(file).catch(() => [])), ...(await readInbox(file).catch(() => []))].some((m) => m.text.includes(text))
  }
  /** The one pending request (a Bash call of bob's), by the id `swarm perms --json` gives. */
  const pendingBash = (s: Sandbox, env: NodeJS.ProcessEnv, except?: string) =>
    waitFor('a pending Bash request', async () => {
      const r = await s.swarm(['perms', 'offline', '--json'], { env })
      const list = JSON.parse(r.stdout) as { requests: Array<{ id: string; agent: string; toolName: string }> }
      return list.requests.find((q) => q.agent === 'bob' && q.toolName === 'Bash' && q.id !== except)?.id
    })
  const createTeam = (s: Sandbox, env: NodeJS.ProcessEnv) =>
    s.start(process.execPath, [BIN, 'team', 'create', 'offline', '--agents', 'alice,bob', '--backend', 'in-process', '--cwd', s.project], { env })

  it('runs a real team from the env it prints; a permission answered with swarm perms; SIGINT stops it and nothing is left', async () => {
    sb = sandbox()
    const served = await serve(sb)
    const env = { ...sb.env, ...served.env }
    const leader = createTeam(sb, env)
    const console = collect(leader)
    await waitFor('the console', () => console().includes('swarm leader — team offline'), 15_000, { output: console })
    expect((await sb.swarm(['send', 'offline', 'alice', 'Please get hello.txt written.'], { env })).code).toBe(0)
    const id = await pendingBash(sb, env)
    const approved = await sb.swarm(['perms', 'approve', 'offline', id], { env })
    expect(approved.code, approved.stderr).toBe(0)
    await waitFor('alice reports bob done', () => leadSays(sb!, 'bob finished task #1: hello.txt is written.'), 15_000, { output: console })
    expect(fs.readFileSync(path.join(sb.project, 'hello.txt'), 'utf8')).toBe('task #1: hello from bob\n')
    const tasks = await sb.swarm(['tasks', 'offline', 'list'], { env })
    expect(tasks.stdout).toMatch(/^1\s+completed\s+bob\s+-\s+Write hello\.txt$/m)
    // The log says which rule answered: the scenario played as written, not its fallback.
    expect(served.output()).toContain('"label":"hand-over"')
    expect(served.output()).toContain('"label":"report-done"')

    expect((await sb.swarm(['team', 'delete', 'offline', '--timeout', '5'], { env })).code).toBe(0)
    await waitFor('the leader gone', () => !isAlive(leader.pid!), 10_000)
    expect(await stop(served, 'SIGINT')).toBe(0)
    expect(processesWithEnv(`SWARM_HOME=${sb.env.SWARM_HOME}`)).toEqual([])
  }, 60_000)

  it('keeps working across team resume, with the server restarted on the same port (rules, not step counters)', async () => {
    sb = sandbox()
    let served = await serve(sb)
    const env = { ...sb.env, ...served.env }
    const leader = createTeam(sb, env)
    await waitFor('the team', async () => (await sb!.swarm(['send', 'offline', 'alice', 'Please get hello.txt written.'], { env })).code === 0)
    const first = await pendingBash(sb, env)
    // Everything goes while bob waits for the answer: the leader (and its teammates), the model.
    leader.kill('SIGKILL')
    await waitFor('the leader gone', () => !isAlive(leader.pid!))
    expect(await stop(served, 'SIGTERM')).toBe(0)
    served = await serve(sb, ['--port', String(served.port)])

    const resumed = sb.start(process.execPath, [BIN, 'team', 'resume', 'offline'], { env })
    const console = collect(resumed)
    const id = await pendingBash(sb, env, first)
    expect((await sb.swarm(['perms', 'approve', 'offline', id], { env })).code).toBe(0)
    await waitFor('alice reports bob done', () => leadSays(sb!, 'bob finished task #1'), 15_000, { output: console })
    expect(fs.readFileSync(path.join(sb.project, 'hello.txt'), 'utf8')).toBe('task #1: hello from bob\n')

    expect((await sb.swarm(['team', 'delete', 'offline', '--timeout', '5'], { env })).code).toBe(0)
    await waitFor('the resumed leader gone', () => !isAlive(resumed.pid!), 10_000)
    expect(await stop(served, 'SIGINT')).toBe(0)
    expect(processesWithEnv(`SWARM_HOME=${sb.env.SWARM_HOME}`)).toEqual([])
  }, 60_000)

  it('a missing or bad scenario file, or a port in use, is one line and exit 2', async () => {
    sb = sandbox()
    const run = (...args: string[]) => sb!.swarm(['model', 'serve', ...args])
    const lines = (r: { stderr: string }) => r.stderr.trim().split('\n')

    const missing = await run('--scenario', path.join(sb.root, 'nope.yaml'))
    expect(missing.code).toBe(2)
    expect(lines(missing)).toEqual([expect.stringMatching(/^swarm: cannot read scenario file .*nope\.yaml: ENOENT/)])

    const badKey = path.join(sb.root, 'bad-key.yaml')
    fs.writeFileSync(badKey, 'agents:\n  alice:\n    rules:\n      - when: { lastUserInclude: hi }\n        text: hello\n')
    const key = await run('--scenario', badKey)
    expect(key.code).toBe(2)
    expect(lines(key)).toEqual([expect.stringMatching(/invalid scenario file .*bad-key\.yaml: agents\.alice\.rules\.0\.when: .*lastUserInclude/)])

    const badYaml = path.join(sb.root, 'bad.yaml')
    fs.writeFileSync(badYaml, 'agents:\n  alice: [\n')
    const yaml = await run('--scenario', badYaml)
    expect(yaml.code).toBe(2)
    expect(lines(yaml)).toEqual([expect.stringMatching(/bad\.yaml does not parse: .*line \d+/)])

    const badRegex = path.join(sb.root, 'bad-regex.json')
    fs.writeFileSync(badRegex, JSON.stringify({ rules: [{ when: { toolResultMatches: '(' }, text: 'x' }] }))
    const regex = await run('--scenario', badRegex)
    expect(regex.code).toBe(2)
    expect(lines(regex)).toEqual([expect.stringMatching(/rules\.0\.when\.toolResultMatches: not a valid regular expression/)])

    const taken = net.createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    try {
      const port = (taken.address() as net.AddressInfo).port
      const inUse = await run('--scenario', EXAMPLE, '--port', String(port))
      expect(inUse.code).toBe(2)
      expect(lines(inUse)).toEqual([expect.stringMatching(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: EADDRINUSE`))])
      expect((await run('--scenario', EXAMPLE, '--port', 'eighty')).code).toBe(2)
    } finally {
      taken.close()
    }
  }, 30_000)
})
