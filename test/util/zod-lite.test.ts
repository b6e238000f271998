import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { isDeepStrictEqual } from 'node:util'
import * as esbuild from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// src/util/zod-lite.ts against zod, on the schemas the status and send bundles read files with:
// the same modules built twice, once as the bundles build them (zod → zod-lite) and once with zod
// (as tsc's dist/ runs them). On a corpus of valid files and mutations of them (every field deleted,
// set to undefined, to each JSON type, unknown fields added), the lite check accepts exactly what
// zod accepts, with an equal value (keys in the same order), and a rejected value fails with zod's
// own issue.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const MODULES = {
  'teams/types': ['TeamFile', 'TeamMember', 'TeamAllowedPath'],
  'store/member-state': ['MemberState', 'MemberStatus'],
  'mailbox/types': ['InboxMessage', 'InboxFile'],
  'mailbox/messages': ['StructuredMessage'],
  'asks/store': ['PendingRequest', 'ResolvedRequest', 'Decision'],
  'tasks/types': ['Task', 'TaskStatus'],
  'worktrees/record': ['WorktreeRecord'],
  'remote/protocol': ['RelayItem', 'RelayFrame'],
} as const

type Schemas = Record<string, { safeParse(v: unknown): { success: boolean; data?: unknown; error?: { issues: unknown[] } } }>
type LiteSchemas = Record<string, Schemas[string] & { check(v: unknown): { ok: boolean; value?: unknown } }>

// Inside the checkout, so that both builds (and the lite one's fallback) require the same zod from node_modules.
fs.mkdirSync(path.join(ROOT, 'node_modules/.cache'), { recursive: true })
const out = fs.mkdtempSync(path.join(ROOT, 'node_modules/.cache/swarm-zod-lite-'))
let lite: LiteSchemas
let real: Schemas

async function build(aliasZod: boolean): Promise<Record<string, unknown>> {
  const entry = Object.entries(MODULES)
    .map(([m, names]) => `export { ${names.join(', ')} } from ${JSON.stringify(path.join(ROOT, 'src', `${m}.ts`))}`)
    .join('\n')
  const file = path.join(out, `${aliasZod ? 'lite' : 'zod'}.cjs`)
  await esbuild.build({
    stdin: { contents: entry, resolveDir: ROOT, loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    outfile: file,
    logLevel: 'error',
    define: { 'import.meta.url': '__url' },
    banner: { js: 'var __url = require("node:url").pathToFileURL(__filename).href;' },
    // zod itself stays outside (the same copy as the fallback loads); other packages bundled.
    plugins: [
      {
        name: 'zod',
        setup(b) {
          b.onResolve({ filter: /^zod$/ }, () => (aliasZod ? { path: path.join(ROOT, 'src/util/zod-lite.ts') } : { path: 'zod', external: true }))
          // As scripts/bundle.mjs reads them: `import { z }` → `import * as z`.
          b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async (args) => ({
            contents: (await fs.promises.readFile(args.path, 'utf8')).replace(/^import \{ z \} from 'zod'$/gm, "import * as z from 'zod'"),
            loader: 'ts',
          }))
        },
      },
    ],
  })
  return createRequire(path.join(ROOT, 'package.json'))(file) as Record<string, unknown>
}

beforeAll(async () => {
  lite = (await build(true)) as LiteSchemas
  real = (await build(false)) as Schemas
}, 60_000)
afterAll(() => fs.rmSync(out, { recursive: true, force: true }))

const member = {
  agentId: 'w1@t',
  name: 'w1',
  agentType: 'general',
  model: 'claude-sonnet-4-5',
  prompt: 'work',
  color: 'blue',
  planModeRequired: false,
  joinedAt: 1_700_000_000_000,
  tmuxPaneId: '%1',
  cwd: '/tmp',
  worktree: 'w1',
  subscriptions: ['x'],
  backendType: 'tmux',
  maxCostUsd: 2.5,
  maxTokens: 1000,
  ownsInbox: true,
  future: { kept: [1, 'a'] },
}
const inboxEntry = { from: 'team-lead', text: 'hi', timestamp: '2026-01-01T00:00:00.000Z', read: false, msg_id: 'm1', msgV: 1, extra: 1 }
const pending = {
  id: 'r1',
  kind: 'permission',
  agent: 'w1',
  agentId: 'w1@t',
  toolName: 'Bash',
  toolUseId: 'tu1',
  input: { command: 'ls' },
  description: 'run ls',
  createdAt: 1,
  pid: 42,
}

/** Valid values of each schema (each has something optional left out, something unknown kept). */
const SEEDS: Record<string, unknown[]> = {
  TeamFile: [
    {
      name: 't',
      createdAt: 1,
      leadAgentId: 'team-lead@t',
      hiddenPaneIds: ['%3'],
      teamAllowedPaths: [{ path: '/x', toolName: 'Edit', addedBy: 'team-lead', addedAt: 2 }],
      members: [{ agentId: 'team-lead@t', name: 'team-lead', joinedAt: 1, tmuxPaneId: '', cwd: '/' }, member],
      budget: { maxCostUsd: 10 },
      claudeCodeField: true,
    },
  ],
  TeamMember: [member, { ...member, worktree: true, subscriptions: undefined }],
  TeamAllowedPath: [{ path: '/x', toolName: 'Edit', addedBy: 'a', addedAt: 2 }],
  MemberState: [
    {
      pid: 1,
      status: 'working',
      since: 2,
      model: 'm',
      heartbeat: 3,
      lastActivity: 4,
      currentTask: '1',
      usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 4, cacheWrite1hTokens: 5 },
      costUsd: 0.5,
      budget: { maxCostUsd: 1 },
      turns: 3,
      contextWindows: { m: 200000 },
      sandbox: 'sandboxed',
      newer: 'kept',
    },
    { status: 'idle' },
  ],
  MemberStatus: ['idle', 'dead'],
  InboxMessage: [inboxEntry, { from: 'a', text: 't', timestamp: 1_700_000_000_000, type: 'message', leadSig: 's', lead_sig: 'c', deliveredAt: 'd' }],
  InboxFile: [[inboxEntry, { ...inboxEntry, timestamp: 5 }], []],
  StructuredMessage: [
    { type: 'idle_notification', from: 'w1', timestamp: 't', idleReason: 'available', completedStatus: 'resolved' },
    { type: 'permission_request', request_id: 'r', agent_id: 'a', tool_name: 'Bash', tool_use_id: 'u', description: 'd', input: { a: 1 } },
    { type: 'permission_response', request_id: 'r', subtype: 'success', response: { updated_input: { a: 1 }, permission_updates: [{}] } },
    { type: 'shutdown_request', requestId: 'r', from: 'team-lead', timestamp: 't' },
    { type: 'budget_update', from: 'team-lead', addUsd: 1, addTokens: 0, timestamp: 't' },
    {
      type: 'team_permission_update',
      permissionUpdate: { type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'ls' }], behavior: 'allow' },
    },
  ],
  PendingRequest: [pending, { ...pending, kind: 'plan', suggestions: ['Bash(ls)'], status: 'waiting' }],
  ResolvedRequest: [{ ...pending, decision: 'approve', always: true, resolvedBy: 'team-lead', resolvedAt: 3, updatedInput: {}, leadSeal: 's' }],
  Decision: ['deny'],
  Task: [
    { id: '1', subject: 's', description: 'd', status: 'pending', blocks: ['2'], metadata: { k: [1] } },
    { id: '2', subject: 's', description: '', status: 'in_progress' },
  ],
  TaskStatus: ['completed'],
  WorktreeRecord: [{ team: 't', name: 'w1', slug: 'w1', repo: '/r', path: '/p', branch: 'b', baseRef: 'HEAD', createdAt: 1 }],
  RelayItem: [
    { kind: 'entry', to: 'w1', entry: inboxEntry },
    { kind: 'pending', request: { id: 'r', more: 1 } },
  ],
  RelayFrame: [
    { t: 'hello', version: '1', protocol: 2, team: 't', applied: 0, floor: 0 },
    { t: 'item', seq: 1, item: { kind: 'resolved', request: { id: 'r' } } },
    { t: 'state', name: 'w1', state: { status: 'idle', pid: 3 } },
  ],
}

const REPLACEMENTS: unknown[] = [undefined, null, 0, 1, -1, 1.5, 2 ** 60, Number.NaN, 'x', '', true, false, [], ['x'], [1], {}, { a: 1 }]

/** Every value reachable by one change of `seed`: each field deleted or replaced, an unknown field added. */
function* mutations(seed: unknown): Generator<unknown> {
  yield seed
  for (const r of REPLACEMENTS) yield r
  if (Array.isArray(seed)) {
    for (let i = 0; i < seed.length; i++) {
      yield seed.filter((_, j) => j !== i)
      for (const m of mutations(seed[i])) yield seed.map((x, j) => (j === i ? m : x))
    }
  } else if (seed !== null && typeof seed === 'object') {
    const obj = seed as Record<string, unknown>
    yield { ...obj, unknownField: 'x' }
    yield Object.assign(Object.create(null), obj)
    for (const k of Object.keys(obj)) {
      const { [k]: _, ...rest } = obj
      yield rest
      for (const m of mutations(obj[k])) yield { ...obj, [k]: m }
    }
  }
}

const shape = (v: unknown): string => JSON.stringify(v, (_k, x) => (x === undefined ? '<undefined>' : x))

describe('zod-lite', () => {
  it('accepts exactly what zod accepts, with the same value, on the corpus', () => {
    let accepted = 0
    let rejected = 0
    for (const [name, seeds] of Object.entries(SEEDS)) {
      for (const seed of seeds) {
        expect(real[name].safeParse(seed).success, `${name} seed ${shape(seed)}`).toBe(true)
        for (const v of mutations(seed)) {
          const z = real[name].safeParse(v)
          const l = lite[name].check(v)
          expect(l.ok, `${name}: ${shape(v)}`).toBe(z.success)
          if (!z.success) {
            rejected++
            continue
          }
          accepted++
          expect(shape(l.value), `${name}: ${shape(v)}`).toBe(shape(z.data))
          expect(isDeepStrictEqual(l.value, z.data), `${name}: ${shape(v)}`).toBe(true)
        }
      }
    }
    expect(accepted).toBeGreaterThan(500)
    expect(rejected).toBeGreaterThan(500)
  })

  it("fails a rejected value with zod's own issues", () => {
    for (const [name, seeds] of Object.entries(SEEDS)) {
      for (const v of mutations(seeds[0])) {
        const z = real[name].safeParse(v)
        if (z.success) continue
        const l = lite[name].safeParse(v)
        expect(l.success).toBe(false)
        expect(l.error?.issues).toEqual(z.error?.issues)
      }
    }
  })

  it('gives a default afresh each time (a caller may change it)', () => {
    const a = lite.Task.safeParse({ id: '1', subject: 's', description: 'd', status: 'pending' }).data as { blocks: string[] }
    a.blocks.push('x')
    expect((lite.Task.safeParse({ id: '1', subject: 's', description: 'd', status: 'pending' }).data as { blocks: string[] }).blocks).toEqual([])
  })
})
