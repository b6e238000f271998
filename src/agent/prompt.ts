import type { InboxMessage } from '../mailbox/types.js'
import type { SystemPrompt } from './cache-layout.js'

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')

/** A message as the model sees it (docs/architecture.md §4). */
export function formatTeammateMessage(m: InboxMessage, extra: Record<string, string> = {}): string {
  const attrs: Array<[string, string | undefined]> = [['teammate_id', m.from], ['color', m.color], ['summary', m.summary], ...Object.entries(extra)]
  const rendered = attrs
    .filter((a): a is [string, string] => a[1] !== undefined && a[1] !== '')
    .map(([k, v]) => `${k}="${escapeAttr(v)}"`)
    .join(' ')
  // A body may not open or close a block of its own: a teammate could pass off text as team-lead's.
  const body = m.text.replace(/<(\/?teammate-message)/gi, '&lt;$1')
  return `<teammate-message ${rendered}>\n${body}\n</teammate-message>`
}

export interface TeamContext {
  team: string
  name: string
  members: string[]
  cwd: string
  definitionPrompt: string
  isLead?: boolean
}

/**
 * The system prompt: the agent type's own prompt plus how to live in a team. The static part is
 * the same bytes on every request (it is cached); who is on the team changes, so it comes after.
 */
export function buildSystemPrompt(ctx: TeamContext): SystemPrompt {
  const others = ctx.members.filter((m) => m !== ctx.name)
  const role = ctx.isLead
    ? `You are the lead of team "${ctx.team}". You coordinate teammates: spawn them with the Agent tool, ` +
      `give them work with SendMessage and the task tools, and answer their questions.`
    : `You are "${ctx.name}", a member of team "${ctx.team}", led by "team-lead".`
  const text = [
    ctx.definitionPrompt.trim(),
    '',
    '# Team',
    role,
    `Working directory: ${ctx.cwd}`,
    'Messages from teammates arrive as <teammate-message teammate_id="…"> blocks.',
    'Your plain text output is NOT seen by anyone else: to tell a teammate or the lead something, use SendMessage.',
    'Use TaskList / TaskGet / TaskUpdate to track shared work; mark a task completed with TaskUpdate when it is done.',
    'When you have finished what was asked, report to team-lead with SendMessage and stop; you will be woken by the next message.',
  ].join('\n')
  return { static: text, dynamic: `Members: ${others.length ? others.join(', ') : '(none yet)'}.` }
}
