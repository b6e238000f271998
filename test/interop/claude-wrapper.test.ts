import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REPO } from '../support/repo.js'
import { waitFor } from '../support/wait.js'
import { ancestors, bash, type ClaudeLead, type ClaudeSandbox, claudeSandbox, claudeTeamName, startClaudeLead, tool } from './claude-harness.js'

const LAUNCHER = path.join(REPO, 'bin', 'swarm-claude-launcher.js')

/**
 * CLAUDE_CODE_PROCESS_WRAPPER set to swarm's launcher: a real Claude Code lead starts its teammate
 * (a self-spawn, in a split pane) through it, so that teammate — and every Bash command it or its
 * subagents run — is in swarm's sandbox: it writes in the project, not outside, and cannot read a
 * team's lead.key.
 */
describe("Claude Code's self-spawns in swarm's sandbox", () => {
  let sb: ClaudeSandbox
  let lead: ClaudeLead
  let keyFile: string
  let outside: string

  beforeAll(async () => {
    sb = await claudeSandbox({ rules: [], fallback: { text: 'ok.' } })
    // A swarm team in the same home: its private key must stay out of reach.
    expect((await sb.swarm(['team', 'create', 'guarded', '--no-start', '--cwd', sb.project])).code).toBe(0)
    expect((await sb.swarm(['send', 'guarded', 'team-lead', 'hello'])).code).toBe(0)
    keyFile = sb.teamFile('guarded', 'lead.key')
    outside = path.join(sb.root, 'outside')
    fs.mkdirSync(outside)
    sb.loopback.setScenario({
      rules: [
        {
          when: { lastUserIncludes: 'PROBE-WRAP' },
          times: 1,
          ...tool('Agent', { description: 'confined worker', prompt: 'PROBE-CONFINED run the probe', name: 'cw' }),
        },
        {
          when: { lastUserIncludes: 'PROBE-CONFINED' },
          times: 1,
          ...bash(`cat ${keyFile} > leaked.txt; echo out > ${outside}/out.txt; echo in > inside.txt`, 'probe the sandbox'),
        },
      ],
      fallback: { text: 'ok.' },
    })
    lead = startClaudeLead(sb, { prompt: 'PROBE-WRAP start a worker', env: { CLAUDE_CODE_PROCESS_WRAPPER: LAUNCHER } })
    await waitFor('the Claude Code team', () => claudeTeamName(sb), 60_000)
  })
  afterAll(async () => {
    if (process.env.INTEROP_DEBUG && lead) process.stderr.write(`--- lead screen\n${lead.screen()}\n`)
    await sb?.close()
  })

  it('its teammate runs under bubblewrap, started by the launcher', async () => {
    const cw = await waitFor(
      'the teammate process',
      () => {
        for (const entry of fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
          try {
            const argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')
            if (path.basename(argv[0] ?? '') === 'claude' && argv.includes('--agent-name') && argv[argv.indexOf('--agent-name') + 1] === 'cw')
              return Number(entry)
          } catch {
            // gone meanwhile
          }
        }
        return undefined
      },
      60_000,
    )
    expect(ancestors(cw)).toContain('bwrap')
  })

  it("its Bash writes in the project, not outside, and cannot read a team's lead.key", async () => {
    expect(fs.readFileSync(keyFile, 'utf8').length).toBeGreaterThan(0)
    await waitFor('the permission prompt in the lead', () => lead.screen().includes('inside.txt'), 60_000)
    lead.type('')
    await waitFor('the command ran', () => fs.existsSync(path.join(sb.project, 'inside.txt')), 30_000)
    expect(fs.existsSync(path.join(outside, 'out.txt'))).toBe(false)
    expect(fs.readFileSync(path.join(sb.project, 'leaked.txt'), 'utf8')).toBe('')
  })
})
