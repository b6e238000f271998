import { checkAgentType } from '../agent/definitions/load.js'
import { createExecutor } from '../backends/registry.js'
import { killTeammate } from '../supervisor/stop.js'
import { currentSettingsPins, pinSettings } from '../supervisor/settings-pins.js'
import { spawnTeammate } from '../supervisor/teammates.js'
import type { InProcessExecutor, PaneExecutor, TeammateMain } from '../backends/types.js'
import { formatOverview, formatReport } from './report-format.js'
import { teamReport } from './team-report.js'
import { sendTeamMessage } from '../teams/messaging.js'
import { agentId, LEAD_NAME, validateTeammateName } from '../home/paths.js'
import { addMember, readTeam, updateMember, updateTeam } from '../teams/team-store.js'
import type { BackendType } from '../backends/types.js'
import type { TeamMember } from '../teams/types.js'
import { delay } from '../process/delay.js'
import { definedOnly } from '../util/object.js'
import { wantsWorktree } from '../agent/definitions/isolation.js'
import { type Worktree, createWorktree, removeWorktree, worktreeCwd } from '../worktrees/worktree.js'
import type { TeamControl } from './console.js'
import { STOPPED_FIELD } from '../backends/directory.js'

/** How long the leader waits for a teammate that approved its shutdown to exit before closing its pane. */
const CLOSE_AFTER_APPROVAL_MS = 3_000

export interface LeaderControlOptions {
  team: string
  env: NodeJS.ProcessEnv
  backend: BackendType
  sign: NonNullable<Parameters<typeof createExecutor>[1]>['sign']
  /** The executor of an in-process team (its teammates live in the leader). */
  inProcess?: InProcessExecutor
  /** Builds an in-process teammate's main function. */
  inProcessMain?: (name: string, opts: { resume: boolean }) => TeammateMain
  /** The pane backend that shows a hosted team's teammates (`team create --hosted`), each in a pane of its own. */
  views?: BackendType
}

/** Stopped with `swarm kill` (or the console's /kill): an in-process leader does not restart it; `swarm spawn` clears the mark. */
export function stoppedWithKill(m: TeamMember): boolean {
  return m[STOPPED_FIELD] === true
}

/** The team's hands as the leader console and the lead agent use them. */
export class LeaderControl implements TeamControl {
  private pane: PaneExecutor | undefined
  /** Where the teammates are shown: their panes, or a hosted team's views. */
  private shown: PaneExecutor | undefined
  constructor(private readonly options: LeaderControlOptions) {
    if (options.backend !== 'in-process') this.pane = createExecutor(options.backend, { env: options.env, sign: options.sign })
    this.shown = this.pane ?? (options.views ? createExecutor(options.views, { env: options.env }) : undefined)
  }

  /** `worktree`: in a git worktree of its own, a string naming it (undefined: as its agent definition's `isolation` says). */
  async spawn(
    name: string,
    opts: {
      agentType?: string
      prompt?: string
      model?: string
      mode?: string
      cwd?: string
      worktree?: boolean | string
      maxCostUsd?: number
      maxTokens?: number
    },
  ): Promise<string> {
    validateTeammateName(name)
    if (this.options.backend === 'in-process') {
      const config = await readTeam(this.options.team, this.options.env)
      const leadCwd = config.members.find((m) => m.name === LEAD_NAME)?.cwd ?? process.cwd()
      if (opts.agentType !== undefined) await checkAgentType(opts.agentType, { cwd: opts.cwd ?? leadCwd, env: this.options.env })
      const wt = await this.wantedWorktree(name, { ...opts, repoDir: opts.cwd ?? leadCwd, leadCwd })
      try {
        if (!config.members.some((m) => m.name === name)) {
          await addMember(
            this.options.team,
            {
              name,
              agentType: opts.agentType,
              model: opts.model,
              mode: opts.mode,
              cwd: opts.cwd,
              backendType: 'in-process',
              tmuxPaneId: 'in-process',
              isActive: false,
              ...(opts.worktree !== undefined ? { worktree: opts.worktree } : {}),
              ...(opts.maxCostUsd !== undefined ? { maxCostUsd: opts.maxCostUsd } : {}),
              ...(opts.maxTokens !== undefined ? { maxTokens: opts.maxTokens } : {}),
            },
            this.options.env,
          )
        }
        if (wt) await updateMember(this.options.team, name, { cwd: await worktreeCwd(wt), worktreePath: wt.path }, this.options.env)
      } catch (err) {
        if (wt && !wt.reused) await removeWorktree(wt, { env: this.options.env }).catch(() => undefined) // nothing half-made stays
        throw err
      }
      if (opts.prompt)
        await sendTeamMessage({ team: this.options.team, to: name, text: opts.prompt, summary: 'task from team-lead', env: this.options.env })
      await this.startInProcess(name, false)
      return `started ${name} (in-process)${wt ? ` in worktree ${wt.path} (branch ${wt.branch})` : ''}`
    }
    const r = await spawnTeammate(
      this.options.team,
      {
        name,
        ...(opts.agentType ? { agentType: opts.agentType } : {}),
        ...(opts.model ? { model: opts.model } : {}),
        ...(opts.mode ? { mode: opts.mode } : {}),
        ...(opts.cwd ? { cwd: opts.cwd } : {}),
        ...(opts.worktree !== undefined ? { worktree: opts.worktree } : {}),
      },
      { env: this.options.env, ...(this.pane ? { executor: this.pane } : {}) },
    )
    if (opts.prompt)
      await sendTeamMessage({ team: this.options.team, to: name, text: opts.prompt, summary: 'task from team-lead', env: this.options.env })
    return `started ${name} in pane ${r.spawned.paneId}${r.worktree ? ` in worktree ${r.worktree.path} (branch ${r.worktree.branch})` : ''}`
  }

  /**
   * Starts (or restarts) a registered in-process member inside this process — in its worktree,
   * made first when the roster asks for one (`worktree`, or its definition's isolation) and it has none yet.
   */
  async startInProcess(name: string, resume: boolean): Promise<void> {
    await this.startAllInProcess([{ name, resume }])
  }

  /**
   * startInProcess for several members, in order, with one config write for all their settings
   * pins and one for all that started: a leader restarting 64 teammates rewrites the roster twice, not 128 times.
   */
  async startAllInProcess(list: ReadonlyArray<{ name: string; resume: boolean }>): Promise<void> {
    if (!list.length) return
    const exec = this.options.inProcess
    const main = this.options.inProcessMain
    if (!exec || !main) throw new Error('this leader has no in-process executor')
    const { team, env } = this.options
    const config = await readTeam(team, env)
    const leadCwd = config.members.find((m) => m.name === LEAD_NAME)?.cwd ?? process.cwd()
    const members: TeamMember[] = []
    for (const { name } of list) {
      let member = config.members.find((m) => m.name === name)
      if (!member) throw new Error(`no member ${name}`)
      if (!member.worktreePath) {
        const wt = await this.wantedWorktree(name, {
          ...definedOnly({ worktree: member.worktree, agentType: member.agentType }),
          repoDir: member.cwd,
          leadCwd,
        })
        if (wt) member = await updateMember(team, name, { cwd: await worktreeCwd(wt), worktreePath: wt.path }, env)
      }
      members.push(member)
    }
    // Their hooks and sandbox settings as they are at their start: their next start (this leader's, `team resume`'s) names what changed since.
    const pins = await currentSettingsPins(members, env)
    await updateTeam(team, (t) => pinSettings(t, pins), env)
    const started = new Set<string>()
    try {
      for (const [i, member] of members.entries()) {
        await exec.spawn({
          team,
          name: member.name,
          cwd: member.cwd,
          ...(member.color ? { color: member.color } : {}),
          run: main(member.name, { resume: list[i]!.resume }),
        })
        started.add(member.name)
      }
    } finally {
      // Those that started are recorded even when a later one failed.
      if (started.size)
        await updateTeam(
          team,
          (t) => {
            for (const m of t.members)
              if (started.has(m.name))
                Object.assign(m, { backendType: 'in-process', tmuxPaneId: 'in-process', isActive: true, [STOPPED_FIELD]: undefined })
          },
          env,
        )
    }
  }

  /** The worktree a teammate asks for (`worktree`, else its definition's isolation), made from `repoDir`; undefined when it wants none. */
  private async wantedWorktree(
    name: string,
    o: { worktree?: boolean | string; agentType?: string; repoDir: string; leadCwd: string },
  ): Promise<Worktree | undefined> {
    const wanted = await wantsWorktree({ ...definedOnly({ worktree: o.worktree, agentType: o.agentType }), cwd: o.leadCwd, env: this.options.env })
    if (!wanted) return undefined
    return createWorktree({
      repoDir: o.repoDir,
      team: this.options.team,
      name,
      env: this.options.env,
      ...(typeof o.worktree === 'string' ? { slug: o.worktree } : {}),
    })
  }

  async kill(name: string, opts: { now?: boolean }): Promise<string> {
    const exec = this.options.inProcess
    const config = await readTeam(this.options.team, this.options.env)
    const member = config.members.find((m) => m.name === name)
    if (member?.backendType === 'in-process' && exec) {
      const id = agentId(name, this.options.team)
      if (opts.now) await exec.kill(id)
      else {
        const r = await exec.terminate(id, 'stopped by team-lead', { timeoutMs: 10_000 })
        if (r.outcome === 'timeout' || r.outcome === 'rejected') await exec.kill(id)
      }
      await updateMember(this.options.team, name, { isActive: false, [STOPPED_FIELD]: true }, this.options.env)
      return `stopped ${name}`
    }
    const r = await killTeammate(this.options.team, name, { env: this.options.env, sign: this.options.sign, ...(opts.now ? { now: true } : {}) })
    return `${name}: ${r.outcome}${'after' in r && r.after ? ` after ${r.after}` : ''}`
  }

  async closed(name: string): Promise<void> {
    if (name === LEAD_NAME) return
    const config = await readTeam(this.options.team, this.options.env)
    const member = config.members.find((m) => m.name === name)
    if (!member) return
    await updateMember(this.options.team, name, { isActive: false }, this.options.env)
    if (member.backendType === 'in-process' || !this.pane) return
    const id = agentId(name, this.options.team)
    // The teammate exits by itself after approving; give it a moment, then close the pane.
    for (let waited = 0; waited < CLOSE_AFTER_APPROVAL_MS; waited += 100) {
      const s = (await this.pane.status([id])).get(id)
      if (s?.state !== 'alive') break
      await delay(100)
    }
    await this.pane.kill(id)
  }

  async status(view: 'table' | 'overview' = 'table'): Promise<string> {
    const report = await teamReport(this.options.team, {
      env: this.options.env,
      ...(this.options.inProcess ? { inProcess: this.options.inProcess } : {}),
    })
    return view === 'overview' ? formatOverview(report) : formatReport(report)
  }

  /** `/focus <name>`: the person's tmux client shown the teammate's pane (its window, a page, made current). */
  async focus(name: string): Promise<string> {
    if (!this.shown) return 'in-process teammates have no pane: their output is in this console'
    let notice = ''
    await this.shown.attach(this.options.team, { terminal: false, notice: (line) => (notice = line) }, name)
    return notice || `showing ${name}`
  }
}
