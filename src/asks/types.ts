/**
 * The ask flow's types: what a member asks (AskRequest), who asks (Asker), the one answer every
 * waiter hands back (Answer) and what the tool or the CLI is told of it (Verdict). Pure.
 */

export type RequestKind = 'permission' | 'plan'

/** Where an "always" rule is kept: for the member that asked, or for every member of the team. */
export type AlwaysScope = 'member' | 'team'

/**
 * The answer to one request, however it came (the resolved file, a lead's message, a timeout, an
 * abort) and whoever gave it (the console, `swarm perms`, a Claude Code lead, the asker itself).
 */
export type Answer =
  | {
      kind: 'approve'
      by: string
      updatedInput?: Record<string, unknown>
      /** Always: the rules to keep (Claude Code permission updates or rule strings; default the request's suggestions). */
      permissionUpdates?: unknown[]
      always?: boolean
      /** Plan approvals: the mode to switch to, and notes with the approval. */
      permissionMode?: string
      feedback?: string
    }
  | { kind: 'deny'; by: string; feedback?: string }
  | { kind: 'cancelled'; by: string; reason: string }

/** An answer as someone answering gives it (`swarm perms`, the console): no cancel, the answerer optional. */
export type GivenAnswer =
  | (Omit<Extract<Answer, { kind: 'approve' }>, 'by' | 'permissionUpdates'> & { by?: string; scope?: AlwaysScope })
  | (Omit<Extract<Answer, { kind: 'deny' }>, 'by'> & { by?: string })

/** What the tool (swarm's agent) or the CLI (a hook's reply) is told: run it, maybe with edited input, or not. */
export type Verdict = { behavior: 'allow'; updatedInput?: Record<string, unknown>; message?: string } | { behavior: 'deny'; message: string }

/** Who asks: a member, as the ask flow needs it — never the agent runtime itself. */
export interface Asker {
  team: string
  name: string
  env: NodeJS.ProcessEnv
  /** Shows the member as `waiting` (detail: the call, one line) or back to `working`. */
  setStatus(status: 'waiting' | 'working', detail?: string): Promise<void>
  /** The member's own lines (its pane); a hook, whose stdout is its CLI's, logs none. */
  info(line: string): void
  warn(line: string): void
  /** The team seals its records (asks/store LeadRecordCheck): the member writes no "always" rule itself, the lead kept it sealed. */
  checkRecord?: import('./store.js').LeadRecordCheck
}

/** A request on its way to team-lead. */
export interface AskRequest {
  kind: RequestKind
  toolName: string
  /** The model's tool-use id; absent (a CLI hook's call): `call-<id>`. */
  toolUseId?: string
  input: Record<string, unknown>
  description: string
  /** Rules an "always" answer would keep. */
  suggestions: unknown[]
  /** The whole input on one neutralised line: the status while waiting and notifications cut it, saying so. */
  summary: string
  /** Plans: where the plan is written (the pending record and the lead's message name it). */
  planFilePath?: string
}
