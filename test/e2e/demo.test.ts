import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { sandbox, type Sandbox } from './helpers.js'
import { hasTmux } from '../support/tmux.js'

/** Processes of the demo whose temp directory is `root` still running (none once the demo exits). */
function demoProcesses(root: string): string[] {
  const found: string[] = []
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`SWARM_HOME=${root}/home`))
        found.push(`${pid} ${fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')}`)
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found
}

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
