import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { planAgentLaunch } from '../../src/adapters/launch-plan.js'
import { loadAdapters, resolveAdapter } from '../../src/adapters/registry.js'
import { SwarmError } from '../../src/errors.js'

let dir: string
let env: NodeJS.ProcessEnv

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-adapters-'))
  env = { SWARM_HOME: path.join(dir, 'home'), PATH: '/usr/bin:/bin', MYCLI_KEY: 'k-123', UNRELATED: 'x' }
  await fs.mkdir(path.join(dir, 'project', '.claude', 'swarm-agents'), { recursive: true })
})
afterEach(() => fs.rm(dir, { recursive: true, force: true }))

const YAML_ADAPTER = `
description: a CLI swarm does not know
binary: mycli
command: [mycli, --config, '{{configDir}}/conf.json', '{{prompt}}']
env: { MYCLI_HOME: '{{configDir}}' }
providerEnv: [MYCLI_*]
files:
  - path: conf.json
    json:
      hooks:
        submit: '{{hook:prompt-submit}}'
        stopArgv: ['{{hookArgv:stop}}']
      mcp: { command: '{{mcpCommand}}', args: ['{{mcpArgs}}'] }
delivery: { method: paste, settleMs: 250, confirm: hook, chunk: { chars: 500, lines: 8 } }
hookEvents: { Submit: prompt-submit, Done: stop }
permission:
  allow: { json: { ok: true }, exitCode: 0 }
  deny: { json: { ok: false, why: '{{message}}' }, exitCode: 0 }
`

describe('adapter registry', () => {
  it('loads a project adapter file by its file name, zod-checked, and launches it from its own config dir', async () => {
    await fs.writeFile(path.join(dir, 'project', '.claude', 'swarm-agents', 'mycli.yaml'), YAML_ADAPTER)
    const adapter = await resolveAdapter('mycli', { cwd: path.join(dir, 'project'), env })
    expect(adapter?.source).toBe('project')
    expect(adapter?.delivery).toEqual({ method: 'paste', settleMs: 250, submitKeys: ['Enter'], confirm: 'hook', chunk: { chars: 500, lines: 8 } })
    const launch = await planAgentLaunch(adapter!, { team: 't1', name: 'bob', cwd: dir, prompt: 'line one\n/slash {{configDir}}', env })
    const home = path.join(env.SWARM_HOME!, 'agent-homes', 't1', 'bob')
    expect(launch.configDir).toBe(home)
    // The pane runs swarm's agent-cli wrapper, then the CLI itself.
    const cli = launch.argv.slice(launch.argv.indexOf('--') + 1)
    expect(launch.argv.slice(launch.argv.indexOf('agent-cli'), launch.argv.indexOf('--'))).toEqual([
      'agent-cli',
      '--team',
      't1',
      '--name',
      'bob',
      '--agent',
      'mycli',
      '--prompt-in-argv',
      // The whole CLI in swarm's sandbox, with its shim and the files prepare() wrote read-only.
      '--sandbox',
      '--read-only',
      path.join(home, 'bin'),
      '--read-only',
      path.join(home, 'conf.json'),
    ])
    expect(cli.slice(0, 3)).toEqual(['mycli', '--config', `${home}/conf.json`])
    // The prompt is substituted once: a placeholder inside it stays text.
    expect(cli[3]).toContain('/slash {{configDir}}')
    expect(launch.promptInArgv).toBe(true)
    expect(launch.env.MYCLI_HOME).toBe(home)
    expect(launch.env.MYCLI_KEY).toBe('k-123')
    expect(launch.env.UNRELATED).toBeUndefined()
    expect(launch.env.SWARM_AGENT_PATH.split(':')[0]).toBe(path.join(home, 'bin'))
    const conf = JSON.parse(await fs.readFile(path.join(home, 'conf.json'), 'utf8'))
    // Its hooks reach the team through its pane wrapper's relay: the sandbox hides the team's files.
    const endpoint = path.join(home, 'relay', 'endpoint.json')
    expect(conf.hooks.submit).toMatch(/swarm\.js'? relay '?[^ ]+endpoint\.json'? -- hook prompt-submit --team t1 --name bob --agent mycli$/)
    expect(conf.hooks.submit).toContain(endpoint)
    expect(conf.hooks.stopArgv.slice(-8)).toEqual(['hook', 'stop', '--team', 't1', '--name', 'bob', '--agent', 'mycli'])
    expect(conf.mcp.args).toContain('mcp')
    expect(adapter!.answerPermission('permission-request', { behavior: 'deny', message: 'not "that"' }, {})).toEqual({
      stdout: '{"ok":false,"why":"not \\"that\\""}\n',
      exitCode: 0,
    })
    expect(adapter!.readHook('prompt-submit', { prompt: 'hi', session_id: 's1', tool_input: 'not an object' })).toEqual({
      prompt: 'hi',
      sessionId: 's1',
    })
  })

  it('reports a broken adapter file when asked for it, and lists it as a diagnostic otherwise', async () => {
    await fs.writeFile(path.join(dir, 'project', '.claude', 'swarm-agents', 'broken.yaml'), 'binary: x\ncommand: []\n')
    await expect(resolveAdapter('broken', { cwd: path.join(dir, 'project'), env })).rejects.toMatchObject({ code: 'SWARM_CORRUPT_FILE' })
    const loaded = await loadAdapters({ cwd: path.join(dir, 'project'), env })
    expect(loaded.diagnostics.map((d) => path.basename(d.file))).toEqual(['broken.yaml'])
  })

  it('refuses an unknown kind with the known ones, and treats swarm as its own agent', async () => {
    const err = await resolveAdapter('nope', { cwd: dir, env }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SwarmError)
    expect((err as SwarmError).exitCode).toBe(2)
    expect(await resolveAdapter('swarm', { cwd: dir, env })).toBeUndefined()
    expect(await resolveAdapter(undefined, { cwd: dir, env })).toBeUndefined()
  })

  it('keeps adapter files inside the config dir', async () => {
    await fs.writeFile(
      path.join(dir, 'project', '.claude', 'swarm-agents', 'escape.yaml'),
      'binary: x\ncommand: [x]\nhookEvents: { Submit: prompt-submit, Done: stop }\nfiles:\n  - { path: ../../evil, text: hi }\n',
    )
    const adapter = await resolveAdapter('escape', { cwd: path.join(dir, 'project'), env })
    await expect(planAgentLaunch(adapter!, { team: 't1', name: 'bob', cwd: dir, env })).rejects.toThrow(/leaves the teammate's config dir/)
  })

  it.each([
    ['binary: sh\ncommand: [mycli]\n', 'binary: "sh" is not the program command runs ("mycli")'],
    ["command: ['{{env:MYCLI}}', x]\n", 'command.0: the first word is the program swarm checks before starting it and cannot hold a placeholder'],
    ['command: [bin/mycli]\n', 'command.0: "bin/mycli" is a relative path'],
    ['command: [mycli]\nresumeCommand: [other, --continue]\n', 'resumeCommand.0: "other" is not the program command runs ("mycli")'],
    // A CLI that could never be delivered to, or a launcher whose real program the preflight cannot see.
    ['command: [mycli]\nhookEvents: { Submit: prompt-submit }\n', 'hookEvents: no CLI event is mapped to stop'],
    ['command: [mycli]\nhookEvents: { Done: stop }\n', 'hookEvents: no CLI event is mapped to prompt-submit'],
    [
      'command: [mycli]\nhookEvents: { Submit: prompt-submit, Done: stop }\ndelivery: { method: paste, confirm: screen }\n',
      'delivery.confirm: screen cannot tell',
    ],
    ['command: [npx, -y, mycli]\nhookEvents: { Submit: prompt-submit, Done: stop }\n', 'requires: command runs "npx"'],
    // A variable whose cases might all fail, and a configEnv that leaves the probe home.
    ['command: [mycli]\nvars: { m: [{ when: { mode: plan }, value: x }] }\n', 'vars.m: the last case has no `when`'],
    ['command: [mycli]\nconfigEnv: { MYCLI_HOME: ../up }\n', 'configEnv.MYCLI_HOME: a path inside the probe home'],
  ])('refuses a file whose program is not what its command runs, or that could never deliver: %j', async (text, message) => {
    await fs.writeFile(path.join(dir, 'project', '.claude', 'swarm-agents', 'prog.yaml'), text)
    const err = await resolveAdapter('prog', { cwd: path.join(dir, 'project'), env }).catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'SWARM_CORRUPT_FILE' })
    expect((err as Error).message).toContain(message)
  })

  it('expands its own variables by the teammate: the first case that holds, a list spliced into argv', async () => {
    await fs.writeFile(
      path.join(dir, 'project', '.claude', 'swarm-agents', 'vars.yaml'),
      [
        "command: [mycli, '{{var:modelArgs}}', --ask, '{{var:ask}}']",
        'vars:',
        "  modelArgs: [{ when: { model: '' }, value: [] }, { value: [--model, '{{model}}'] }]",
        '  ask: [{ when: { mode: [bypassPermissions, dontAsk] }, value: never }, { value: "{{mode}}-{{name}}" }]',
        "env: { ASK: 'ask={{var:ask}}' }",
        'hookEvents: { Submit: prompt-submit, Done: stop }',
      ].join('\n'),
    )
    const adapter = (await resolveAdapter('vars', { cwd: path.join(dir, 'project'), env }))!
    const cli = async (o: { model?: string; mode?: string }) => {
      const launch = await planAgentLaunch(adapter, { team: 't1', name: 'bob', cwd: dir, env, ...o })
      return { argv: launch.argv.slice(launch.argv.indexOf('--') + 1), ask: launch.env.ASK }
    }
    expect(await cli({ mode: 'default' })).toEqual({ argv: ['mycli', '--ask', 'default-bob'], ask: 'ask=default-bob' })
    expect(await cli({ model: 'big', mode: 'dontAsk' })).toEqual({ argv: ['mycli', '--model', 'big', '--ask', 'never'], ask: 'ask=never' })
  })

  it("takes the command's first word as the program; binary may repeat it or its file name", async () => {
    const adapters = path.join(dir, 'project', '.claude', 'swarm-agents')
    await fs.writeFile(path.join(adapters, 'plain.yaml'), 'command: [mycli, go]\nhookEvents: { Submit: prompt-submit, Done: stop }\n')
    await fs.writeFile(
      path.join(adapters, 'abs.yaml'),
      'binary: mycli\ncommand: [/opt/x/mycli]\nresumeCommand: [/opt/x/mycli, --continue]\nhookEvents: { Submit: prompt-submit, Done: stop }\n',
    )
    const lookup = { cwd: path.join(dir, 'project'), env }
    expect((await resolveAdapter('plain', lookup))?.binary).toBe('mycli')
    expect((await resolveAdapter('abs', lookup))?.binary).toBe('/opt/x/mycli')
  })
})
