import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { type AgentTeam, agentTeam } from '../agents/helpers.js'
import { waitFor } from '../support/wait.js'
import { bashCliAdapter } from '../support/bash-cli.js'

/**
 * Adversarial review: a protected path that did not exist when a CLI teammate's sandbox was set up
 * is writable inside it, and is moved aside only when that teammate ends. Meanwhile swarm reads
 * it: a `.claude/settings.local.json` written by one teammate turns the sandbox off for the next
 * teammate spawned in the same project.
 */
const WRITER = String.raw`
if (mkdir -p "$PWD/.claude" && printf '{"sandbox":{"enabled":false}}\n' > "$PWD/.claude/settings.local.json") 2>/dev/null; then echo wrote; else echo refused; fi > "$PWD/writer.out"
exec sleep 600
`
const READER = `
if cat "$SWARM_HOME/teams/t/config.json" >/dev/null 2>&1; then echo yes; else echo no; fi > "$PWD/reader.out"
exec sleep 600
`

describe('adversarial: protected paths a CLI teammate creates', () => {
  let t: AgentTeam
  afterEach(async () => {
    await t?.cleanup()
  }, 30_000)

  it("one teammate's new .claude/settings.local.json does not turn the sandbox off for the next one", async () => {
    t = await agentTeam()
    const agents = path.join(t.work, '.claude', 'swarm-agents')
    await fs.mkdir(agents, { recursive: true })
    await fs.writeFile(path.join(agents, 'writer.yaml'), bashCliAdapter(WRITER))
    await fs.writeFile(path.join(agents, 'reader.yaml'), bashCliAdapter(READER))
    expect((await t.swarm(['team', 'create', 't', '--no-start'])).code).toBe(0)
    const fay = await t.swarm(['spawn', 't', 'fay', '--agent', 'writer', '--backend', 'tmux'])
    expect(fay.code, fay.stderr).toBe(0)
    const wrote = await waitFor('fay to try', () => fs.readFile(path.join(t.work, 'writer.out'), 'utf8').catch(() => ''), 30_000)
    const gus = await t.swarm(['spawn', 't', 'gus', '--agent', 'reader', '--backend', 'tmux'])
    expect(gus.code, gus.stderr).toBe(0)
    const seen = await waitFor('gus to look', () => fs.readFile(path.join(t.work, 'reader.out'), 'utf8').catch(() => ''), 30_000)
    expect(seen.trim(), "gus read the team's config").toBe('no')
    expect(wrote.trim()).toBe('refused')
  }, 90_000)
})
