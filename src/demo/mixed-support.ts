/**
 * The mixed demo's plumbing: a provider-free environment, Claude Code's onboarding file, typing at
 * the leader console, what the lead's model saw, and the processes left under the demo's root.
 */
import fs from 'node:fs/promises'
import path from 'node:path'
import type pc from 'picocolors'
import { paneIo } from '../backends/registry.js'
import { ExitCode, SwarmError } from '../errors.js'
import type { LoopbackServer } from '../loopback-model/loopback-server.js'
import { lastUserMessage } from '../loopback-model/script-player.js'
import { delay } from '../process/delay.js'
import { LEAD_NAME } from '../home/paths.js'

/** Variables that would send a CLI to a real service or config: the demo sets its own. */
const PROVIDER_PREFIXES = ['ANTHROPIC_', 'OPENAI_', 'CODEX_', 'GEMINI_', 'GOOGLE_', 'CLAUDE_', 'AWS_', 'VERTEX_', 'PI_']

export function withoutProviderVars(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !PROVIDER_PREFIXES.some((p) => k.startsWith(p))))
}

/** Claude Code's `.claude.json` in its config dir: onboarding done, the project trusted, the demo key approved. */
export async function writeClaudeOnboarding(configDir: string, project: string, apiKey: string): Promise<void> {
  const config = {
    hasCompletedOnboarding: true,
    theme: 'dark',
    projects: { [project]: { hasTrustDialogAccepted: true } },
    customApiKeyResponses: { approved: [apiKey.slice(-20)], rejected: [] },
  }
  await fs.mkdir(configDir, { recursive: true })
  await fs.writeFile(path.join(configDir, '.claude.json'), JSON.stringify(config), { mode: 0o600 })
}

/** Types a line at the leader console (its pane), once the console is up. */
export async function typeAtLeader(env: NodeJS.ProcessEnv, pane: string, line: string, timeoutMs = 30_000): Promise<void> {
  const leader = paneIo('tmux', { paneId: pane }, env)
  const deadline = Date.now() + timeoutMs
  while (!(await leader.screen().catch(() => '')).includes('swarm leader')) {
    if (Date.now() > deadline)
      throw new SwarmError('SWARM_DEMO_TIMEOUT', `the leader console did not start within ${timeoutMs / 1000} s`, { exitCode: ExitCode.timeout })
    await delay(100)
  }
  await leader.type(line)
  await delay(200)
  await leader.keys(['Enter'])
}

/** The lead agent's model requests that carried each of `needles`, as the line it was in. */
export function leadSaw(server: LoopbackServer, needles: readonly string[]): string[] {
  const texts = server.requests.filter((r) => r.agent === LEAD_NAME && r.body).map((r) => lastUserMessage(r.body as never).text)
  return needles.flatMap((n) => {
    const text = texts.find((t) => t.includes(n))
    if (text === undefined) return []
    const at = text.indexOf(n)
    return [
      text
        .slice(at, text.indexOf('\n', at) === -1 ? undefined : text.indexOf('\n', at))
        .replace(/<\/?[a-z-]+[^>]*>/g, '')
        .trim(),
    ]
  })
}

/** Whether the lead's model answered with the step labelled `label`. */
export function leadPlayed(server: LoopbackServer, label: string): boolean {
  return server.requests.some((r) => r.agent === LEAD_NAME && r.played?.label === label)
}

/** The project's files and their first line. */
export async function projectFiles(project: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const f of (await fs.readdir(project)).sort()) {
    const text = await fs.readFile(path.join(project, f), 'utf8').catch(() => undefined)
    if (text !== undefined) out[f] = text.split('\n')[0] ?? ''
  }
  return out
}

/** Live processes whose environment names `root` (everything the demo started has it: HOME, TMPDIR, SWARM_HOME). */
export async function processesUnder(root: string): Promise<number[]> {
  const out: number[] = []
  for (const n of await fs.readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(n) || Number(n) === process.pid) continue
    try {
      const [environ, stat] = await Promise.all([fs.readFile(`/proc/${n}/environ`, 'latin1'), fs.readFile(`/proc/${n}/stat`, 'utf8')])
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue
      if (environ.split('\0').some((kv) => kv.includes(`=${root}/`) || kv.endsWith(`=${root}`))) out.push(Number(n))
    } catch {
      // gone, or not ours
    }
  }
  return out
}

export type Colors = ReturnType<typeof pc.createColors>
