import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { sandbox, type Sandbox } from './helpers.js'
import { hasTmux } from '../support/tmux.js'

/** Processes of a demo team still running (there must be none once the demo exits). */
function demoProcesses(): string[] {
  return execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => /swarm\.js (agent --team demo|leader demo)\b/.test(l))
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
        const before = demoProcesses()
        const r = await sb.swarm(['demo', '--backend', backend, '--yes'], { timeout: 60_000 })
        expect(r.code, r.stderr + r.stdout).toBe(0)
        expect(r.stdout).toContain(`backend      ${backend}`)
        expect(r.stdout).toMatch(/task #1\s+completed\s+Implement slugify/)
        expect(r.stdout).toMatch(/task #2\s+completed\s+Review slugify/)
        expect(r.stdout).toContain('permission   implementer: Bash node test.js → approve')
        expect(r.stdout).toContain('verdict      Review of src/slug.js: PASS')
        // Nothing left: no demo process, no tmux server socket, no temp dir named in the output.
        expect(demoProcesses().filter((p) => !before.includes(p))).toEqual([])
        const project = /project (\S+);/.exec(r.stdout)?.[1]
        expect(project && fs.existsSync(path.dirname(project))).toBe(false)
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
})
