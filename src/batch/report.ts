import type { BatchReport, SubtaskResult } from './run.js'

/**
 * The aggregate report of a batch, for people: one summary line, then one line per subtask —
 * succeeded or failed, branch, files, tokens, result — and where failed work was kept.
 */
export function formatBatchReport(r: BatchReport): string {
  const head = `batch ${r.team}: ${r.succeeded} succeeded, ${r.failed} failed (${r.subtasks.length} subtasks, ${r.parallel} at a time, ${(r.durationMs / 1000).toFixed(1)} s, ${r.tokens.toLocaleString('en-US')} tokens)`
  const lines = r.subtasks.map(subtaskLine)
  const kept = r.subtasks.filter((s) => s.worktree.kept)
  const tail = kept.length
    ? [
        '',
        'kept worktrees (they hold work; `swarm worktrees` lists them, `swarm worktrees remove` takes one away):',
        ...kept.map((s) => `  ${s.worktree.path} (branch ${s.branch}): ${s.worktree.reason}`),
      ]
    : []
  return [head, ...lines, ...tail].join('\n')
}

export function subtaskLine(s: SubtaskResult): string {
  const mark = s.status === 'succeeded' ? 'ok    ' : 'FAILED'
  const files = `${s.files.length} file${s.files.length === 1 ? '' : 's'}`
  const where =
    s.status === 'succeeded'
      ? `${s.branch} @ ${s.commit?.slice(0, 10)}`
      : s.worktree.kept
        ? `${s.branch} (worktree kept)`
        : `${s.branch || '-'} (nothing kept)`
  return `${mark} ${s.name}  ${where}  ${files}  ${s.tokens.toLocaleString('en-US')} tokens  ${oneLine(s.result)}`
}

function oneLine(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim()
  return t.length > 160 ? `${t.slice(0, 157)}...` : t
}
