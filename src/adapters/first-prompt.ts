/**
 * The first prompt of an adapter teammate: who it is, how messages reach it and how it answers
 * (its shell's `swarm send` / `swarm tasks`, or — its adapter's `teamChannel: 'mcp'` — the swarm
 * MCP tools alone), then its instructions. A Claude Code teammate speaks the team protocol itself
 * and gets only its instructions, with a note on `swarm tasks` when its own task tools are off
 * (claude-task-tools.ts).
 */
import { LEAD_NAME } from '../home/paths.js'
import type { TeamChannel } from './types.js'

export interface FirstPromptInput {
  team: string
  name: string
  prompt?: string
  /** How it talks to the team (its adapter's `teamChannel`; default `shell`). */
  channel?: TeamChannel
}

export function firstPrompt(input: FirstPromptInput): string {
  const intro = [
    `You are "${input.name}", a teammate in the swarm team "${input.team}"; the lead is "${LEAD_NAME}".`,
    'Messages from the team arrive in your input as "[message from <name>] <text>".',
    ...(input.channel === 'mcp' ? mcpChannel(input.name) : shellChannel(input.team, input.name)),
  ].join('\n')
  return input.prompt ? `${intro}\n\n${input.prompt}` : intro
}

function shellChannel(team: string, name: string): string[] {
  return [
    `To answer, run in your shell: swarm send ${team} <name> "<text>" (e.g. swarm send ${team} ${LEAD_NAME} "done: …"),`,
    `and for the team's tasks: swarm tasks ${team} list | show <id> | claim <id> --as ${name} | complete <id> --from ${name}.`,
    'If you have the swarm MCP tools (SendMessage, TaskList, TaskGet, TaskUpdate, TaskCreate), you may use those instead.',
  ]
}

function mcpChannel(name: string): string[] {
  return [
    `To answer, call the swarm MCP tool SendMessage with "to" and "message" (e.g. to "${LEAD_NAME}", message "done: …"),`,
    `and for the team's tasks its TaskList, TaskGet, TaskUpdate (owner "${name}" to claim, status "completed" when done) and TaskCreate.`,
    "These tools are your only way to the team: your shell cannot reach the team's files.",
  ]
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
