import fs from 'node:fs'
import path from 'node:path'
import { execa, execaSync } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildProgram } from '../../src/cli/main.js'
import { PLUMBING } from '../../src/cli/options.js'
import { createTeam } from '../../src/teams/team-store.js'
import { type IsolatedHome, isolatedHome } from '../support/home.js'
import { BIN, requireBuilt } from '../support/repo.js'

/**
 * `swarm completion bash|zsh|fish`, loaded into the real shell: subcommands, options and team
 * names complete; the command list is the program's own (a command added to main.ts's GROUPS is
 * completed without touching the scripts); plumbing is not offered.
 */
const has = (shell: string) => execaSync('sh', ['-c', `command -v ${shell}`], { reject: false }).exitCode === 0

describe('shell completion', () => {
  let home: IsolatedHome
  let env: NodeJS.ProcessEnv
  beforeAll(async () => {
    requireBuilt('dist/cli/main.js')
    home = isolatedHome('swarm-completion-')
    const bin = path.join(home.base, 'bin')
    fs.mkdirSync(bin)
    fs.writeFileSync(path.join(bin, 'swarm'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`, { mode: 0o755 })
    env = { ...home.env, PATH: `${bin}:${home.env.PATH ?? process.env.PATH}` }
    for (const name of ['alpha', 'beta']) await createTeam({ name, cwd: home.project, members: [{ name: 'a' }] }, env)
  })
  afterAll(() => home?.cleanup())

  const userCommands = async () =>
    (await buildProgram()).commands
      .filter((c) => c.helpGroup() !== PLUMBING)
      .map((c) => c.name())
      .sort()

  it('bash: loaded with complete -F; completes commands (from the program), subcommands, options, team names; no plumbing', async () => {
    const script = `
      eval "$(swarm completion bash)" || exit 9
      complete -p swarm
      comp() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _swarm; echo "[$*] \${COMPREPLY[*]}"; }
      comp swarm ''
      comp swarm te
      comp swarm team cr
      comp swarm team create x --ag
      comp swarm send ''
      comp swarm team show a
      comp swarm perms ''
      comp swarm ag
      comp swarm team create x --cwd /nonexistent-dir-for-swarm/
    `
    const r = await execa('bash', ['--norc', '--noprofile', '-c', script], { env, reject: false, cwd: home.project })
    expect(r.exitCode, r.stderr).toBe(0)
    const out = r.stdout.split('\n')
    expect(out[0]).toBe('complete -F _swarm swarm')
    const reply = (words: string) =>
      out
        .find((l) => l.startsWith(`[${words}] `))
        ?.slice(words.length + 3)
        .split(' ')
        .filter(Boolean)
    expect(reply('swarm ')?.sort()).toEqual([...(await userCommands()), 'help'].sort())
    expect(reply('swarm te')).toEqual(['team'])
    expect(reply('swarm team cr')).toEqual(['create'])
    expect(reply('swarm team create x --ag')).toEqual(['--agents', '--agent-type', '--agent'])
    expect(reply('swarm send ')).toEqual(['alpha', 'beta'])
    expect(reply('swarm team show a')).toEqual(['alpha'])
    expect(reply('swarm perms ')).toEqual(['show', 'approve', 'deny', 'alpha', 'beta'])
    expect(reply('swarm ag')).toEqual([]) // agent, agent-cli: plumbing
    expect(reply('swarm team create x --cwd /nonexistent-dir-for-swarm/')).toEqual([]) // a value: files, not options
  }, 30_000)

  it.runIf(has('zsh'))(
    'zsh: loads after compinit and registers _swarm; completes commands, options and team names',
    async () => {
      const script = `
      autoload -U compinit && compinit -u -D
      eval "$(swarm completion zsh)" || exit 9
      print -r -- "registered: \${_comps[swarm]}"
      # What zsh's completion system would list: the candidates that start with the word typed.
      _describe() { local x; for x in "\${(@P)\${@[-1]}}"; do [[ \${x%%:*} == \${words[CURRENT]}* ]] && print -r -- "\${x%%:*}"; done }
      compadd() { while [[ $1 == -* ]]; do [[ $1 == -- ]] && { shift; break }; [[ $1 == -X ]] && shift; shift; done; local x; for x; do [[ $x == \${words[CURRENT]}* ]] && print -r -- $x; done }
      _files() { print -r -- FILES }
      comp() { words=("$@"); CURRENT=$#; print -r -- "[$*]"; _swarm }
      comp swarm ''
      comp swarm team show ''
      comp swarm team create x --ag
      comp swarm team create x --cwd ''
    `
      const r = await execa('zsh', ['-f', '-c', script], { env, reject: false, cwd: home.project })
      expect(r.exitCode, r.stderr).toBe(0)
      const blocks = completionBlocks(r.stdout)
      expect(r.stdout).toContain('registered: _swarm')
      expect(blocks['swarm '].sort()).toEqual([...(await userCommands()), 'help'].sort())
      expect(blocks['swarm team show ']).toEqual(['alpha', 'beta'])
      expect(blocks['swarm team create x --ag']).toEqual(['--agents', '--agent-type', '--agent'])
      expect(blocks['swarm team create x --cwd ']).toEqual(['FILES'])
    },
    30_000,
  )

  it.runIf(has('fish'))(
    "fish: complete -C answers from the script's completions, with descriptions",
    async () => {
      const script = `
      swarm completion fish | source
      for line in 'swarm te' 'swarm team cr' 'swarm team show ' 'swarm team create x --ag' 'swarm ag'
        echo "[$line]"
        complete -C"$line"
      end
    `
      const r = await execa('fish', ['--no-config', '-c', script], { env, reject: false, cwd: home.project })
      expect(r.exitCode, r.stderr).toBe(0)
      const blocks = completionBlocks(r.stdout, (l) => l.split('\t')[0])
      expect(r.stdout).toContain('team\tcreate, list, show and delete teams')
      expect(blocks['swarm te']).toEqual(['team'])
      expect(blocks['swarm team cr']).toEqual(['create'])
      expect(blocks['swarm team show ']).toEqual(['alpha', 'beta'])
      expect(blocks['swarm team create x --ag']).toEqual(expect.arrayContaining(['--agents', '--agent-type', '--agent']))
      expect(blocks['swarm ag']).not.toContain('agent') // plumbing (fish falls back to fuzzy matches of other commands)
      expect(blocks['swarm ag']).not.toContain('agent-cli')
    },
    30_000,
  )
})

/** What the script printed for each typed line: `[<line>]` then one candidate a line. */
function completionBlocks(stdout: string, candidate: (line: string) => string = (l) => l): Record<string, string[]> {
  return Object.fromEntries(
    stdout
      .split(/^\[/m)
      .slice(1)
      .map((b) => {
        const [head, ...rest] = b.split('\n')
        return [head.replace(/\]$/, ''), rest.filter(Boolean).map(candidate)]
      }),
  )
}
