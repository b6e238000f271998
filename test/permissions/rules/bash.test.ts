import { describe, expect, it } from 'vitest'
import { matchesBashContent, parseCommand } from '../../../src/permissions/rules/bash.js'

const texts = (cmd: string) => parseCommand(cmd).parts.map((p) => p.text)

describe('parseCommand', () => {
  it.each([
    ['npm test', ['npm test']],
    ['a && b; c | d', ['a', 'b', 'c', 'd']],
    ['a || b & c', ['a', 'b', 'c']],
    ['a |& b', ['a', 'b']],
    ['a\nb', ['a', 'b']],
    ['(cd x && rm y)', ['cd x', 'rm y']],
    ['echo "a && b"; c', ['echo "a && b"', 'c']],
    ["echo 'a | b'", ["echo 'a | b'"]],
    ['echo a\\;b', ['echo a\\;b']],
    ['npm   test   --watch', ['npm test --watch']],
    ['make 2>&1 | tee log', ['make 2>&1', 'tee log']],
    ['cmd &> out', ['cmd &> out']],
    ['', []],
  ])('%j → %j', (cmd, parts) => {
    expect(texts(cmd)).toEqual(parts)
  })

  it('notices substitutions and collects the commands inside them', () => {
    for (const cmd of ['echo $(rm -rf x)', 'echo `rm -rf x`', 'echo "$(rm -rf x)"', 'diff <(rm -rf x) y', 'echo $((1+2))']) {
      const parsed = parseCommand(cmd)
      expect(parsed.hasSubstitution, cmd).toBe(true)
      expect(parsed.parts[0].hasSubstitution, cmd).toBe(true)
    }
    expect(parseCommand('echo $(rm -rf x)').nested.map((p) => p.text)).toEqual(['rm -rf x'])
    expect(parseCommand("echo '$(rm -rf x)'").hasSubstitution).toBe(false)
    expect(parseCommand('echo $(a $(b))').nested.map((p) => p.text)).toEqual(['a $(b)', 'b'])
  })

  it('records output redirections to files but not to /dev/null or other fds', () => {
    expect(parseCommand('npm test > out.log').parts[0].writesTo).toEqual(['out.log'])
    expect(parseCommand('npm test >> "a b"').parts[0].writesTo).toEqual(['a b'])
    expect(parseCommand('npm test 2>/dev/null').parts[0].writesTo).toEqual([])
    expect(parseCommand('npm test 2>&1').parts[0].writesTo).toEqual([])
    expect(parseCommand('npm test &>x').parts[0].writesTo).toEqual(['x'])
  })

  it('gives an unquoted form for deny matching', () => {
    expect(parseCommand(`'rm' -rf "/"`).parts[0].plain).toBe('rm -rf /')
  })
})

describe('matchesBashContent', () => {
  it.each([
    ['npm test:*', 'npm test', true],
    ['npm test:*', 'npm test -- --watch', true],
    ['npm test:*', 'npm tests', false],
    ['npm test:*', 'npm', false],
    ['git status', 'git status', true],
    ['git status', 'git status -s', false],
    ['ls *', 'ls -la', true],
    ['ls *', 'ls', true],
    ['ls *', 'lsof', false],
    ['ls*', 'lsof', true],
    ['git * main', 'git push origin main', true],
    ['git * main', 'git push origin dev', false],
  ])('%s vs %s → %s', (content, cmd, expected) => {
    expect(matchesBashContent(content, cmd)).toBe(expected)
  })
})
