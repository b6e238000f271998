import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runHook } from '../../src/adapters/hook.js'
import { withProbeHome } from '../../src/adapters/probe-home.js'
import { registerAdapter } from '../../src/adapters/registry.js'
import { CLAUDE_STYLE_HOOK_FIELDS, CTRL_C_TWICE, readHookFields } from '../../src/adapters/spec-adapter.js'
import type { AgentAdapter } from '../../src/adapters/types.js'
import { runTool } from '../../src/agent/tool.js'
import { bashTool } from '../../src/agent/tools/bash.js'
import { buildProgram } from '../../src/cli/main.js'
import { protectedPart } from '../../src/sandbox/protected.js'
import { createBashSandbox, sandboxAvailability } from '../../src/sandbox/sandbox.js'
import { defaultSandboxConfig } from '../../src/sandbox/sandbox-settings.js'
import { createTeam } from '../../src/teams/team-store.js'
import { makeContext } from '../agent/helpers.js'
import { type IsolatedHome, isolatedHome } from '../support/home.js'
import { BIN } from '../support/repo.js'
import { waitFor } from '../support/wait.js'

const run = promisify(execFile)

/**
 * Adding an agent CLI is one descriptor and one registry line: a fake CLI's adapter, registered at
 * run time with its own project config dir and shell tool, is protected in the sandbox, isolated in
 * the probe home, listed in --help and asks through `swarm perms` — no other module names it.
 */
const fakeCli: AgentAdapter = {
  kind: 'fakecli',
  description: 'a CLI no module of swarm names',
  source: 'built-in',
  binary: 'fakecli',
  versionArgs: ['--version'],
  providerEnv: [],
  delivery: { method: 'paste', settleMs: 100, submitKeys: ['Enter'], confirm: 'hook' },
  states: { hooks: true },
  hookEvents: { Submit: 'prompt-submit', Ask: 'permission-request', Done: 'stop' },
  quit: CTRL_C_TWICE,
  projectConfig: { dir: '.fakecli', protect: ['settings.json'] },
  configEnv: { FAKECLI_HOME: '.fakecli' },
  shellTools: ['fake_shell'],
  prepare: async () => ({ argv: ['fakecli'], env: {} }),
  readHook: (_event, payload) => readHookFields(payload, CLAUDE_STYLE_HOOK_FIELDS),
  answerPermission: (_event, answer) => ({ stdout: `${JSON.stringify({ verdict: answer.behavior })}\n`, exitCode: 0 }),
}

const available = await sandboxAvailability(defaultSandboxConfig(), process.env)

let iso: IsolatedHome
let unregister: () => void
beforeAll(() => {
  unregister = registerAdapter(fakeCli)
  iso = isolatedHome('swarm-add-cli-')
})
afterAll(async () => {
  unregister()
  await iso.cleanup()
})

describe('adding an agent CLI: one descriptor, one registry line', () => {
  it('its project config entries are protected paths for the rules', () => {
    expect(protectedPart(path.join(iso.project, '.fakecli', 'settings.json'))).toBe(path.join(iso.project, '.fakecli', 'settings.json'))
    expect(protectedPart(path.join(iso.project, '.fakecli', 'notes.md'))).toBeUndefined()
  })

  it.skipIf(available.status !== 'sandboxed')('its config file is read-only in the Bash sandbox: a write attempt fails', async () => {
    const settings = path.join(iso.project, '.fakecli', 'settings.json')
    fs.mkdirSync(path.dirname(settings), { recursive: true })
    fs.writeFileSync(settings, '{"hooks":{}}\n')
    const sandbox = createBashSandbox({
      config: defaultSandboxConfig(),
      env: iso.env,
      label: 'add-cli',
      hidden: [],
      readOnly: [],
      writableDirs: () => [iso.project],
    })
    try {
      const write = `echo '{"hooks":{"Submit":"curl evil"}}' > .fakecli/settings.json; echo "exit=$?"; echo ok > beside.txt`
      const out = (await runTool(bashTool, { command: write }, makeContext(iso.project, { sandbox, env: iso.env }))).content
      expect(out).toMatch(/exit=[1-9]/)
    } finally {
      await sandbox.close()
    }
    expect(fs.readFileSync(settings, 'utf8')).toBe('{"hooks":{}}\n')
    // The rest of the project stays writable: the mount is the protected file only.
    expect(fs.readFileSync(path.join(iso.project, 'beside.txt'), 'utf8')).toBe('ok\n')
  })

  it("its probe home points its config variable into the throwaway home, never the user's", async () => {
    let seen: string | undefined
    await withProbeHome({ ...iso.env, FAKECLI_HOME: path.join(iso.base, 'users-own-fakecli') }, async (env) => {
      seen = env.FAKECLI_HOME
      expect(env.FAKECLI_HOME).toBe(path.join(env.HOME ?? '', '.fakecli'))
      expect(fs.statSync(env.FAKECLI_HOME ?? '').isDirectory()).toBe(true)
    })
    expect(seen).not.toContain('users-own-fakecli')
    expect(fs.existsSync(seen ?? '')).toBe(false)
  })

  it('its kind is listed in `swarm spawn --help` and `swarm team create --help`', async () => {
    const spawn = (await buildProgram('spawn')).commands.find((c) => c.name() === 'spawn')
    expect(spawn?.helpInformation()).toMatch(/fakecli/)
    const create = (await buildProgram('team')).commands.find((c) => c.name() === 'team')?.commands.find((c) => c.name() === 'create')
    expect(create?.helpInformation()).toMatch(/fakecli/)
  })

  it('its permission request, from the real hook code, reaches `swarm perms` and its answer comes back in its own form', async () => {
    await createTeam({ name: 'addcli', cwd: iso.project, members: [{ name: 'f', agent: 'fakecli' }] }, iso.env)
    const reply = runHook({
      event: 'permission-request',
      team: 'addcli',
      name: 'f',
      agent: 'fakecli',
      payload: { tool_name: 'fake_shell', tool_input: { command: 'make deploy' } },
      env: iso.env,
    })
    const swarm = (args: string[]) => run(process.execPath, [BIN, ...args], { env: iso.env, cwd: iso.project })
    const listed = await waitFor(
      'the request in swarm perms',
      async () => {
        const { stdout } = await swarm(['perms', 'addcli', '--json'])
        const { requests } = JSON.parse(stdout) as { requests: Array<{ id: string; agent: string; toolName: string; suggestions?: unknown[] }> }
        return requests.find((r) => r.agent === 'f')
      },
      15_000,
    )
    expect(listed.toolName).toBe('fake_shell')
    // Its shell tool is a shell: "always" would keep a rule for the command.
    expect(JSON.stringify(listed.suggestions)).toContain('make deploy')
    await swarm(['perms', 'approve', 'addcli', listed.id])
    expect((await reply).stdout).toBe('{"verdict":"allow"}\n')
  })
})
