import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait.js'
import {
  approveShutdownRule,
  bash,
  type ClaudeSandbox,
  claudeProcessOf,
  claudeSandbox,
  leaderPane,
  memberStatus,
  paneText,
  requestsMentioning,
  typeInto,
  undeliveredRequests,
  tool,
} from './claude-harness.js'

const report = (marker: string) => tool('SendMessage', { to: 'team-lead', message: `${marker}: my scripted turn is done`, summary: marker })

/**
 * Claude Code teammates started with `team create` (`--agent name:claude`, and a team file's
 * `agent: claude`), answered at the leader console in its tmux pane, and `swarm inbox` showing
 * what Claude Code consumed.
 */
describe('Claude Code teammates of a started swarm team', () => {
  let sb: ClaudeSandbox
  const TEAM = 'crew'
  const FILE_TEAM = 'filed'

  beforeAll(async () => {
    sb = await claudeSandbox({
      // swarm's lead agent in the leader pane (it names itself with the x-swarm-agent header)
      agents: { 'team-lead': { rules: [{ when: { lastUserMatches: '.' }, text: 'Noted.' }] } },
      rules: [
        { when: { lastUserIncludes: 'PROBE-REPORT-FLAG' }, times: 1, ...report('REPORT-FLAG') },
        { when: { lastUserIncludes: 'PROBE-REPORT-FILE' }, times: 1, ...report('REPORT-FILE') },
        { when: { lastUserIncludes: 'PROBE-YES' }, ...bash('echo yes > yes.txt', 'write yes.txt') },
        { when: { lastUserIncludes: 'PROBE-NO' }, ...bash('echo no > no.txt', 'write no.txt') },
        { when: { toolResultIncludes: 'not today' }, times: 1, text: 'Understood, I will not.' },
        approveShutdownRule('cc'),
        approveShutdownRule('cf'),
      ],
      fallback: { text: 'ok.' },
    })
  })
  afterAll(async () => {
    if (process.env.INTEROP_DEBUG && sb) {
      const pane = leaderPane(sb, TEAM)
      if (pane) process.stderr.write(`--- leader console\n${paneText(sb, pane.id)}\n`)
    }
    await sb?.close()
  })

  it('team create --agent cc:claude starts it with the teammate argv; its scripted turn reports to the lead', async () => {
    const r = await sb.swarm(
      ['team', 'create', TEAM, '--agents', 'cc', '--agent', 'cc:claude', '--backend', 'tmux', '--no-attach', '--cwd', sb.project],
      {
        timeout: 60_000,
      },
    )
    expect(r.code, r.stderr).toBe(0)
    const cc = await waitFor('its Claude Code process', () => claudeProcessOf(TEAM, 'cc'), 30_000)
    expect(cc.argv).toEqual(expect.arrayContaining(['--agent-name', 'cc', '--team-name', TEAM, '--permission-mode', 'default']))
    expect(cc.argv[cc.argv.indexOf('--lead-verify-key') + 1]).toMatch(/^\d+\.[\w-]+$/)
    expect((await sb.swarm(['send', TEAM, 'cc', 'PROBE-REPORT-FLAG: report to the lead'])).code).toBe(0)
    const console = await waitFor('the leader console', () => leaderPane(sb, TEAM), 30_000)
    await waitFor('its report in the leader console', () => paneText(sb, console.id).includes('REPORT-FLAG'), 60_000)
  })

  it('swarm inbox shows what Claude Code consumed (deleted) as consumed', async () => {
    await waitFor('cc consumed its inbox', () => (sb.readJson<unknown[]>(sb.teamFile(TEAM, 'inboxes', 'cc.json')) ?? [1]).length === 0, 30_000)
    const r = await sb.swarm(['inbox', TEAM, 'cc', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const rows = JSON.parse(r.stdout) as Array<{ text: string; state: string; from: string }>
    expect(rows).toContainEqual(expect.objectContaining({ from: 'team-lead', text: 'PROBE-REPORT-FLAG: report to the lead', state: 'consumed' }))
    const text = await sb.swarm(['inbox', TEAM, 'cc'])
    expect(text.stdout).toMatch(/consumed/)
  })

  /**
   * Sends cc `text` until its Bash request is on the leader console's screen (Claude Code sometimes
   * fails to write its own request: "mailbox write failed"; the loopback counts those), and returns
   * the console's pane.
   */
  async function promptAtConsole(text: string, command: RegExp) {
    const ask = () => sb.swarm(['send', TEAM, 'cc', text])
    expect((await ask()).code).toBe(0)
    const console = leaderPane(sb, TEAM)!
    let failed = undeliveredRequests(sb.loopback)
    await waitFor(
      'the prompt in the leader console',
      async () => {
        if (undeliveredRequests(sb.loopback) > failed) {
          failed = undeliveredRequests(sb.loopback)
          await ask()
        }
        return new RegExp(`\\? \\[[^\\]]+\\] cc wants to use Bash: .*${command.source}`).test(paneText(sb, console.id))
      },
      60_000,
    )
    return console
  }

  it('a Bash request answered y at the leader console: the command runs', async () => {
    const console = await promptAtConsole('PROBE-YES please', /yes\.txt/)
    expect(fs.existsSync(path.join(sb.project, 'yes.txt'))).toBe(false)
    expect((await memberStatus(sb, TEAM, 'cc'))?.status).toBe('waiting')
    typeInto(sb, console.id, 'y')
    await waitFor('yes.txt', () => fs.existsSync(path.join(sb.project, 'yes.txt')), 30_000)
    await waitFor('the console says approved', () => /approved \S+: cc Bash/.test(paneText(sb, console.id)))
    await waitFor('cc idle', async () => (await memberStatus(sb, TEAM, 'cc'))?.status === 'idle', 30_000)
  })

  it('n with feedback at the leader console: the command never runs, the model gets the feedback', async () => {
    const console = await promptAtConsole('PROBE-NO now', /no\.txt/)
    typeInto(sb, console.id, 'n not today')
    await waitFor('the feedback reaches the model', () => requestsMentioning(sb.loopback, 'not today').length > 0, 30_000)
    await waitFor('the console says denied', () => /denied \S+: cc Bash/.test(paneText(sb, console.id)))
    expect(fs.existsSync(path.join(sb.project, 'no.txt'))).toBe(false)
    expect((await sb.swarm(['perms', TEAM, '--json'])).stdout).not.toContain('no.txt')
  })

  it('a team file member with agent: claude starts with the teammate argv and reports to the lead', async () => {
    const file = path.join(sb.root, 'team.yaml')
    fs.writeFileSync(
      file,
      `description: a Claude Code member from a team file\nmembers:\n  - name: cf\n    agent: claude\n    prompt: PROBE-REPORT-FILE then wait\n`,
    )
    const r = await sb.swarm(['team', 'create', FILE_TEAM, '--from', file, '--backend', 'tmux', '--no-attach', '--cwd', sb.project], {
      timeout: 60_000,
    })
    expect(r.code, r.stderr).toBe(0)
    const cf = await waitFor('its Claude Code process', () => claudeProcessOf(FILE_TEAM, 'cf'), 30_000)
    expect(cf.argv).toEqual(expect.arrayContaining(['--agent-id', `cf@${FILE_TEAM}`, '--agent-name', 'cf', '--team-name', FILE_TEAM]))
    expect(cf.argv[cf.argv.indexOf('--lead-verify-key') + 1]).toMatch(/^\d+\.[\w-]+$/)
    const console = await waitFor('the leader console', () => leaderPane(sb, FILE_TEAM), 30_000)
    await waitFor('its report in the leader console', () => paneText(sb, console.id).includes('REPORT-FILE'), 60_000)
    // Its prompt came from the lead, signed: Claude Code shows the model a verified lead message.
    const seen = requestsMentioning(sb.loopback, 'PROBE-REPORT-FILE')
    expect(JSON.stringify(seen)).not.toContain('verified=\\"false\\"')
    expect(JSON.parse((await sb.swarm(['inbox', FILE_TEAM, 'cf', '--json'])).stdout)).toContainEqual(
      expect.objectContaining({ text: 'PROBE-REPORT-FILE then wait', state: 'consumed' }),
    )
  })

  it('team delete shuts both Claude Code teammates down through the protocol', async () => {
    for (const [team, name] of [
      [TEAM, 'cc'],
      [FILE_TEAM, 'cf'],
    ] as const) {
      const r = await sb.swarm(['team', 'delete', team, '--json'], { timeout: 60_000 })
      expect(r.code, r.stderr).toBe(0)
      expect(JSON.parse(r.stdout)).toMatchObject({ exited: [name], killed: [] })
      expect(claudeProcessOf(team, name)).toBeUndefined()
    }
  })
})
