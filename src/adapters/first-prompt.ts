/**
 * The first prompt of an adapter teammate: who it is, how messages reach it and how it answers
 * (its shell's `swarm send` / `swarm tasks`, or the swarm MCP tools), then its instructions.
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
    `and for the team's tasks: swarm tasks ${input.team} list | show <id> | claim <id> | complete <id>.`,
    'If you have the swarm MCP tools (SendMessage, TaskList, TaskGet, TaskUpdate, TaskCreate), you may use those instead.',
  ].join('\n')
  return input.prompt ? `${intro}\n\n${input.prompt}` : intro
}
