/**
 * What the scripted models play in `swarm demo --mixed` (and test/agents/mixed.test.ts): a swarm
 * lead that plans two tasks and hands them to a Codex and a Gemini CLI teammate, each of which
 * writes a file, completes its task and reports through `swarm mcp`; Claude Code reviews Codex's file on the lead's word and reports.
 */
import path from 'node:path'
import type { AgentScriptInput } from '../loopback-model/agent-script.js'
import type { ScenarioInput } from '../loopback-model/scenario.js'

/** The teammates of the mixed job, by the CLI that runs each. */
export const MIXED_MEMBERS = { codex: 'coder', gemini: 'writer', claude: 'reviewer' } as const
export type MixedCli = keyof typeof MIXED_MEMBERS

/** What the user types at the leader console to start the job. */
export const MIXED_KICKOFF = 'MIXED-JOB: write greeting.txt and farewell.txt, and have greeting.txt reviewed'
export const MIXED_REPORTS = { codex: 'TASK-1 DONE', gemini: 'TASK-2 DONE', claude: 'REVIEW PASS' } as const
export const MIXED_FILES = { codex: 'greeting.txt', gemini: 'farewell.txt' } as const
export const MIXED_CONTENT = { codex: 'hello from codex', gemini: 'farewell from gemini' } as const
export const MIXED_TASKS = { codex: 'Write greeting.txt', gemini: 'Write farewell.txt' } as const
/** The lead's last word, once its TaskList shows both tasks completed. */
export const MIXED_DONE = 'JOB COMPLETE: both tasks are completed'
/** The label of the lead's last word in the Messages server's request log. */
export const MIXED_DONE_LABEL = 'job-complete'

const tool = (name: string, input: Record<string, unknown>, text?: string) => ({
  content: [...(text ? [{ type: 'text' as const, text }] : []), { type: 'tool_use' as const, name, input }],
})
const send = (to: string, message: string, summary: string) => tool('SendMessage', { to, message, summary })

/**
 * The Messages-API scenario: the lead's script (x-swarm-agent: team-lead) and Claude Code's rules
 * (its requests carry no agent header). `present` says which CLIs take part: tasks and messages
 * for a missing one are left out.
 */
export function mixedLeadScenario(o: { project: string; present: ReadonlySet<MixedCli> }): ScenarioInput {
  const has = (cli: MixedCli) => o.present.has(cli)
  const owned = (['codex', 'gemini'] as const).filter(has)
  const reviewed = reviewedText(o.present)
  const steps: NonNullable<ScenarioInput['steps']> = [
    ...owned.map((cli) => tool('TaskCreate', taskInput(cli))),
    ...owned.map((cli, k) => tool('TaskUpdate', { taskId: String(k + 1), owner: MIXED_MEMBERS[cli] })),
    ...owned.map((cli, k) =>
      send(
        MIXED_MEMBERS[cli],
        `JOB-STEP-${cli}: task #${k + 1} is yours: ${MIXED_TASKS[cli]} containing "${MIXED_CONTENT[cli]}", mark task #${k + 1} completed and tell me "${MIXED_REPORTS[cli]}".`,
        `task #${k + 1}: ${MIXED_TASKS[cli]}`,
      ),
    ),
    // Without Codex the file to review is the demo's own: Claude Code is asked at once.
    ...(has('claude') && !has('codex') ? [reviewOrder(o.project, reviewed)] : []),
    { text: owned.length ? `Handed out ${owned.length} task(s).` : 'Asked for the review.' },
  ]
  steps[0] = { ...steps[0], when: { lastUserIncludes: 'MIXED-JOB' } } as (typeof steps)[number]
  const taskLines = owned.map((cli, k) => `#${k + 1} [completed] ${MIXED_TASKS[cli]} (owner: ${MIXED_MEMBERS[cli]})`).join('\n')
  const leadRules = [
    // Codex's file is written: Claude Code reviews it (once).
    ...(has('claude') && has('codex') ? [{ when: { lastUserIncludes: MIXED_REPORTS.codex }, times: 1, ...reviewOrder(o.project, reviewed) }] : []),
    // A report in: the lead checks the task list; both completed → its last word.
    ...(owned.length ? [{ when: { toolResultIncludes: taskLines }, text: MIXED_DONE, label: MIXED_DONE_LABEL }] : []),
    ...(!owned.length ? [{ when: { lastUserIncludes: MIXED_REPORTS.claude }, text: MIXED_DONE, label: MIXED_DONE_LABEL }] : []),
    {
      when: { lastUserMatches: `${MIXED_REPORTS.codex}|${MIXED_REPORTS.gemini}|${MIXED_REPORTS.claude}` },
      ...tool('TaskList', {}, 'Checking the tasks.'),
    },
  ]
  const greeting = path.join(o.project, MIXED_FILES.codex)
  return {
    name: 'swarm-demo-mixed',
    model: 'claude-loopback-demo',
    agents: { 'team-lead': { steps, rules: leadRules } },
    // Claude Code (no agent header): read what it is asked to review, then report.
    rules: [
      { when: { lastUserIncludes: 'REVIEW-STEP' }, times: 1, ...tool('Read', { file_path: greeting }, 'Reading the file to review.') },
      {
        when: { toolResultIncludes: reviewed },
        times: 1,
        ...send('team-lead', `${MIXED_REPORTS.claude}: ${MIXED_FILES.codex} says "${reviewed}"`, 'review: PASS'),
      },
    ],
    fallback: { text: 'Noted.' },
  }
}

/** What Claude Code reviews: Codex's greeting.txt, or (Codex not installed) the one the demo writes itself. */
export function reviewedText(present: ReadonlySet<MixedCli>): string {
  return present.has('codex') ? MIXED_CONTENT.codex : 'hello from the demo (Codex is not installed)'
}

function taskInput(cli: 'codex' | 'gemini') {
  return {
    subject: MIXED_TASKS[cli],
    description: `${MIXED_FILES[cli]} containing "${MIXED_CONTENT[cli]}"`,
    activeForm: `Writing ${MIXED_FILES[cli]}`,
  }
}

function reviewOrder(project: string, reviewed: string) {
  return send(
    MIXED_MEMBERS.claude,
    `REVIEW-STEP: please read ${path.join(project, MIXED_FILES.codex)} and tell me "${MIXED_REPORTS.claude}" if it says "${reviewed}".`,
    `review ${MIXED_FILES.codex}`,
  )
}

/**
 * Codex (Responses API): one shell call, outside its sandbox (bubbled to the lead), writes the
 * file; then TaskUpdate and SendMessage through `swarm mcp`, its only way to the team.
 */
export function mixedCodexScript(team: string): AgentScriptInput {
  const mcp = (name: string, args: Record<string, unknown>) => ({ tool: name, namespace: 'mcp__swarm', args })
  return {
    rules: [
      {
        userMatches: 'JOB-STEP-codex',
        times: 1,
        reply: {
          tool: 'exec_command',
          args: {
            cmd: `printf '%s\\n' '${MIXED_CONTENT.codex}' > ${MIXED_FILES.codex}`,
            sandbox_permissions: 'require_escalated',
            justification: 'write the file for the team',
          },
        },
      },
      { afterTool: true, times: 1, reply: mcp('TaskUpdate', { taskId: '1', status: 'completed' }) },
      { afterTool: true, times: 1, reply: mcp('SendMessage', { to: 'team-lead', message: `${MIXED_REPORTS.codex}: ${MIXED_FILES.codex} written` }) },
      { afterTool: true, reply: { text: `Task #1 of ${team} is done.` } },
    ],
    fallback: { text: 'Ready.' },
  }
}

/** Gemini CLI: write_file (bubbled to the lead), then TaskUpdate and SendMessage through `swarm mcp`. */
export function mixedGeminiScript(project: string, taskId: string): AgentScriptInput {
  return {
    rules: [
      {
        userMatches: 'JOB-STEP-gemini',
        times: 1,
        reply: { tool: 'write_file', args: { file_path: path.join(project, MIXED_FILES.gemini), content: `${MIXED_CONTENT.gemini}\n` } },
      },
      { afterTool: true, times: 1, reply: { tool: 'mcp_swarm_TaskUpdate', args: { taskId, status: 'completed' } } },
      {
        afterTool: true,
        times: 1,
        reply: { tool: 'mcp_swarm_SendMessage', args: { to: 'team-lead', message: `${MIXED_REPORTS.gemini}: ${MIXED_FILES.gemini} written` } },
      },
      { afterTool: true, reply: { text: `Task #${taskId} is done.` } },
    ],
    fallback: { text: 'Ready.' },
  }
}
