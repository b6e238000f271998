import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { codexAdapter } from '../../src/adapters/codex.js'
import type { AdapterContext } from '../../src/adapters/types.js'
import { agentHomeDir, agentHomesRoot, rootDir, sentRoot } from '../../src/home/paths.js'
import { type NewMember, createTeam } from '../../src/teams/team-store.js'
import { isolatedHome, type IsolatedHome } from '../support/home.js'

/**
 * Issue 23 finding 11 (Codex): the permission profile of Codex's sandboxed commands denied only
 * `lead.key`, so its unasked shell could read other teammates' relay tokens
 * (`agent-homes/<team>/<name>/relay/endpoint.json`), every inbox and what the lead sent; its shell
 * also inherited the provider's key. Now the profile denies those (its own home stays readable)
 * and the shell's environment policy excludes the provider keys, unless `sandbox.keepEnv` keeps one.
 */

let h: IsolatedHome
afterEach(() => h?.cleanup())

/** The config.toml's sections: `[a.b]` → its `key = value` lines, keys and values JSON-decoded (swarm writes JSON-quoted TOML). */
type Sections = Record<string, Record<string, unknown>>

function sections(text: string): Sections {
  const out: Sections = {}
  let current: Record<string, unknown> = {}
  out[''] = current
  for (const line of text.split('\n')) {
    const header = /^\[(.+)\]$/.exec(line)
    if (header) out[header[1]!] = current = {}
    const kv = /^("(?:[^"\\]|\\.)*"|[A-Za-z0-9_-]+) = (.*)$/.exec(line)
    if (kv) current[kv[1]!.startsWith('"') ? JSON.parse(kv[1]!) : kv[1]!] = JSON.parse(kv[2]!)
  }
  return out
}

/** Team `t`: the lead and `cx` in the project, and, with `bob`, a member in a worktree of swarm's layout inside it. */
async function codexConfig(settings?: Record<string, unknown>, o: { bob?: string; files?: Record<string, string> } = {}): Promise<Sections> {
  h = isolatedHome('swarm-codex-profile-', { OPENAI_API_KEY: 'sk-oai', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' })
  const members: NewMember[] = [{ name: 'cx', agent: 'codex' }]
  if (o.bob) {
    const bob = path.join(h.project, o.bob)
    await fs.mkdir(path.join(bob, '.claude'), { recursive: true })
    await fs.writeFile(path.join(bob, '.git'), 'gitdir: /nowhere\n')
    members.push({ name: 'bob', cwd: bob })
  }
  await createTeam({ name: 't', cwd: h.project, members }, h.env)
  for (const [rel, text] of Object.entries(o.files ?? {})) {
    await fs.mkdir(path.dirname(path.join(h.project, rel)), { recursive: true })
    await fs.writeFile(path.join(h.project, rel), text)
  }
  if (settings) {
    await fs.mkdir(path.join(h.project, '.claude'), { recursive: true })
    await fs.writeFile(path.join(h.project, '.claude', 'settings.json'), JSON.stringify(settings))
  }
  const configDir = agentHomeDir('t', 'cx', h.env)
  await fs.mkdir(configDir, { recursive: true })
  const ctx: AdapterContext = {
    team: 't',
    name: 'cx',
    agentId: 'cx@t',
    cwd: h.project,
    configDir,
    firstPrompt: 'hello',
    mode: 'default',
    resume: false,
    hookArgv: (e) => ['swarm', 'hook', e],
    hookCommand: (e) => `swarm hook ${e}`,
    mcpArgv: ['swarm', 'mcp'],
    env: h.env,
  }
  await codexAdapter.prepare(ctx)
  return sections(await fs.readFile(path.join(configDir, 'config.toml'), 'utf8'))
}

describe("Codex's permission profile", () => {
  it("denies the leads' keys, every inbox, swarm-sent/ and every relay token — not its own home", async () => {
    const config = await codexConfig()
    const fsRules = config['permissions.swarm.filesystem']
    const teams = path.join(rootDir(h.env), 'teams', '*')
    const relays = path.join(agentHomesRoot(h.env), '*', '*', 'relay')
    expect(fsRules).toMatchObject({
      [path.join(teams, 'lead.key')]: 'deny',
      // A glob denies what it matches, not what lies beneath: each directory and its tree.
      [path.join(teams, 'inboxes')]: 'deny',
      [path.join(teams, 'inboxes', '**')]: 'deny',
      [sentRoot(h.env)]: 'deny',
      [relays]: 'deny',
      [path.join(relays, '**')]: 'deny',
    })
    // Codex's sandbox runs its helper from its own home: agent-homes/ as a whole stays readable.
    expect(fsRules?.[agentHomesRoot(h.env)]).toBeUndefined()
    // A deny holds for approved commands too: the team is reached through swarm mcp alone
    // (test/agents/codex-sandbox.test.ts).
  })

  it("makes the project's .claude/, every member worktree's .git and .claude/ and the hooks' programs read-only (issue 23 findings 1, 4)", async () => {
    const bob = path.join('.claude', 'worktrees', 't-bob')
    const hook = { hooks: { PermissionRequest: [{ hooks: [{ type: 'command', command: 'sh scripts/policy.sh' }] }] } }
    const rules = (await codexConfig(hook, { bob, files: { 'scripts/policy.sh': 'exit 0\n' } }))['permissions.swarm.filesystem']
    expect(rules).toMatchObject({
      [path.join(h.project, '.claude')]: 'read',
      [path.join(h.project, bob, '.git')]: 'read',
      [path.join(h.project, bob, '.claude')]: 'read',
      // Named by a hook, outside `.claude/`.
      [path.join(h.project, 'scripts', 'policy.sh')]: 'read',
    })
    // Only what exists: the project is no repository here.
    expect(rules?.[path.join(h.project, '.git')]).toBeUndefined()
  })

  it('makes a missing project .claude/ first, so that what is created there later is read-only too', async () => {
    const rules = (await codexConfig())['permissions.swarm.filesystem']
    expect((await fs.stat(path.join(h.project, '.claude'))).isDirectory()).toBe(true)
    expect(rules?.[path.join(h.project, '.claude')]).toBe('read')
  })

  it("excludes the provider keys from its shell's environment, unless sandbox.keepEnv keeps one", async () => {
    const plain = await codexConfig()
    expect(plain.shell_environment_policy!.exclude).toEqual(expect.arrayContaining(['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY']))
    await h.cleanup()
    const kept = await codexConfig({ sandbox: { keepEnv: ['OPENAI_API_KEY'] } })
    expect(kept.shell_environment_policy!.exclude).not.toContain('OPENAI_API_KEY')
    expect(kept.shell_environment_policy!.exclude).toContain('ANTHROPIC_API_KEY')
  })
})
