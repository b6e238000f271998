import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { LEAD_NAME } from '../../src/home/paths.js'
import type { LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { answerRequest } from '../../src/permissions/requests/broker.js'
import { listPending } from '../../src/asks/store.js'
import { addMember, updateMember } from '../../src/teams/team-store.js'
import { makeFixture, TEAM, type Fixture } from '../agent/runtime/helpers.js'
import { useAgentTeam } from '../support/agent-team.js'
import { waitFor } from '../support/wait.js'
import { ALL_MODES } from './sandbox-helpers.js'
import { startLeadWithLayer } from './lead-with-layer.js'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { BIN } from '../support/repo.js'
import { track } from '../support/agent-team.js'
import { type AskingTeam, expectShownWhole, LONG, openConsole } from './long-command.js'

/**
 * Issue 23 finding 2: the lead's subagents and forks ran Bash as plain `bash -c` while the
 * permission layer judged them by the lead's sandbox (auto-allowed under autoAllowBashIfSandboxed).
 * Now they run in their parent's sandbox: with bwrap the key is hidden; without it the call is asked.
 */

const PEM = 'BEGIN PRIVATE KEY'
let loopback: LoopbackServer
let fx: Fixture
useAgentTeam({ team: (l) => makeFixture(l, []), onReady: (t) => ({ loopback, fx } = t) })

/** A command that names the key by glob, so no string check of the command sees the control plane. */
const catKey = () => `cat ${path.dirname(fx.home)}/${path.basename(fx.home).slice(0, 2)}*/te*s/${TEAM}/lead.k*`

async function settings(sandbox: Record<string, unknown>, more: Record<string, unknown> = {}): Promise<void> {
  await fs.mkdir(path.join(fx.cwd, '.claude'), { recursive: true })
  await fs.writeFile(
    path.join(fx.cwd, '.claude', 'settings.json'),
    JSON.stringify({ ...more, sandbox: { autoAllowBashIfSandboxed: true, ...sandbox } }),
  )
}

/** The kinds of child the lead starts with its Agent tool: a one-off subagent, one in the background (a task id at once), a fork. */
const KINDS = ['subagent', 'background subagent', 'fork'] as const
type Kind = (typeof KINDS)[number]

type Call = { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }

function scenario(kind: Kind, calls: Call[] = [{ type: 'tool_use', id: 'toolu_cat', name: 'Bash', input: { command: catKey() } }]): void {
  const agentCall =
    kind === 'fork'
      ? { description: 'look', prompt: 'look around' }
      : kind === 'background subagent'
        ? { description: 'look', prompt: 'look around', subagent_type: 'general-purpose', run_in_background: true }
        : { description: 'look', prompt: 'look around', subagent_type: 'general-purpose' }
  loopback.setScenario({
    agents: {
      [LEAD_NAME]: [
        { when: { lastUserIncludes: 'go' }, content: [{ type: 'tool_use', id: 'toolu_agent', name: 'Agent', input: agentCall }] },
        { text: 'waiting' },
      ],
      [kind === 'fork' ? `${LEAD_NAME}/fork-1` : `${LEAD_NAME}/general-purpose-1`]: [...calls.map((c) => ({ content: [c] })), { text: 'done' }],
    },
    fallback: { text: 'ok' },
  })
}

function bodies(): string {
  return loopback.requests.map((r) => JSON.stringify(r.body ?? {})).join('\n')
}

/**
 * The lead's Agent call came back as an error. Its result alone ends nothing: a fork answers at once
 * ("Fork started — processing in background") and runs on, so its own calls are waited for.
 */
function agentRefused(): boolean {
  return /"tool_use_id":"toolu_agent","content":"(?:[^"\\]|\\.)*","is_error":true/.test(bodies())
}

const MODES = ALL_MODES

/** Denies every question as it comes, until each of `calls` has its result (or the Agent call was refused). */
async function denyUntilAnswered(calls: Call[]): Promise<void> {
  await waitFor(
    'every call answered (each question denied), or the Agent call refused',
    async () => {
      for (const r of (await listPending(TEAM, { env: fx.env })).requests)
        await answerRequest(TEAM, r.id, { kind: 'deny', by: 'tester' }, { env: fx.env }).catch(() => undefined)
      return calls.every((c) => bodies().includes(`"tool_use_id":"${c.id}"`)) || agentRefused()
    },
    30_000,
  )
}

describe("a subagent's and a fork's Bash run in the lead's sandbox", () => {
  for (const kind of KINDS) {
    it(`${kind}, bwrap present, autoAllowBashIfSandboxed: the key is hidden from its cat`, async () => {
      if (kind === 'fork') fx.env.SWARM_FORK_SUBAGENT = '1'
      await settings({})
      scenario(kind)
      await startLeadWithLayer(loopback, fx)
      await waitFor('the Bash result', () => bodies().includes('"tool_use_id":"toolu_cat"'), 20_000)
      expect(bodies()).not.toContain(PEM)
    })

    it(`${kind}, bwrap absent (a bad sandbox.bwrapPath): the call is asked, not auto-allowed, and nothing is printed`, async () => {
      if (kind === 'fork') fx.env.SWARM_FORK_SUBAGENT = '1'
      await settings({ bwrapPath: '/nonexistent/bwrap' })
      scenario(kind)
      await startLeadWithLayer(loopback, fx)
      const asked = await waitFor(
        'the Bash question',
        async () => (await listPending(TEAM, { env: fx.env })).requests.find((r) => r.toolName === 'Bash'),
        20_000,
      )
      expect(JSON.stringify(asked)).toContain('lead.k*')
      expect(bodies()).not.toContain(PEM)
    })
  }
})

/**
 * Finding 11 from a subagent and a fork: the provider keys of the lead's environment are not in
 * their Bash's — sandboxed (auto-allowed), and unsandboxed (bwrap absent: asked, approved here).
 * The environment is the one command runner's, so the modes do not vary it.
 */
describe("a subagent's and a fork's Bash carry no provider key", () => {
  for (const kind of KINDS)
    for (const variant of ['bwrap present', 'bwrap absent, approved'] as const)
      it(`${kind}, ${variant}`, async () => {
        if (kind === 'fork') fx.env.SWARM_FORK_SUBAGENT = '1'
        fx.env.OPENAI_API_KEY = 'sk-oai-SUB-SECRET'
        fx.env.GEMINI_API_KEY = 'g-SUB-SECRET'
        await settings(variant === 'bwrap present' ? {} : { bwrapPath: '/nonexistent/bwrap' })
        scenario(kind, [{ type: 'tool_use', id: 'toolu_keys', name: 'Bash', input: { command: 'echo "KEYS:$OPENAI_API_KEY:$GEMINI_API_KEY:END"' } }])
        await startLeadWithLayer(loopback, fx)
        await waitFor(
          'the Bash result (its question approved)',
          async () => {
            for (const r of (await listPending(TEAM, { env: fx.env })).requests)
              await answerRequest(TEAM, r.id, { kind: 'approve', by: 'tester' }, { env: fx.env }).catch(() => undefined)
            return bodies().includes('"tool_use_id":"toolu_keys"')
          },
          20_000,
        )
        expect(bodies()).toContain('KEYS:::END') // it ran, and saw neither key
        expect(bodies()).not.toContain('SUB-SECRET')
      })
})

/** The matrix (issue 23): every mode, bwrap present and absent, a subagent and a fork — the key never reaches the model. */
describe.each(MODES)("a subagent's and a fork's Bash, %s", (mode) => {
  describe.each([
    ['bwrap present', {}],
    ['bwrap absent', { bwrapPath: '/nonexistent/bwrap' }],
  ] as const)('%s', (variant, sandbox) => {
    it.each(KINDS)('%s: its cat of the key (by glob) is hidden, asked or refused — never printed', async (kind) => {
      if (kind === 'fork') fx.env.SWARM_FORK_SUBAGENT = '1'
      await settings(sandbox)
      scenario(kind)
      await startLeadWithLayer(loopback, fx, mode)
      await waitFor(
        'the Bash result, a question, or the Agent call refused',
        async () =>
          bodies().includes('"tool_use_id":"toolu_cat"') || agentRefused() || (await listPending(TEAM, { env: fx.env })).requests.length > 0,
        20_000,
      )
      expect(bodies()).not.toContain(PEM)
      if (variant === 'bwrap absent') expect(bodies()).not.toMatch(/toolu_cat[^}]*"is_error":false/)
    })

    // Findings 1 and 4 from a subagent or a fork: the program the settings' hook runs, and the
    // project's .claude/, stay as they were — the Write asked or refused, the Bash confined or asked.
    it.each(KINDS)("%s: its Write and Bash of the hook's program in .claude/hooks/ leave it unchanged", async (kind) => {
      if (kind === 'fork') fx.env.SWARM_FORK_SUBAGENT = '1'
      const hook = 'sh "$CLAUDE_PROJECT_DIR/.claude/hooks/policy.sh"'
      await settings(sandbox, {
        permissions: { allow: ['Bash(node:*)', 'Bash(printf:*)'] },
        hooks: { PermissionRequest: [{ hooks: [{ type: 'command', command: hook }] }] },
      })
      const policy = path.join(fx.cwd, '.claude', 'hooks', 'policy.sh')
      await fs.mkdir(path.dirname(policy), { recursive: true })
      await fs.writeFile(policy, 'exit 0\n')
      const marker = path.join(fx.base, 'MARKER')
      const evil = `touch ${marker}; echo '{"behavior":"allow"}'\n`
      const calls: Call[] = [
        { type: 'tool_use', id: 'toolu_write', name: 'Write', input: { file_path: policy, content: evil } },
        {
          type: 'tool_use',
          id: 'toolu_node',
          name: 'Bash',
          input: { command: `node -e "require('fs').writeFileSync('.claude/hooks/policy.sh', process.argv[1])" ${JSON.stringify(evil)}` },
        },
        { type: 'tool_use', id: 'toolu_printf', name: 'Bash', input: { command: 'printf x > .claude/hooks/other.sh' } },
        { type: 'tool_use', id: 'toolu_after', name: 'Bash', input: { command: 'touch asked.txt' } },
      ]
      scenario(kind, calls)
      await startLeadWithLayer(loopback, fx, mode)
      await denyUntilAnswered(calls)
      expect(await fs.readFile(policy, 'utf8')).toBe('exit 0\n')
      await expect(fs.stat(path.join(fx.cwd, '.claude', 'hooks', 'other.sh'))).rejects.toThrow()
      await expect(fs.stat(marker), 'a rewritten hook program ran').rejects.toThrow()
    })

    // Finding 4 from a subagent or a fork: another teammate's worktree (its .git file, its
    // .claude/settings.json and hooks) stays as it was — Write asked or refused, Bash confined or asked.
    it.each(KINDS)("%s: its Write and Bash of another teammate's worktree leave its .git and .claude/ unchanged", async (kind) => {
      if (kind === 'fork') fx.env.SWARM_FORK_SUBAGENT = '1'
      await settings(sandbox, { permissions: { allow: ['Bash(node:*)', 'Bash(printf:*)'] } })
      const bob = path.join(fx.cwd, '.claude', 'worktrees', `${TEAM}-bob`)
      await fs.mkdir(path.join(bob, '.claude', 'hooks'), { recursive: true })
      const targets = {
        git: path.join(bob, '.git'),
        settings: path.join(bob, '.claude', 'settings.json'),
        hook: path.join(bob, '.claude', 'hooks', 'policy.sh'),
      }
      await fs.writeFile(targets.git, `gitdir: ${fx.cwd}/.git/worktrees/bob\n`)
      await fs.writeFile(targets.settings, '{}\n')
      await fs.writeFile(targets.hook, 'exit 0\n')
      await addMember(TEAM, { name: 'bob', cwd: bob }, fx.env)
      await updateMember(TEAM, 'bob', { worktreePath: bob }, fx.env) // as swarm records a member's worktree
      const rel = (f: string) => path.relative(fx.cwd, f)
      const calls: Call[] = [
        { type: 'tool_use', id: 'toolu_wgit', name: 'Write', input: { file_path: targets.git, content: 'gitdir: /tmp/evil\n' } },
        { type: 'tool_use', id: 'toolu_wset', name: 'Write', input: { file_path: targets.settings, content: '{"hooks":{}}' } },
        { type: 'tool_use', id: 'toolu_pgit', name: 'Bash', input: { command: `printf 'gitdir: /tmp/evil' > ${rel(targets.git)}` } },
        {
          type: 'tool_use',
          id: 'toolu_nhook',
          name: 'Bash',
          input: { command: `node -e "require('fs').writeFileSync('${rel(targets.hook)}', 'touch x')"` },
        },
      ]
      scenario(kind, calls)
      await startLeadWithLayer(loopback, fx, mode)
      await denyUntilAnswered(calls)
      expect(await fs.readFile(targets.git, 'utf8')).toBe(`gitdir: ${fx.cwd}/.git/worktrees/bob\n`)
      expect(await fs.readFile(targets.settings, 'utf8')).toBe('{}\n')
      expect(await fs.readFile(targets.hook, 'utf8')).toBe('exit 0\n')
    })
  })
})

/** The swarm CLI with the fixture's environment, as the long-command checks run it. */
function asking(): AskingTeam {
  return {
    env: fx.env,
    swarm: async (args) => {
      try {
        const r = await promisify(execFile)(process.execPath, [BIN, ...args], { env: fx.env, cwd: fx.cwd })
        return { stdout: r.stdout, stderr: r.stderr, code: 0 }
      } catch (err) {
        const e = err as { stdout?: string; stderr?: string; code?: number }
        return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', code: typeof e.code === 'number' ? e.code : 1 }
      }
    },
  }
}

/**
 * Finding 9 from a subagent, a background subagent and a fork: their questions are the lead's, and
 * a long command (429 characters) reaches the human whole — the console prompt to its end,
 * `/requests` and `swarm perms` with the count left and where to read it, `perms show` whole —
 * in every mode, with bwrap present (auto-allow off, so that sandboxed Bash is asked too) and absent.
 */
describe.each(MODES)('a long command from a child of the lead reaches the human whole (%s)', (mode) => {
  describe.each([
    ['bwrap present', { autoAllowBashIfSandboxed: false }],
    ['bwrap absent', { bwrapPath: '/nonexistent/bwrap' }],
  ] as const)('%s', (_variant, sandbox) => {
    it.each(KINDS)('%s', async (kind) => {
      if (kind === 'fork') fx.env.SWARM_FORK_SUBAGENT = '1'
      await settings(sandbox)
      scenario(kind, [{ type: 'tool_use', id: 'toolu_long', name: 'Bash', input: { command: LONG } }])
      const c = openConsole(asking(), TEAM)
      track('console', () => c.close(), c.text)
      await startLeadWithLayer(loopback, fx, mode)
      const pending = await waitFor(
        'a question, the Bash result, or the Agent call refused',
        async () =>
          (await listPending(TEAM, { env: fx.env })).requests.find((r) => r.toolName === 'Bash') ??
          (bodies().includes('"tool_use_id":"toolu_long"') || agentRefused() ? 'none' : undefined),
        20_000,
      )
      if (mode === 'default') expect(pending, 'asked in default mode').not.toBe('none')
      if (pending !== 'none') await expectShownWhole(asking(), c, pending, LONG, TEAM)
    })
  })
})
