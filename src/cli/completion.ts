import { Argument, type Command, Option } from 'commander'
import { UsageError } from '../errors.js'
import { listTeams } from '../teams/team-store.js'
import { println } from '../terminal/output.js'
import { PLUMBING } from './options.js'

/*
 * `swarm completion bash|zsh|fish`: a completion script whose command tree is read from the
 * program's registered commands (main.ts loads every group for it), never written by hand. Each
 * shell gets the same small engine: walk the words to the command, then offer its subcommands,
 * its options, or team names for a `<team>` argument (`swarm completion --list-teams`).
 */

const SHELLS = ['bash', 'zsh', 'fish'] as const
type Shell = (typeof SHELLS)[number]

/** One command of the tree: its path (`team create`), what may follow it. */
interface Node {
  path: string
  subs: Array<{ name: string; description: string }>
  options: Array<{ flags: string[]; description: string; takesValue: boolean }>
  args: string[]
}

export function registerCompletionCommand(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script: eval "$(swarm completion bash)", or see docs/commands.md')
    .addArgument(new Argument('[shell]', 'the shell').choices(SHELLS))
    .addOption(new Option('--list-teams', 'print the team names (what the scripts complete a <team> with)').hideHelp())
    .action(async (shell: Shell | undefined, opts: { listTeams?: boolean }) => {
      if (opts.listTeams) {
        for (const t of await listTeams()) println(t.name)
        return
      }
      if (!shell) throw new UsageError('which shell?', { hint: 'swarm completion bash, swarm completion zsh or swarm completion fish' })
      process.stdout.write(completionScript(shell, program))
    })
}

/** The completion script of `shell` for `program` (the root: every command registered). */
function completionScript(shell: Shell, program: Command): string {
  const nodes = commandTree(program)
  return shell === 'bash' ? bashScript(nodes) : shell === 'zsh' ? zshScript(nodes) : fishScript(nodes)
}

/** Every user command, depth first: plumbing (PLUMBING's heading) and hidden commands left out. */
function commandTree(program: Command): Node[] {
  const nodes: Node[] = []
  const walk = (cmd: Command, path: string) => {
    const help = cmd.createHelp()
    const subs = help.visibleCommands(cmd).filter((c) => c.helpGroup() !== PLUMBING)
    nodes.push({
      path,
      subs: subs.map((c) => ({ name: c.name(), description: firstLine(c.description()) })),
      options: help.visibleOptions(cmd).map((o) => ({
        flags: [o.long, o.short].filter((f): f is string => f !== undefined),
        description: firstLine(o.description),
        takesValue: o.required,
      })),
      args: cmd.registeredArguments.map((a) => a.name()),
    })
    for (const c of subs) if (c.name() !== 'help') walk(c, path ? `${path} ${c.name()}` : c.name())
  }
  walk(program, '')
  return nodes
}

function firstLine(s: string): string {
  const line = s.split('\n')[0]
  return line.length > 70 ? `${line.slice(0, 69)}…` : line
}

/** `'…'` for POSIX shells and zsh. */
const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`
/** `'…'` for fish (which escapes \ and ' inside single quotes). */
const fq = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`

const flags = (n: Node) => n.options.flatMap((o) => o.flags)
const valueFlags = (n: Node) => n.options.filter((o) => o.takesValue).flatMap((o) => o.flags)

function bashScript(nodes: Node[]): string {
  const cases = nodes.map(
    (n) =>
      `    ${sq(n.path)}) subs=${sq(n.subs.map((s) => s.name).join(' '))}; opts=${sq(flags(n).join(' '))}; valopts=${sq(valueFlags(n).join(' '))}; args=${sq(n.args.join(' '))} ;;`,
  )
  return `# swarm completion for bash, made by \`swarm completion bash\` from swarm's own commands.
# Load it with: eval "$(swarm completion bash)"   (or save it in ~/.local/share/bash-completion/completions/swarm)
__swarm_node() {
  subs='' opts='' valopts='' args=''
  case "$1" in
${cases.join('\n')}
  esac
}

_swarm() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} cmd='' npos=0 i w
  local subs opts valopts args
  __swarm_node ''
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=\${COMP_WORDS[i]}
    if [[ $w == -* ]]; then
      [[ " $valopts " == *" $w "* ]] && ((i++))
      continue
    fi
    if ((npos == 0)) && [[ " $subs " == *" $w "* ]]; then
      cmd=\${cmd:+$cmd }$w
      __swarm_node "$cmd"
      continue
    fi
    ((npos++))
  done
  COMPREPLY=()
  if ((COMP_CWORD > 1)) && [[ " $valopts " == *" $prev "* ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
    return
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    return
  fi
  local -a argv=($args)
  local words=''
  ((npos == 0)) && words=$subs
  if [[ \${argv[npos]:-} == team ]]; then
    words="$words $(swarm completion --list-teams 2>/dev/null)"
  elif [[ -z $words ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _swarm swarm
`
}

function zshScript(nodes: Node[]): string {
  const spec = (name: string, description: string) => sq(`${name.replace(/:/g, '\\:')}:${description}`)
  const cases = nodes.map(
    (n) =>
      `    ${sq(n.path)}) subs=(${n.subs.map((s) => spec(s.name, s.description)).join(' ')}); opts=(${n.options.flatMap((o) => o.flags.map((f) => spec(f, o.description))).join(' ')}); valopts=(${valueFlags(n).map(sq).join(' ')}); args=(${n.args.map(sq).join(' ')}) ;;`,
  )
  return `#compdef swarm
# swarm completion for zsh, made by \`swarm completion zsh\` from swarm's own commands.
# Load it with: source <(swarm completion zsh)   (after compinit), or save it as _swarm in your $fpath
__swarm_node() {
  subs=() opts=() valopts=() args=()
  case "$1" in
${cases.join('\n')}
  esac
}

_swarm() {
  local cmd='' w cur=\${words[CURRENT]} prev=\${words[CURRENT-1]}
  local -i i npos=0
  local -a subs opts valopts args names teams
  __swarm_node ''
  for ((i = 2; i < CURRENT; i++)); do
    w=\${words[i]}
    if [[ $w == -* ]]; then
      (( \${valopts[(Ie)$w]} )) && ((i++))
      continue
    fi
    names=(\${subs%%:*})
    if ((npos == 0)) && (( \${names[(Ie)$w]} )); then
      cmd=\${cmd:+$cmd }$w
      __swarm_node "$cmd"
      continue
    fi
    ((npos++))
  done
  if ((CURRENT > 2)) && (( \${valopts[(Ie)$prev]} )); then
    _files
    return
  fi
  if [[ $cur == -* ]]; then
    _describe -t options 'option' opts
    return
  fi
  local done=1
  if ((npos == 0 && \${#subs} > 0)); then
    _describe -t commands 'command' subs
    done=0
  fi
  if [[ \${args[npos+1]:-} == team ]]; then
    teams=(\${(f)"$(swarm completion --list-teams 2>/dev/null)"})
    compadd -X team -- $teams
    done=0
  fi
  ((done)) && _files
  return 0
}

if [[ \${funcstack[1]:-} == _swarm ]]; then
  _swarm "$@"
else
  compdef _swarm swarm
fi
`
}

function fishScript(nodes: Node[]): string {
  const line = (name: string, description: string) => fq(`${name}\t${description}`)
  const cases = nodes.map(
    (n) => `    case ${fq(n.path)}
        set subs ${n.subs.map((s) => line(s.name, s.description)).join(' ')}
        set opts ${n.options.flatMap((o) => o.flags.map((f) => line(f, o.description))).join(' ')}
        set valopts ${valueFlags(n).map(fq).join(' ')}
        set args ${n.args.map(fq).join(' ')}`,
  )
  return `# swarm completion for fish, made by \`swarm completion fish\` from swarm's own commands.
# Load it with: swarm completion fish | source   (or save it as ~/.config/fish/completions/swarm.fish)
function __swarm_node --no-scope-shadowing
    set subs
    set opts
    set valopts
    set args
    switch $argv[1]
${cases.join('\n')}
    end
end

function __swarm_complete
    set -l tokens (commandline -opc)
    set -l cur (commandline -ct)
    set -l cmd ''
    set -l npos 0
    set -l subs
    set -l opts
    set -l valopts
    set -l args
    __swarm_node ''
    set -l i 2
    while test $i -le (count $tokens)
        set -l w $tokens[$i]
        set i (math $i + 1)
        if string match -q -- '-*' $w
            contains -- $w $valopts; and set i (math $i + 1)
            continue
        end
        if test $npos -eq 0; and contains -- $w (string replace -r '\\t.*' '' -- $subs)
            set cmd (string trim -- "$cmd $w")
            __swarm_node $cmd
            continue
        end
        set npos (math $npos + 1)
    end
    if test (count $tokens) -gt 1; and contains -- $tokens[-1] $valopts
        __fish_complete_path $cur
        return
    end
    if string match -q -- '-*' $cur
        printf '%s\\n' $opts
        return
    end
    set -l offered 0
    if test $npos -eq 0; and test (count $subs) -gt 0
        printf '%s\\n' $subs
        set offered 1
    end
    set -l n (math $npos + 1)
    if test (count $args) -ge $n; and test $args[$n] = team
        swarm completion --list-teams 2>/dev/null
        set offered 1
    end
    test $offered -eq 0; and __fish_complete_path $cur
end

complete -c swarm -f -a '(__swarm_complete)'
`
}
