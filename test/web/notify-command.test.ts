import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { runNotifyCommand } from '../../src/asks/notify-command.js'
import { isolatedHome } from '../support/home.js'
import { afterTest, useLoopback } from '../support/agent-team.js'

/**
 * The `notify` setting: the user's command runs once per request as a real process, told of the
 * request through its environment and stdin only — a request's text never becomes part of a
 * command line, whatever it holds.
 */
useLoopback(() => undefined) // its per-test cleanup removes the homes

const request = {
  team: 'crew',
  id: 'perm-mx00000-abcdef',
  kind: 'permission' as const,
  agent: 'alice',
  toolName: 'Bash',
  inputLines: ['echo $(touch pwned) `touch pwned2`; touch pwned3'],
  always: ['Bash(echo:*)'],
}

function home(notify?: unknown) {
  const h = isolatedHome('swarm-notify-')
  afterTest(h.cleanup)
  if (notify !== undefined) fs.writeFileSync(path.join(h.home, 'settings.json'), JSON.stringify({ notify }))
  return h
}

describe('the notify setting', () => {
  it('runs the command with the request in its environment and on stdin, never in its argv', async () => {
    const h = home()
    const out = path.join(h.base, 'got.json')
    // The script writes what it was given; a shell would have run the request's $(…) and `…`.
    const script = path.join(h.base, 'hook.cjs')
    fs.writeFileSync(
      script,
      `let s='';process.stdin.on('data',d=>s+=d).on('end',()=>require('node:fs').writeFileSync(${JSON.stringify(out)},JSON.stringify({argv:process.argv.slice(2),stdin:JSON.parse(s),text:process.env.SWARM_REQUEST_TEXT,short:process.env.SWARM_REQUEST_SHORT_ID,agent:process.env.SWARM_REQUEST_AGENT})))`,
    )
    fs.writeFileSync(path.join(h.home, 'settings.json'), JSON.stringify({ notify: { command: [process.execPath, script, 'fixed-arg'] } }))
    await expect(runNotifyCommand(request, { env: h.env })).resolves.toBe(0)
    const got = JSON.parse(fs.readFileSync(out, 'utf8'))
    expect(got.argv).toEqual(['fixed-arg'])
    expect(got.stdin).toEqual(request)
    expect(got.agent).toBe('alice')
    expect(got.short).toBe('abcdef')
    expect(got.text).toContain('alice asks to use Bash: echo $(touch pwned)')
  })

  it('no setting: nothing runs; a failing command is reported, not thrown; a bad setting names the file', async () => {
    await expect(runNotifyCommand(request, { env: home().env })).resolves.toBeUndefined()
    const problems: string[] = []
    await expect(
      runNotifyCommand(request, { env: home({ command: [process.execPath, '-e', 'process.exit(3)'] }).env, onProblem: (l) => problems.push(l) }),
    ).resolves.toBe(3)
    expect(problems[0]).toMatch(/exited 3/)
    const bad: string[] = []
    await runNotifyCommand(request, { env: home({ command: 'curl -d hi ntfy.sh/x' }).env, onProblem: (l) => bad.push(l) })
    expect(bad[0]).toMatch(/settings\.json/)
  })
})
