import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { sandbox, type Sandbox } from './helpers.js'
import { hasTmux } from '../support/tmux.js'
import { processesWithEnv } from '../support/proc.js'
import { waitFor } from '../support/wait.js'
import { HEARTBEAT_MS } from '../../src/demo/progress.js'
import { BIN } from '../support/repo.js'

/** util-linux `script`: runs a command on a pseudo-terminal of its own. */
const hasScript = spawnSync('script', ['--version']).status === 0

/** Processes of the demo whose temp directory is `root` still running (none once the demo exits). */
const demoProcesses = (root: string) => processesWithEnv(`SWARM_HOME=${root}/home`)

describe('swarm demo', () => {
  let sb: Sandbox | undefined
  afterEach(async () => {
    await sb?.cleanup()
    sb = undefined
  })

  for (const backend of ['in-process', 'tmux'] as const) {
    it.skipIf(backend === 'tmux' && !hasTmux)(
      `runs a whole team offline (${backend}) and leaves nothing behind`,
      async () => {
        sb = sandbox()
        const r = await sb.swarm(['demo', '--backend', backend, '--yes'], { timeout: 60_000 })
        expect(r.code, r.stderr + r.stdout).toBe(0)
        expect(r.stdout).toContain(`backend      ${backend}`)
        expect(r.stdout).toMatch(/task #1\s+completed\s+Implement slugify/)
        expect(r.stdout).toMatch(/task #2\s+completed\s+Review slugify/)
        expect(r.stdout).toContain('permission   implementer: Bash node test.js → approve')
        expect(r.stdout).toContain('verdict      Review of src/slug.js: PASS')
        // Nothing left: no demo process, no tmux server socket, no temp dir named in the output.
        const project = /project (\S+);/.exec(r.stdout)?.[1]
        expect(project).toBeDefined()
        expect(demoProcesses(path.dirname(project!))).toEqual([])
        expect(fs.existsSync(path.dirname(project!))).toBe(false)
        const sockets = fs.existsSync(path.join(sb.root, 'tmux')) ? fs.readdirSync(path.join(sb.root, 'tmux'), { recursive: true }).map(String) : []
        expect(
          sockets.filter(
            (s) =>
              s.includes('swarm-demo') && fs.existsSync(path.join(sb!.root, 'tmux', s)) && fs.statSync(path.join(sb!.root, 'tmux', s)).isSocket(),
          ),
        ).toEqual([])
      },
      70_000,
    )
  }

  // The prompt is asked only at a terminal: `script` gives the demo one, and this test its keyboard.
  it.skipIf(!hasScript)(
    'answering n at the prompt: the step is reported denied, nothing is reviewed, no silent wait',
    async () => {
      sb = sandbox()
      const demo = sb.start('script', ['-qfec', `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} demo --backend in-process`, '/dev/null'])
      let text = ''
      let answeredAt = 0
      const gaps: number[] = []
      let last = Date.now()
      demo.stdout!.on('data', (d) => {
        text += String(d)
        if (answeredAt) gaps.push(Date.now() - last)
        last = Date.now()
      })
      const exited = new Promise<number | null>((resolve) => demo.once('exit', (code) => resolve(code)))
      await waitFor('the prompt', () => text.includes('approve? [Y/n]'), 30_000, { output: () => text })
      answeredAt = last = Date.now()
      demo.stdin!.write('n\r')
      expect(await exited, text).toBe(0)
      const plain = stripVTControlCharacters(text).replaceAll('\r', '')
      expect(plain).toContain("permission implementer's Bash denied")
      expect(plain).toContain('permission   implementer: Bash node test.js → deny by you')
      expect(plain).toMatch(/task #1\s+in_progress\s+Implement slugify/)
      expect(plain).toContain('verdict      not reviewed — implementer: I could not run the tests: the command was denied at the prompt.')
      expect(plain).not.toContain('PASS')
      // From the answer to the end: well under the 50 s the demo once sat silent, and never quiet past its heartbeat.
      expect(Date.now() - answeredAt).toBeLessThan(20_000)
      expect(Math.max(0, ...gaps)).toBeLessThan(HEARTBEAT_MS + 1_000)
      const project = /project (\S+);/.exec(plain)?.[1]
      expect(demoProcesses(path.dirname(project!))).toEqual([])
    },
    70_000,
  )

  it('--keep keeps the project and the team transcripts, and says where', async () => {
    sb = sandbox()
    const r = await sb.swarm(['demo', '--backend', 'in-process', '--yes', '--keep'], { timeout: 60_000 })
    expect(r.code, r.stderr + r.stdout).toBe(0)
    // A copy taken while an agent still wrote failed half-way (a temp file renamed away under it) and said only this.
    expect(r.stdout).not.toMatch(/^demo (keep|delete): /m)
    const root = /kept (\S+) /.exec(r.stdout)?.[1]
    expect(root, r.stdout).toBeDefined()
    try {
      expect(fs.existsSync(path.join(root!, 'project', 'src', 'slug.js'))).toBe(true)
      for (const name of ['researcher', 'implementer', 'reviewer']) {
        const transcript = fs.readFileSync(path.join(root!, 'team', 'agents', name, 'transcript.jsonl'), 'utf8')
        expect(transcript.split('\n').filter(Boolean).length, name).toBeGreaterThan(0)
      }
      expect(r.stdout).toContain(path.join(root!, 'team', 'agents'))
    } finally {
      fs.rmSync(root!, { recursive: true, force: true })
    }
  }, 70_000)
})
