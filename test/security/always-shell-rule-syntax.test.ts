import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { alwaysAllowed, alwaysRulesPath } from '../../src/asks/always.js'
import { type IsolatedHome, isolatedHome } from '../support/home.js'

/**
 * Adversarial review (2): after the lead answers a CLI teammate's `touch x` with --always
 * (`Bash(touch:*)`), swarm answers its later shell calls that rule allows without asking. The
 * CLI runs them with bash, so a command bash reads as `touch …` plus a hidden second command must
 * not be one the rule engine reads as only `touch …`. Each hostile line below is first run by real
 * bash to show that its hidden command does run (it makes `pwned`), then given to swarm.
 */
const HOSTILE: Record<string, string> = {
  // `#` starts a comment to the end of the line for bash; a quote inside it hid the next line.
  'a comment holding a quote': "touch a #'\nmkdir pwned #'",
  // `${x:=word}` assigns `$(…)` written with escapes; `${x@P}` expands it as a prompt, which runs it.
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
  'prompt expansion of an assigned value': 'touch b ${x:=\\$\\(mkdir\\ pwned\\)} ${x@P}',
  // An arithmetic offset (`${PWD:y}`) evaluates the variable's value, whose array subscript runs `$(…)`.
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
  'arithmetic evaluation of an assigned value': 'touch c ${y:=a[\\$\\(mkdir\\ pwned\\)]} ${PWD:y}',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
  'the same inside double quotes': 'touch "${x:=\\$(mkdir pwned)}" "${x@P}"',
  // A here-document's body is data to bash; read as commands, a quote in it hid the line after it.
  'a here-document body holding a quote': "touch a <<EOF\ntouch b '\nEOF\nmkdir pwned #'",
  'a quoted, tab-stripped here-document': "touch a <<-'EOF'\ntouch b '\n\tEOF\nmkdir pwned #'",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
  'old-style arithmetic $[…]': 'touch d ${y:=a[\\$\\(mkdir\\ pwned\\)]} $[y]',
}

describe('adversarial: an "always" shell rule of a CLI teammate and bash-only syntax', () => {
  let h: IsolatedHome
  beforeEach(() => {
    h = isolatedHome('swarm-adv2-always-')
    const file = alwaysRulesPath({ team: 'team', member: 'gem' }, h.env)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, JSON.stringify({ allow: ['Bash(touch:*)'] }))
  })
  afterEach(() => h.cleanup())

  it('still allows a plain touch (the rule is in force)', async () => {
    expect(await alwaysAllowed('team', 'gem', 'touch notes.txt', h.project, h.env)).toBe('Bash(touch:*)')
    expect(await alwaysAllowed('team', 'gem', 'touch a # a comment', h.project, h.env)).toBe('Bash(touch:*)')
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
    expect(await alwaysAllowed('team', 'gem', 'touch "${HOME}/x" $HOME', h.project, h.env)).toBe('Bash(touch:*)')
    expect(await alwaysAllowed('team', 'gem', 'touch a <<EOF\ntouch b\nEOF\ntouch c', h.project, h.env)).toBe('Bash(touch:*)')
  })

  for (const [what, command] of Object.entries(HOSTILE)) {
    it(`does not allow a hidden command: ${what}`, async () => {
      const run = fs.mkdtempSync(path.join(h.base, 'run-'))
      spawnSync('bash', ['-c', command], { cwd: run, env: { PATH: process.env.PATH }, stdio: 'ignore' }) // its touch may fail: only the hidden mkdir matters
      expect(fs.existsSync(path.join(run, 'pwned'))).toBe(true)
      expect(await alwaysAllowed('team', 'gem', command, h.project, h.env)).toBeUndefined()
    })
  }
})
