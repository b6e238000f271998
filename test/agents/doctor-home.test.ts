import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REPO, agentBinDir, hasCli } from './helpers.js'

/** The real Gemini CLI writes `~/.gemini/projects.json.<uuid>.tmp` when asked its version: doctor must not let it. */

const run = promisify(execFile)
const PINNED = JSON.parse(readFileSync(path.join(REPO, 'test/agents/versions.json'), 'utf8')) as Record<string, string>

describe.skipIf(!hasCli('gemini'))('swarm doctor with the real agent CLIs', () => {
  let dir: string
  beforeAll(async () => {
    dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'swarm-doctor-real-')))
    await fs.mkdir(path.join(dir, 'home'))
  })
  afterAll(() => fs.rm(dir, { recursive: true, force: true }))

  it("reports their versions and leaves the user's HOME as it was", async () => {
    const home = path.join(dir, 'home')
    const env = { PATH: process.env.PATH, HOME: home, SWARM_HOME: path.join(dir, 'swarm'), SWARM_AGENT_BIN_DIR: agentBinDir(), NO_COLOR: '1' }
    const r = await run(process.execPath, [path.join(REPO, 'bin/swarm.js'), 'doctor', '--json'], { env, cwd: dir }).catch(
      (e: { stdout: string }) => e,
    )
    const agents = (JSON.parse(r.stdout) as { agents: { agents: Array<{ kind: string; version?: string; hooks?: string }> } }).agents.agents
    expect(agents.find((a) => a.kind === 'gemini')?.version).toMatch(/^\d+\.\d+\.\d+/)
    // Qwen Code writes its settings and runtime files under QWEN_HOME (else ~/.qwen) when asked its version.
    if (hasCli('qwen')) expect(agents.find((a) => a.kind === 'qwen')).toMatchObject({ version: PINNED['@qwen-code/qwen-code'], hooks: 'ok' })
    expect(await fs.readdir(home, { recursive: true })).toEqual([])
  })
})
