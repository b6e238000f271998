import type Anthropic from '@anthropic-ai/sdk'
import { errorMessage } from '../errors.js'
import { runFreshSubagent } from '../agent/subagents/fresh.js'
import type { RunTracker } from '../agent/subagents/task-registry.js'
import type { SpendMeter } from '../agent/spend-meter.js'
import { addUsage, emptyUsage, type Usage } from '../agent/pricing.js'
import type { AgentOutput } from '../agent/render.js'
import type { PermissionCheck } from '../agent/tool.js'
import { memberSandbox } from '../agent/member-sandbox.js'
import type { LoadedSettings } from '../permissions/rules/settings.js'
import { git, gitRaw } from '../worktrees/git.js'
import { describeContents, inspectWorktree } from '../worktrees/inspect.js'
import { teardownWorktrees } from '../worktrees/team-worktrees.js'
import { createWorktree, removeWorktree, worktreeCwd, type Worktree } from '../worktrees/worktree.js'
import type { Subtask } from './batch-file.js'

/**
 * Runs a batch: every subtask in a git worktree of its own on branch `swarm/<team>/batch-<name>`,
 * at most `parallel` at a time, each a fresh subagent that ends with a result line. A success is
 * committed on its branch by swarm, and its worktree (clean by then) goes while the branch stays;
 * a failure's worktree goes through teardown like any other: kept and reported when it holds
 * work, removed when it holds nothing.
 */

export const DEFAULT_PARALLEL = 4

export interface BatchOptions {
  team: string
  /** A directory of the repository the subtasks branch from (its checkout's HEAD). */
  repoDir: string
  env: NodeJS.ProcessEnv
  client: Anthropic
  tasks: Subtask[]
  parallel?: number
  /** Asked for every tool call of every subtask (cwd: its worktree). */
  checkPermission: PermissionCheck
  /**
   * The settings' `sandbox` keys: each subtask's Bash runs in a sandbox of its own, writable only
   * in its worktree and a private TMPDIR (where bwrap cannot run, every Bash call is asked: denied).
   */
  sandboxConfig: LoadedSettings['sandbox']
  /** Who runs it (permission requests are asked as this agent). */
  parent: string
  /** The account of every subtask's requests: the parent's (the lead's meter, or its state.json for `swarm batch`). */
  meter: SpendMeter
  leaderModel?: string
  signal: AbortSignal
  output?: AgentOutput
  /** One line per subtask as it ends. */
  onResult?(r: SubtaskResult): void
}

export interface SubtaskResult {
  name: string
  status: 'succeeded' | 'failed'
  branch: string
  /** The commit on the branch (succeeded). */
  commit?: string
  /** Files changed by the commit (succeeded) or left uncommitted (failed). */
  files: string[]
  tokens: number
  /** The subtask's result line (without `RESULT:`), or why it failed. */
  result: string
  worktree: { path: string; kept: boolean; reason?: string }
  durationMs: number
}

export interface BatchReport {
  team: string
  parallel: number
  succeeded: number
  failed: number
  tokens: number
  durationMs: number
  subtasks: SubtaskResult[]
}

export const RESULT_LINE = /^\s*RESULT:\s*(.*)$/gm

function batchPrompt(task: Subtask, wt: Worktree): string {
  return (
    `${task.prompt}\n\n` +
    `---\nYou are one subtask ("${task.name}") of a batch; the others run in parallel in their own worktrees. You work in a git worktree of your own on branch ${wt.branch}. ` +
    'Make the change, check it (run the relevant tests), and do not commit: swarm commits your changes on your branch when you finish. ' +
    'End your final message with exactly one line `RESULT: <what you did, in one line>` — or `RESULT: FAILED <why>` if you could not do it.'
  )
}

export async function runBatch(o: BatchOptions): Promise<BatchReport> {
  const started = Date.now()
  const parallel = Math.max(1, Math.min(o.parallel ?? DEFAULT_PARALLEL, o.tasks.length))
  const results: SubtaskResult[] = new Array(o.tasks.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < o.tasks.length && !o.signal.aborted) {
      const i = next++
      results[i] = await runSubtask(o, o.tasks[i]!)
      o.onResult?.(results[i]!)
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker))
  const done = results.filter(Boolean)
  return {
    team: o.team,
    parallel,
    succeeded: done.filter((r) => r.status === 'succeeded').length,
    failed: done.filter((r) => r.status === 'failed').length,
    tokens: done.reduce((n, r) => n + r.tokens, 0),
    durationMs: Date.now() - started,
    subtasks: done,
  }
}

async function runSubtask(o: BatchOptions, task: Subtask): Promise<SubtaskResult> {
  const started = Date.now()
  const env = o.env
  let usage: Usage = emptyUsage()
  const tracker: RunTracker = {
    usage,
    toolUses: 0,
    addUsage(u) {
      usage = addUsage(usage, u)
      this.usage = usage
    },
  }
  const tokens = (): number => usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens
  let wt: Worktree
  try {
    wt = await createWorktree({ repoDir: o.repoDir, team: o.team, name: `batch-${task.name}`, env })
  } catch (err) {
    return {
      name: task.name,
      status: 'failed',
      branch: '',
      files: [],
      tokens: 0,
      result: `no worktree: ${errorMessage(err)}`,
      worktree: { path: '', kept: false },
      durationMs: Date.now() - started,
    }
  }
  let failure: string | undefined
  let resultLine = ''
  const cwd = await worktreeCwd(wt)
  const sandbox = memberSandbox({ config: o.sandboxConfig, cwd, env, label: `batch-${task.name}`, writableDirs: () => [wt.path] })
  try {
    const run = await runFreshSubagent({
      team: o.team,
      parent: o.parent,
      cwd,
      sandbox,
      meter: o.meter,
      env,
      client: o.client,
      prompt: batchPrompt(task, wt),
      ...(task.agentType ? { agentType: task.agentType } : {}),
      ...(task.model ? { model: task.model } : {}),
      ...(o.leaderModel ? { leaderModel: o.leaderModel } : {}),
      checkPermission: o.checkPermission,
      signal: o.signal,
      label: `${o.parent}/batch-${task.name}`,
      tracker,
      ...(o.output ? { output: o.output } : {}),
    })
    resultLine = [...run.report.matchAll(RESULT_LINE)].at(-1)?.[1]?.trim() ?? ''
    if (run.status === 'partial') failure = 'stopped at its maxTurns before finishing'
    // A budget stop says which budget: the report's first line, "(stopped: budget_exhausted: …)".
    else if (run.status === 'stopped') failure = /^\(stopped: (.*)\)$/m.exec(run.report)?.[1] ?? 'stopped'
    else if (run.status !== 'done') failure = 'stopped'
    else if (!resultLine) failure = 'ended without a RESULT line'
    else if (/^FAILED\b/i.test(resultLine)) failure = resultLine.replace(/^FAILED\b:?\s*/i, '') || 'it said FAILED'
  } catch (err) {
    failure = errorMessage(err)
  } finally {
    await sandbox.close()
  }
  if (!failure) {
    const committed = await commitAll(wt, `${task.name}: ${resultLine}`, env).catch((err: unknown) => ({ error: errorMessage(err) }))
    if ('error' in committed) failure = `commit failed: ${committed.error}`
    else if (!committed.commit) failure = 'it changed nothing, so there is nothing to commit'
    else {
      const removed = await removeWorktree(wt, { env, keepBranch: true }).catch((err: unknown) => ({ removed: false, reason: errorMessage(err) }))
      return {
        name: task.name,
        status: 'succeeded',
        branch: wt.branch,
        commit: committed.commit,
        files: committed.files,
        tokens: tokens(),
        result: resultLine,
        worktree: { path: wt.path, kept: !removed.removed, ...(removed.removed ? {} : { reason: removed.reason ?? 'kept' }) },
        durationMs: Date.now() - started,
      }
    }
  }
  // A failure is torn down like any worktree: kept (and reported) only when it holds work.
  const contents = await inspectWorktree(wt, env)
  const report = await teardownWorktrees([{ ...wt, name: `batch-${task.name}`, recorded: true, contents }], { env })
  const kept = report.kept[0]
  return {
    name: task.name,
    status: 'failed',
    branch: wt.branch,
    files: contents.uncommitted.map((l) => l.slice(3)),
    tokens: tokens(),
    result: failure ?? 'failed',
    worktree: { path: wt.path, kept: Boolean(kept), ...(kept ? { reason: describeContents(kept.contents) } : {}) },
    durationMs: Date.now() - started,
  }
}

/** Commits everything in the worktree on its branch; no commit when nothing changed. */
async function commitAll(wt: Worktree, message: string, env: NodeJS.ProcessEnv): Promise<{ commit?: string; files: string[] }> {
  await git(wt.path, ['add', '-A'], env)
  const staged = (await git(wt.path, ['diff', '--cached', '--name-only'], env)).split('\n').filter(Boolean)
  if (staged.length === 0) return { files: [] }
  // A repository without an identity still gets the commit, under swarm's name.
  const identity =
    (await gitRaw(wt.path, ['config', 'user.email'], env)).code === 0 ? [] : ['-c', 'user.name=swarm batch', '-c', 'user.email=swarm@localhost']
  await git(wt.path, [...identity, 'commit', '-q', '-m', message.split('\n')[0]!.slice(0, 200)], env)
  return { commit: (await git(wt.path, ['rev-parse', 'HEAD'], env)).trim(), files: staged }
}
