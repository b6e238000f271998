import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ExitCode, UsageError } from '../../src/errors.js'
import { loadBatchFile } from '../../src/batch/batch-file.js'
import { useTempDir } from '../support/home.js'

/** A batch file spells its keys as a team file does (agentType); anything else is a usage error naming the key. */
describe('batch files', () => {
  let dir: string
  useTempDir('swarm-batch-file-', (d) => (dir = d))
  const tasks = (extra: string) => `tasks:\n${['a', 'b', 'c', 'd', 'e'].map((n) => `  - { name: ${n}, prompt: do ${n}${extra} }\n`).join('')}`
  const write = async (text: string) => {
    const file = path.join(dir, 'tasks.yaml')
    await fs.writeFile(file, text)
    return file
  }

  it('takes agentType, as team files spell it, and the bare list', async () => {
    const file = await write(tasks(', agentType: Explore'))
    expect((await loadBatchFile(file)).map((t) => t.agentType)).toEqual(['Explore', 'Explore', 'Explore', 'Explore', 'Explore'])
    const bare = await write(['a', 'b', 'c', 'd', 'e'].map((n) => `- { name: ${n}, prompt: p }\n`).join(''))
    expect(await loadBatchFile(bare)).toHaveLength(5)
  })

  it('refuses agent_type with a usage error that names the right key', async () => {
    const file = await write(tasks(', agent_type: Explore'))
    const err = await loadBatchFile(file).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect((err as UsageError).exitCode).toBe(ExitCode.usage)
    expect((err as UsageError).message).toBe(`${file}: tasks.0: unknown key "agent_type": it is spelled agentType`)
    expect((err as UsageError).hint).toBe('rename agent_type to agentType')
  })

  it('an unknown key, a wrong type and bad YAML are usage errors naming the file and the key', async () => {
    for (const [text, says] of [
      [tasks(', colour: red'), 'tasks.0: unknown key "colour"'],
      ['tasks:\n  - { name: a, prompt: 3 }\n', 'tasks.0.prompt:'],
      ['tasks: [oops\n', 'not valid YAML'],
    ] as const) {
      const file = await write(text)
      const err = await loadBatchFile(file).catch((e: unknown) => e)
      expect(err, text).toBeInstanceOf(UsageError)
      expect((err as Error).message).toContain(`${file}: ${says}`)
    }
  })
})
