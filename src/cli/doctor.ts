import type { Command } from 'commander'
import type { PaneBackend, ServerReport } from '../backends/backend.js'
import { ExitCode, SwarmError, errorMessage } from '../errors.js'
import type { SandboxCheck } from '../sandbox/check.js'
import { modelConfigured } from '../agent/client.js'
import { colors, printJson, println } from '../terminal/output.js'
import { MODEL_FIX } from './model-check.js'
// The sandbox check plans a real sandbox, whose protected paths the adapter registry installs when it loads.
import '../adapters/registry.js'

export interface DoctorCommandOptions {
  json?: boolean
}

/** `swarm doctor` */
export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('which backend swarm would use here and why, and what is missing')
    .option('--json', 'print JSON')
    .action((opts: DoctorCommandOptions) => runDoctor(opts))
}

export interface DoctorReport {
  backend?: string
  reason?: string
  error?: string
  trace: string[]
  environment: { insideTmux: boolean; insideITerm2: boolean; interactive: boolean; isTTY: boolean; ci?: string }
  /** The tmux backend's probe and its server (`socket`, `serverRunning`, `sessions`, `clipboard`). */
  tmux: { ok: boolean; detail: string } & ServerReport
  it2: { ok: boolean; detail: string }
  /** Whether teammates' Bash calls run in the OS sandbox here (a real sandboxed command was run). */
  sandbox: SandboxCheck
  /** Whether swarm's own agents have a model here: a key or token, and the server it goes to. */
  model: { configured: boolean; detail: string }
  missing: string[]
  /** Agent CLIs swarm can run as teammates (adapters), installed or not. */
  agents?: import('../adapters/doctor.js').AgentCliReport
}

/** Exit 0 when a backend can be used here, 7 otherwise (after printing why). */
export async function runDoctor(opts: DoctorCommandOptions): Promise<void> {
  const report = await diagnose()
  if (opts.json) printJson(report)
  else printReport(report)
  if (!report.backend) process.exitCode = ExitCode.backendUnavailable
}

export async function diagnose(env: NodeJS.ProcessEnv = process.env): Promise<DoctorReport> {
  const [detect, registry] = await Promise.all([import('../backends/detect.js'), import('../backends/registry.js')])
  const inputs = detect.systemDetectInputs(env)
  const panes = registry.paneBackends()
  const probes = new Map(await Promise.all(panes.map(async (b) => [b.type, { backend: b, ...(await inputs.probe(b)) }] as const)))
  const tmuxProbe = probes.get('tmux') ?? { ok: false, detail: 'not registered' }
  const tmux = registry.findBackend('tmux')
  const tmuxServer = (tmux?.kind === 'pane' && (await tmux.inspect?.(env, tmuxProbe.ok))) || { socket: '', serverRunning: false, sessions: [] }
  const it2Probe = probes.get('iterm2') ?? { ok: false, detail: 'not registered' }
  // Started now, awaited below: a failure is a report line, never an unhandled rejection meanwhile.
  const sandboxing = sandboxReport(env).catch(
    (err: unknown): SandboxCheck => ({ ok: false, enabled: true, detail: `the check failed: ${errorMessage(err)}` }),
  )
  const report: DoctorReport = {
    backend: undefined,
    reason: undefined,
    error: undefined,
    trace: [],
    environment: {
      insideTmux: registry.findBackend('tmux')?.kind === 'pane' && (registry.findBackend('tmux') as PaneBackend).inside(env),
      insideITerm2: registry.findBackend('iterm2')?.kind === 'pane' && (registry.findBackend('iterm2') as PaneBackend).inside(env),
      interactive: detect.isInteractive(env, inputs.isTTY),
      isTTY: inputs.isTTY,
      ...(env.CI !== undefined && { ci: env.CI }),
    },
    tmux: { ok: tmuxProbe.ok, detail: tmuxProbe.detail, ...tmuxServer },
    it2: { ok: it2Probe.ok, detail: it2Probe.detail },
    sandbox: await sandboxing,
    model: modelReport(env),
    missing: [],
  }
  try {
    const d = await detect.detectBackend(inputs)
    Object.assign(report, { backend: d.backend, reason: d.reason, trace: d.trace })
  } catch (err) {
    if (!(err instanceof SwarmError)) throw err
    report.error = err.hint ? `${err.message} — ${err.hint}` : err.message
  }
  if (!report.model.configured) report.missing.push(`model: ${report.model.detail} — ${MODEL_FIX}`)
  if (!report.sandbox.ok) report.missing.push(`sandbox: ${report.sandbox.detail} (until then every Bash call of a teammate is asked)`)
  // What would make each pane backend work: the standalone ones always, the others when inside them.
  for (const { backend, ok } of probes.values()) {
    if (ok || !(backend.standalone || backend.inside(env))) continue
    report.missing.push(`${backend.probe[0]}: ${backend.installHint(process.platform, inputs.osRelease)}`)
  }
  report.agents = await (await import('../adapters/doctor.js')).agentCliReport(env, process.cwd())
  return report
}

/** The model configuration, as `team create` checks it (model-check.ts); never the key itself. */
function modelReport(env: NodeJS.ProcessEnv): DoctorReport['model'] {
  const server = env.ANTHROPIC_BASE_URL ? `at ${env.ANTHROPIC_BASE_URL}` : 'at the Anthropic API'
  if (modelConfigured(env))
    return { configured: true, detail: `${env.ANTHROPIC_API_KEY ? 'ANTHROPIC_API_KEY' : 'ANTHROPIC_AUTH_TOKEN'} set, ${server}` }
  const detail = env.ANTHROPIC_BASE_URL
    ? `ANTHROPIC_BASE_URL is ${env.ANTHROPIC_BASE_URL} but neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set`
    : 'neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set, so swarm agents cannot think'
  return { configured: false, detail }
}

/** The sandbox as the settings of the current directory configure it. */
async function sandboxReport(env: NodeJS.ProcessEnv): Promise<SandboxCheck> {
  const [{ checkSandbox }, { loadPermissionSettings }] = await Promise.all([
    import('../sandbox/check.js'),
    import('../permissions/rules/settings.js'),
  ])
  const settings = await loadPermissionSettings({ cwd: process.cwd(), env }).catch(() => undefined)
  return checkSandbox(env, settings?.sandbox)
}

function printReport(r: DoctorReport): void {
  const ok = (b: boolean) => (b ? colors.green('ok') : colors.red('no'))
  if (r.backend) println(`backend: ${colors.bold(r.backend)} — ${r.reason}`)
  else println(`backend: ${colors.red('none')} — ${r.error}`)
  for (const step of r.trace) println(`  · ${step}`)
  println(`tmux:    ${ok(r.tmux.ok)} (${r.tmux.detail})`)
  if (r.tmux.ok) {
    const sessions = r.tmux.sessions.length ? r.tmux.sessions.join(', ') : 'no sessions'
    println(`         server ${r.tmux.socket}: ${r.tmux.serverRunning ? `running, ${sessions}` : 'not running'}`)
    // swarm sets its own server to external; inside tmux the server is yours.
    if (r.tmux.clipboard === 'on')
      println(
        `         ${colors.yellow('set-clipboard on')}: a teammate's output can set your clipboard (OSC 52) — tmux set -s set-clipboard external`,
      )
  }
  println(`it2:     ${ok(r.it2.ok)} (${r.it2.detail})`)
  println(`model:   ${ok(r.model.configured)} (${r.model.detail})`)
  println(`sandbox: ${ok(r.sandbox.ok)} (${r.sandbox.detail})${r.sandbox.enabled ? '' : ' — turned off here by sandbox.enabled: false'}`)
  const e = r.environment
  println(
    `where:   inside tmux ${ok(e.insideTmux)}, inside iTerm2 ${ok(e.insideITerm2)}, terminal ${ok(e.isTTY)}${e.ci !== undefined ? `, CI=${e.ci}` : ''}`,
  )
  for (const m of r.missing) println(`missing: ${m}`)
  if (r.agents) {
    println('agent CLIs:')
    for (const a of r.agents.agents) {
      const where = a.path
        ? `${a.version ?? 'version unknown'} (${a.path})`
        : colors.yellow(`not installed (${a.missing ?? `${a.binary} not found`})`)
      println(
        `  ${a.kind.padEnd(12)} ${where}; hooks ${a.hooks === 'ok' ? colors.green('ok') : a.hooks}; ${a.control ? `control channel ${a.control === 'ok' ? colors.green('ok') : a.control}; ` : ''}${a.delivery}${a.source === 'built-in' ? '' : ` [${a.source}]`}`,
      )
    }
    for (const p of r.agents.problems) println(colors.red(`  ${p}`))
  }
}
