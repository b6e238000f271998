// Bash sandbox benchmark: the Bash tool runs a trivial command (`true`) ROUNDS times without the
// sandbox (the baseline: `bash -c`) and ROUNDS times inside it (bwrap, the plan built afresh per
// call: the protected-path scan of the cwd included), interleaved so both see the same load.
// The cwd is this checkout (a real repository: .git, src/, test/, node_modules skipped by the scan).
// Prints one JSON object as its last line (progress on stderr).
// Run: npm run build && node bench/bash.mjs
import fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
// The agent CLIs' protected config dirs, which every sandbox protects, are installed by the adapter
// registry when it loads (as in every swarm entry point); without it the sandbox refuses to plan.
import '../dist/adapters/registry.js'
import { bashTool } from '../dist/agent/tools/bash.js'
import { createBashSandbox, sandboxAvailability } from '../dist/sandbox/sandbox.js'
import { defaultSandboxConfig } from '../dist/sandbox/sandbox-settings.js'
import { unsandboxed } from '../dist/sandbox/unsandboxed.js'

const ROUNDS = 200
const WARMUP = 10
const TARGET_OVERHEAD_P50_MS = 15
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}
function stats(samples) {
  const s = [...samples].sort((a, b) => a - b)
  const r = (x) => Math.round(x * 100) / 100
  return { p50Ms: r(percentile(s, 50)), p95Ms: r(percentile(s, 95)), meanMs: r(s.reduce((a, b) => a + b, 0) / s.length) }
}

async function main() {
  const available = await sandboxAvailability({}, process.env)
  if (available.status !== 'sandboxed') throw new Error(`the sandbox cannot run here: ${available.reason}`)
  const base = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'swarm-bench-bash-')))
  const hidden = path.join(base, 'teams')
  await fsp.mkdir(hidden)
  const sandbox = createBashSandbox({
    config: defaultSandboxConfig(),
    env: process.env,
    label: 'bench',
    hidden: [hidden],
    readOnly: [],
    writableDirs: () => [],
  })
  const abort = new AbortController()
  const ctx = {
    cwd: REPO,
    signal: abort.signal,
    agentName: 'bench',
    teamName: 'bench',
    checkPermission: () => ({ behavior: 'allow' }),
    env: process.env,
    // The baseline: the explicit no-sandbox value, which launches plain `bash -c`.
    sandbox: unsandboxed('the benchmark baseline'),
  }
  const run = async (withSandbox) => {
    const t0 = performance.now()
    const r = await bashTool.execute({ command: 'true' }, withSandbox ? { ...ctx, sandbox } : ctx)
    const ms = performance.now() - t0
    if (typeof r !== 'string' && r.isError) throw new Error(`the command failed: ${r.content}`)
    return ms
  }
  const loadBefore = os.loadavg()[0]
  try {
    for (let i = 0; i < WARMUP; i++) await run(i % 2 === 0)
    const plain = []
    const boxed = []
    for (let i = 0; i < ROUNDS; i++) {
      // Alternate which goes first, so neither always runs right after the other.
      if (i % 2 === 0) {
        plain.push(await run(false))
        boxed.push(await run(true))
      } else {
        boxed.push(await run(true))
        plain.push(await run(false))
      }
      if (i % 20 === 0) process.stderr.write(`\r${i}/${ROUNDS}`)
    }
    process.stderr.write('\n')
    const baseline = stats(plain)
    const sandboxed = stats(boxed)
    const overheadP50Ms = Math.round((sandboxed.p50Ms - baseline.p50Ms) * 100) / 100
    console.log(
      JSON.stringify({
        bench: 'bash',
        command: 'true',
        rounds: ROUNDS,
        cwd: 'this checkout',
        sandbox: available.reason,
        baseline,
        sandboxed,
        overheadP50Ms,
        overheadP95Ms: Math.round((sandboxed.p95Ms - baseline.p95Ms) * 100) / 100,
        targetOverheadP50Ms: TARGET_OVERHEAD_P50_MS,
        withinTarget: overheadP50Ms <= TARGET_OVERHEAD_P50_MS,
        cpus: os.cpus().length,
        loadAvg1m: { before: Math.round(loadBefore * 100) / 100, after: Math.round(os.loadavg()[0] * 100) / 100 },
      }),
    )
  } finally {
    await sandbox.close()
    await fsp.rm(base, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
