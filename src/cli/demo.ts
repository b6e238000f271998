import type { Command } from 'commander'
import { runDemo } from '../demo/demo.js'
import { runMixedDemo } from '../demo/mixed.js'
import { UsageError } from '../errors.js'
import { printJson } from '../terminal/output.js'
import { shutdownSignal } from './signals.js'

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
    .option('--mixed', 'a swarm lead with Codex, Gemini CLI and Claude Code teammates (the CLIs installed here), offline')
    .action((opts: DemoFlags) => demoCommand(opts))
}

interface DemoFlags {
  backend: string
  watch?: boolean
  keep?: boolean
  yes?: boolean
  json?: boolean
  mixed?: boolean
}

export async function demoCommand(opts: DemoFlags): Promise<void> {
  if (opts.mixed) {
    if (opts.watch || opts.backend !== 'auto')
      throw new UsageError('--mixed runs in tmux panes: --backend and --watch do not apply', { hint: 'drop them; the demo prints how to attach' })
    const summary = await runMixedDemo({
      signal: shutdownSignal().signal,
      ...(opts.keep ? { keep: true } : {}),
      ...(opts.yes || opts.json ? { interactive: false } : {}),
      ...(opts.json ? { out: process.stderr } : {}),
    })
    if (opts.json) printJson(summary)
    process.exit(0)
  }
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
