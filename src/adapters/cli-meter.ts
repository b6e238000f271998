/**
 * An agent-CLI teammate's account of its model requests. When its adapter says how it reaches its
 * model (`modelRoute`) and that provider is configured (its key or base URL is set), the pane
 * wrapper starts the metering proxy beside the relay — this is the one place that decides the
 * upstream — and runs the CLI pointed at it, holding a stand-in instead of the key where it can.
 */
import { randomBytes } from 'node:crypto'
import { storeMeter } from '../agent/store-meter.js'
import type { BudgetLimit } from '../agent/budget.js'
import type { SpendMeter } from '../agent/spend-meter.js'
import { errorMessage } from '../errors.js'
import { updateMemberState } from '../store/member-state.js'
import { readTeam } from '../teams/team-store.js'
import { startMeterProxy } from './meter-proxy.js'
import type { AgentAdapter } from './types.js'
import type { Env } from '../home/env.js'

export interface MeteredCli {
  /** The CLI's environment: its base URL the proxy's, its key (where hidden) a stand-in. */
  env: Env
  argv: string[]
  close(): Promise<void>
}

export interface CliMeterOptions {
  team: string
  name: string
  adapter: AgentAdapter
  argv: string[]
  env: Env
  /** Its CLI keeps its own state (Claude Code): the record its first spend makes says `working`, and its budget is not written into it. */
  ownState: boolean
}

/** The metered launch; undefined when its requests cannot be counted (a warning in its pane says so if it has a budget). */
export async function meterCli(o: CliMeterOptions): Promise<MeteredCli | undefined> {
  const route = o.adapter.modelRoute
  const base = route && o.env[route.baseUrlEnv]
  const key = route && o.env[route.keyEnv]
  if (!route || (!base && !key)) {
    const why = route
      ? `neither ${route.baseUrlEnv} nor ${route.keyEnv} is set (it signs in its own way)`
      : `swarm does not know how ${o.adapter.kind} reaches its model`
    const team = await readTeam(o.team, o.env)
    if ((await memberLimit(o)) || team.budget)
      process.stderr.write(`swarm: warning: ${o.name}'s budgets are not enforced: ${why}, so swarm cannot see its model requests\n`)
    return undefined
  }
  const store = storeMeter({ team: o.team, name: o.name, env: o.env, budget: () => memberLimit(o), status: o.ownState ? 'working' : 'starting' })
  // Its record says why it is refused, as swarm's own agent's does, until a request passes again (`swarm budget`).
  let refused: string | undefined
  const say = (detail: string | undefined) =>
    void updateMemberState(o.team, o.name, (old) => ({ ...(old ? {} : { status: 'working' }), detail }), o.env, { create: true }).catch(
      (err: unknown) => process.stderr.write(`swarm: ${errorMessage(err)}\n`),
    )
  const meter: SpendMeter = {
    async check() {
      const why = await store.check()
      if (why !== refused) say(why)
      refused = why
      return why
    },
    record: (model, usage) => store.record(model, usage),
  }
  const hidden = route.hideKey && key ? { value: key, standIn: `swarm-meter-${randomBytes(12).toString('hex')}` } : undefined
  const proxy = await startMeterProxy({ api: route.api, upstream: base || route.defaultBaseUrl, meter, ...(hidden && { key: hidden }) })
  const limit = await memberLimit(o)
  if (limit && !o.ownState) await updateMemberState(o.team, o.name, { budget: limit }, o.env)
  const env: Env = { ...o.env, [route.baseUrlEnv]: proxy.url, ...(hidden && { [route.keyEnv]: hidden.standIn }) }
  const argv = route.pointArgs ? [o.argv[0], ...route.pointArgs(proxy.url), ...o.argv.slice(1)] : o.argv
  return {
    env,
    argv,
    // A CLI on its own state keeps the `working` its spend made: its process tells `swarm status` how it ended.
    close: () => proxy.close(),
  }
}

/** The member's limit as its team entry says (`--max-cost`, `--max-tokens`, raised by `swarm budget`). */
async function memberLimit(o: { team: string; name: string; env: Env }): Promise<BudgetLimit | undefined> {
  const config = await readTeam(o.team, o.env)
  const m = config.members.find((x) => x.name === o.name)
  if (m?.maxCostUsd === undefined && m?.maxTokens === undefined) return undefined
  return { ...(m.maxCostUsd !== undefined && { maxCostUsd: m.maxCostUsd }), ...(m.maxTokens !== undefined && { maxTokens: m.maxTokens }) }
}
