/**
 * `CLAUDE_CODE_PROCESS_WRAPPER=<swarm>/bin/swarm-claude-launcher.js`: Claude Code 2.1.332 starts each
 * of its self-spawns (split-pane teammates, background sessions) as `<launcher> <claude> <args…>`,
 * the variable still set. This runs that argv in swarm's whole-process sandbox, the runner an
 * agent-CLI teammate runs in (sandbox/process-sandbox.ts): its cwd and Claude Code's config dir
 * writable (its team protocol lives there), every team's `lead.key` and swarm's sent log hidden,
 * swarm's settings and agent files read-only, the agent homes masked. Inside already (the marker
 * below), the argv runs as it is: the sandbox holds for the whole tree.
 */
import fs from 'node:fs'
import path from 'node:path'
import { LEAD_KEY_FILE, agentHomesRoot, rootDir, sentRoot, teamsDir } from '../home/paths.js'
import { controlPlaneOptions } from '../permissions/rules/control-plane.js'
import { loadPermissionSettings } from '../permissions/rules/settings.js'
import { ignoreSignal, onStopSignal } from '../process/handlers.js'
import { shellExitCode, startInTerminal } from '../process/launch.js'
import { killTree } from '../process/tree.js'
import { confineProcess } from '../sandbox/process-sandbox.js'
import { projectConfigDirsOf } from './registry.js'

/** Set inside the sandbox: a self-spawn of a confined Claude Code is confined already. */
export const CLAUDE_CONFINED_ENV = 'SWARM_CLAUDE_CONFINED'

/** Every team's private lead key (swarm's own teams; a Claude-led team has none). */
function leadKeys(env: NodeJS.ProcessEnv): string[] {
  const dir = teamsDir(env)
  let teams: string[] = []
  try {
    teams = fs.readdirSync(dir)
  } catch {
    return [] // no team yet: nothing to hide
  }
  return teams.map((t) => path.join(dir, t, LEAD_KEY_FILE)).filter((f) => fs.existsSync(f))
}

/** Runs `argv` (Claude Code and its arguments) confined; resolves with its exit code. */
export async function runClaudeLauncher(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  if (argv.length === 0) {
    process.stderr.write('swarm-claude-launcher: no command — Claude Code runs it as `<launcher> <claude> <args…>`\n')
    return 2
  }
  const cwd = process.cwd()
  let file = argv[0]
  let args = argv.slice(1)
  let fd3: Uint8Array | undefined
  let settle = async (): Promise<string[]> => []
  if (env[CLAUDE_CONFINED_ENV] !== '1') {
    const settings = await loadPermissionSettings({ cwd, env })
    const cp = controlPlaneOptions(cwd, env)
    const configDir = env.CLAUDE_CONFIG_DIR || path.join(env.HOME ?? '', '.claude')
    const name = argv[argv.indexOf('--agent-name') + 1]
    const confined = await confineProcess(argv, {
      config: settings.sandbox,
      env,
      label: argv.includes('--agent-name') && name ? name : 'claude',
      cwd,
      writable: [configDir, rootDir(env), ...settings.additionalDirectories],
      // The agent CLIs' project config dirs (hooks, settings) as every confined CLI sees them.
      readOnly: [
        ...cp.protectedPaths.filter((p) => p !== agentHomesRoot(env)),
        ...projectConfigDirsOf([])
          .map((d) => path.join(cwd, d.dir))
          .filter((d) => fs.existsSync(d)),
      ],
      hidden: [...leadKeys(env), sentRoot(env)],
      masked: [agentHomesRoot(env)],
    })
    if (confined.status !== 'sandboxed') process.stderr.write(`swarm: warning: Claude Code runs without the OS sandbox: ${confined.reason}\n`)
    ;({ file, args, fd3 } = confined)
    settle = confined.settle
  }
  const child = startInTerminal(file, args, { env: { ...env, [CLAUDE_CONFINED_ENV]: '1' }, ...(fd3 && { fd3 }) })
  // Ctrl-C in its pane is for Claude Code; a hang-up or TERM ends it and what it started.
  ignoreSignal('SIGINT')
  onStopSignal(() => {
    if (child.pid) void killTree(child.pid)
  })
  const code = shellExitCode(await child.exited)
  await settle()
  return code
}
