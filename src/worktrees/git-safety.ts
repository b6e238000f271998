/**
 * swarm never runs a program that a repository configures: every git call of swarm's turns off
 * fsmonitor, hooks, external diff, textconv, pagers and the filter drivers the config names.
 * A teammate's write to `.git/config` or `.gitattributes` therefore never runs in the user's process.
 */

/** Where git looks for hooks: below /dev/null nothing can ever be created. */
export const NO_HOOKS_DIR = '/dev/null'

/** Passed before every subcommand. Command-line `-c` wins over every config file and include. */
export const SAFE_GIT_CONFIG: readonly string[] = [
  '-c',
  'core.fsmonitor=false',
  '-c',
  `core.hooksPath=${NO_HOOKS_DIR}`,
  '-c',
  'diff.external=',
  '-c',
  'core.pager=cat',
  '-c',
  'core.untrackedCache=false',
]

/** Subcommands that may run a filter driver (clean on status, smudge on checkout). */
const FILTERING = new Set(['status', 'worktree', 'checkout', 'add', 'diff', 'stash', 'reset', 'restore', 'switch'])
/** Subcommands that take --no-ext-diff / --no-textconv. */
const DIFFING = new Set(['diff', 'log', 'show'])

/** `git config` arguments that list the filter drivers configured (reading config runs nothing). */
export const LIST_FILTERS_ARGS: readonly string[] = ['config', '--null', '--name-only', '--get-regexp', '^filter\\..*\\.(clean|smudge|process)$']

/** Whether `args` needs the configured filter drivers turned off (see filterOverrides). */
export function needsFilterList(args: readonly string[]): boolean {
  return FILTERING.has(args[0] ?? '')
}

/** `-c filter.<name>.clean=` … for every driver named in `listed` (the NUL-separated output of LIST_FILTERS_ARGS). */
export function filterOverrides(listed: string): string[] {
  const names = new Set(
    listed
      .split('\0')
      .filter(Boolean)
      .map((key) => key.replace(/^filter\./, '').replace(/\.(clean|smudge|process)$/, '')),
  )
  return [...names].flatMap((n) => [
    '-c',
    `filter.${n}.clean=`,
    '-c',
    `filter.${n}.smudge=`,
    '-c',
    `filter.${n}.process=`,
    '-c',
    `filter.${n}.required=false`,
  ])
}

/** The full argv for `git <args>`: the safe config, the overrides, and diff switches after the subcommand. */
export function safeGitArgv(args: readonly string[], overrides: readonly string[] = []): string[] {
  const [sub, ...rest] = args
  const extra = DIFFING.has(sub ?? '') ? ['--no-ext-diff', '--no-textconv'] : []
  return [...SAFE_GIT_CONFIG, ...overrides, ...(sub === undefined ? [] : [sub]), ...extra, ...rest]
}
