/**
 * The first prompt of an adapter teammate: who it is, how messages reach it and how it answers
 * (its shell's `swarm send` / `swarm tasks`, or the swarm MCP tools), then its instructions.
 * A Claude Code teammate speaks the team protocol itself and gets only its instructions, with a
 * note on `swarm tasks` when its own task tools are off (claude-task-tools.ts).
 */
import { LEAD_NAME } from '../home/paths.js'

export interface FirstPromptInput {
  team: string
  name: string
  prompt?: string
}

export function firstPrompt(input: FirstPromptInput): string {
  const intro = [
    `You are "${input.name}", a teammate in the swarm team "${input.team}"; the lead is "${LEAD_NAME}".`,
    'Messages from the team arrive in your input as "[message from <name>] <text>".',
    `To answer, run in your shell: swarm send ${input.team} <name> "<text>" (e.g. swarm send ${input.team} ${LEAD_NAME} "done: …"),`,
    `and for the team's tasks: swarm tasks ${input.team} list | show <id> | claim <id> --as ${input.name} | complete <id> --from ${input.name}.`,
    'If you have the swarm MCP tools (SendMessage, TaskList, TaskGet, TaskUpdate, TaskCreate), you may use those instead.',
  ].join('\n')
  return input.prompt ? `${intro}\n\n${input.prompt}` : intro
}

/** What a Claude Code teammate without TaskList/TaskUpdate/TaskCreate is told to use instead: its shell's `swarm tasks`. */
export function claudeTaskToolsNote(team: string, name: string): string {
  return [
    `Your TaskList, TaskGet, TaskUpdate and TaskCreate tools are off in this session. For the team's shared task list, run in your shell:`,
    `swarm tasks ${team} list; swarm tasks ${team} show <id>; swarm tasks ${team} claim <id> --as ${name};`,
    `swarm tasks ${team} complete <id> --from ${name}; swarm tasks ${team} add "<subject>" --from ${name}.`,
  ].join('\n')
}

/** A Claude Code teammate's first inbox message: its instructions, after the note when its task tools are off; undefined when there is nothing to say. */
export function claudeFirstPrompt(input: FirstPromptInput & { taskTools: boolean }): string | undefined {
  const parts = [...(input.taskTools ? [] : [claudeTaskToolsNote(input.team, input.name)]), ...(input.prompt ? [input.prompt] : [])]
  return parts.length > 0 ? parts.join('\n\n') : undefined
}
