import type { Command } from 'commander'
import { runDemo } from '../demo/demo.js'
import { UsageError } from '../errors.js'
import { printJson } from '../terminal/output.js'

/** `swarm demo` */
export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('run a whole team offline on the built-in scripted model: messages, tasks, a permission prompt, a summary')
    .option('--backend <backend>', 'auto | tmux | in-process', 'auto')
    .option('--watch', 'attach to the tmux session so you can watch the panes')
    .option('--keep', 'keep the temp project and transcripts')
    .option('--yes', 'answer the permission prompt automatically')
    .option('--json', 'print the summary as JSON')
    .action((opts: { backend: string; watch?: boolean; keep?: boolean; yes?: boolean; json?: boolean }) => demoCommand(opts))
}

export async function demoCommand(opts: { backend: string; watch?: boolean; keep?: boolean; yes?: boolean; json?: boolean }): Promise<void> {
  if (!['auto', 'tmux', 'in-process'].includes(opts.backend))
    throw new UsageError(`invalid --backend ${opts.backend}`, { hint: 'use auto, tmux or in-process' })
  const summary = await runDemo({
    backend: opts.backend as 'auto' | 'tmux' | 'in-process',
    ...(opts.watch ? { watch: true } : {}),
    ...(opts.keep ? { keep: true } : {}),
    ...(opts.yes || opts.json ? { interactive: false } : {}),
    ...(opts.json ? { out: process.stderr } : {}),
  })
  if (opts.json) printJson(summary)
  process.exit(0)
}
