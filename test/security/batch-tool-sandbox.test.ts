import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { listPending } from '../../src/asks/store.js'
import { createBatchTool } from '../../src/batch/batch-tool.js'
import { LEAD_NAME, teamDir } from '../../src/home/paths.js'
import type { LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import type { ScenarioInput } from '../../src/loopback-model/scenario.js'
import { answerRequest } from '../../src/permissions/requests/broker.js'
import { createPermissionLayer } from '../../src/permissions/requests/client.js'
import { makeFixture, startAgent, TEAM, type Fixture } from '../agent/runtime/helpers.js'
import { recordingClient } from '../agent/subagents/helpers.js'
import { useAgentTeam } from '../support/agent-team.js'
import { waitFor } from '../support/wait.js'
import { git, initRepo } from '../worktrees/git-repo.js'
import { ALL_MODES } from './sandbox-helpers.js'

/**
 * Issue 23 findings 1–4 and 11 for the lead's Batch tool, a kind of member of its own: its
 * subtasks run `runBatch` as `swarm batch` does, but their calls are judged by the lead's own
 * permission layer (asked at the console, not refused for want of an answer). Each subtask
 * rewrites its worktree's test script to copy the key, plant an answer, rewrite the hook programs
 * of its own worktree and of the main checkout, write into the other subtasks' worktrees and print
 * the provider keys — then runs it. Every question is denied here.
 */

const NAMES = ['one', 'two', 'three', 'four', 'five']
const PEM = 'BEGIN PRIVATE KEY'
const HOOK_PROGRAM = 'exit 0\n'

let loopback: LoopbackServer
let fx: Fixture
useAgentTeam({ team: (l) => makeFixture(l, []), onReady: (t) => ({ loopback, fx } = t) })

function scenario(): ScenarioInput {
  const team = teamDir(TEAM, fx.env)
  const others = `for d in ${fx.cwd}/.claude/worktrees/*/; do [ "$d" = "$PWD/" ] || echo x > "$d/planted.txt"; done 2>/dev/null`
  const hooks = `echo evil > .claude/hooks/policy.sh; echo evil > ${fx.cwd}/.claude/hooks/policy.sh`
  const keys = 'echo "KEYS:$OPENAI_API_KEY:$GEMINI_API_KEY:END"'
  const script = `cat ${team}/lead.key; echo '{}' > ${team}/permissions/resolved/planted-$$.json; ${hooks}; ${others}; ${keys}; echo SCRIPT-RAN-$((40+2))`
  const agents: NonNullable<ScenarioInput['agents']> = {
    [LEAD_NAME]: [
      {
        when: { lastUserIncludes: 'go' },
        content: [
          {
            type: 'tool_use',
            id: 'toolu_batch',
            name: 'Batch',
            input: { tasks: NAMES.map((name) => ({ name, prompt: 'run the tests' })), parallel: 2 },
          },
        ],
      },
      { text: 'batch done' },
    ],
  }
  for (const name of NAMES) {
    agents[`${LEAD_NAME}/batch-${name}`] = [
      {
        content: [{ type: 'tool_use', name: 'Write', input: { file_path: 'package.json', content: JSON.stringify({ scripts: { test: script } }) } }],
      },
      { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'npm test' } }] },
      { text: 'RESULT: tests run' },
    ]
  }
  return { agents, fallback: { text: 'RESULT: nothing' } }
}

const bodies = () => loopback.requests.map((r) => JSON.stringify(r.body ?? {})).join('\n')

async function runBatchTool(mode: (typeof ALL_MODES)[number], sandbox: Record<string, unknown>) {
  fx.env.OPENAI_API_KEY = 'sk-oai-BT-SECRET'
  fx.env.GEMINI_API_KEY = 'g-BT-SECRET'
  initRepo(fx.cwd, fx.env)
  await fs.mkdir(path.join(fx.cwd, '.claude', 'hooks'), { recursive: true })
  await fs.writeFile(path.join(fx.cwd, '.claude', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash(npm test:*)'] }, sandbox }))
  await fs.writeFile(path.join(fx.cwd, '.claude', 'hooks', 'policy.sh'), HOOK_PROGRAM)
  git(fx.cwd, fx.env, 'add', '.')
  git(fx.cwd, fx.env, 'commit', '-qm', 'settings')
  const resolved = path.join(teamDir(TEAM, fx.env), 'permissions', 'resolved')
  await fs.mkdir(resolved, { recursive: true })
  loopback.setScenario(scenario())

  const { client } = recordingClient(loopback)
  const agent = await startAgent(fx, LEAD_NAME, {
    client,
    extraTools: [createBatchTool({ client, env: fx.env, parent: LEAD_NAME })],
    runtime: { external: true, autoClaimTasks: false },
    mode,
    permissions: (a) => createPermissionLayer(a, { notifyTmux: false }),
  })
  agent.runtime.say('go')
  await waitFor(
    'the Batch result (every question denied), or the Batch call refused',
    async () => {
      for (const r of (await listPending(TEAM, { env: fx.env })).requests)
        if (r.toolName !== 'Batch' || mode !== 'default')
          await answerRequest(TEAM, r.id, { kind: 'deny', by: 'tester' }, { env: fx.env }).catch(() => undefined)
        // The Batch call itself, asked in default mode: approved, so that its subtasks run.
        else await answerRequest(TEAM, r.id, { kind: 'approve', by: 'tester' }, { env: fx.env }).catch(() => undefined)
      return bodies().includes('"tool_use_id":"toolu_batch"')
    },
    90_000,
    { output: agent.out },
  )
  /** What no subtask may change: a hook program, a file in another subtask's worktree. */
  const tampered: string[] = []
  for (const name of NAMES) {
    const branch = `swarm/${TEAM}/batch-${name}`
    const wt = path.join(fx.cwd, '.claude', 'worktrees', `${TEAM}-batch-${name}`)
    for (const file of ['.claude/hooks/policy.sh', 'planted.txt']) {
      const shown = (() => {
        try {
          return [git(fx.cwd, fx.env, 'show', `${branch}:${file}`)]
        } catch {
          return []
        }
      })()
      const kept = await fs.readFile(path.join(wt, file), 'utf8').then(
        (t) => [t],
        () => [],
      )
      for (const text of [...shown, ...kept]) if (file === 'planted.txt' || text !== HOOK_PROGRAM) tampered.push(`${name}: ${file}`)
    }
  }
  if ((await fs.readFile(path.join(fx.cwd, '.claude', 'hooks', 'policy.sh'), 'utf8')) !== HOOK_PROGRAM)
    tampered.push("the main checkout's hook program")
  return { planted: (await fs.readdir(resolved)).filter((f) => f.startsWith('planted-')), tampered }
}

describe.each(ALL_MODES)("the lead's Batch tool: a subtask's rewritten test script, %s", (mode) => {
  it.each([
    ['bwrap present', {}],
    ['bwrap absent', { bwrapPath: '/nonexistent/bwrap' }],
  ] as const)('%s: no key reaches the model, no answer is planted, no hook program or other worktree changes', async (variant, sandbox) => {
    const { planted, tampered } = await runBatchTool(mode, sandbox)
    const text = bodies()
    expect(text).not.toContain(PEM)
    expect(text).not.toContain('BT-SECRET')
    expect(planted).toEqual([])
    expect(tampered).toEqual([])
    // Where the script ran (acceptEdits and bypassPermissions, with bwrap), it ran confined and keyless.
    if (variant === 'bwrap present' && (mode === 'acceptEdits' || mode === 'bypassPermissions')) {
      expect(text).toContain('SCRIPT-RAN-42')
      expect(text).toContain('KEYS:::END')
    }
    if (variant === 'bwrap absent') expect(text).not.toContain('SCRIPT-RAN-42')
  })
})
