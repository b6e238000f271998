import path from 'node:path'
import { z } from 'zod'
import { UsageError } from '../errors.js'
import { PermissionModeName } from '../permissions/rules/modes.js'
import { readSpecFile } from '../util/spec-file.js'

/** One member of a `--from team.yaml` file. */
export const TeamSpecMember = z.strictObject({
  name: z.string(),
  agentType: z.string().optional(),
  /** The agent CLI it runs: codex, gemini, qwen, opencode, pi, claude, a user-defined adapter, or swarm. */
  agent: z.string().optional(),
  model: z.string().optional(),
  mode: PermissionModeName.optional(),
  prompt: z.string().optional(),
  cwd: z.string().optional(),
  /** A worktree of its own: true, or the worktree's name. */
  worktree: z.union([z.boolean(), z.string()]).optional(),
  /** Its budget, in USD and/or tokens. */
  maxCostUsd: z.number().positive().optional(),
  maxTokens: z.number().int().positive().optional(),
  /** Another machine to run on: `user@host[:port]` or a Host of the ssh config (as `swarm spawn --host`); its cwd is a path there. */
  host: z.string().optional(),
})

const Budget = z.strictObject({ maxCostUsd: z.number().positive().optional(), maxTokens: z.number().int().positive().optional() })

/**
 * A team described in a file (`swarm team create <team> --from team.yaml`):
 * ```yaml
 * description: refactor the auth module
 * backend: tmux
 * model: sonnet
 * members:
 *   - name: researcher
 *     agentType: Explore
 *     prompt: map every caller of login()
 *   - { name: implementer, mode: acceptEdits, worktree: true, maxCostUsd: 5 }
 *   - { name: trainer, host: gpu-box, prompt: run the training job }   # on another machine (docs/remote.md)
 * budget: { maxCostUsd: 2 }       # every member's, unless its own says otherwise
 * teamBudget: { maxCostUsd: 20 }  # all members together
 * ```
 */
export const TeamSpec = z.strictObject({
  name: z.string().optional(),
  description: z.string().optional(),
  cwd: z.string().optional(),
  /** `auto` or a backend's name; the caller checks it against the registry. */
  backend: z.string().optional(),
  model: z.string().optional(),
  mode: PermissionModeName.optional(),
  /** Every member in a worktree of its own (a member's own `worktree` wins). */
  worktree: z.boolean().optional(),
  /** Every member's budget (a member's own wins), and the whole team's. */
  budget: Budget.optional(),
  teamBudget: Budget.optional(),
  members: z.array(TeamSpecMember).default([]),
})
export type TeamSpec = z.infer<typeof TeamSpec>

/** Every key a team file knows, at any level (an unknown key is named with its right spelling). */
const TEAM_FILE_KEYS = [...new Set([...Object.keys(TeamSpec.shape), ...Object.keys(TeamSpecMember.shape), ...Object.keys(Budget.shape)])]

/**
 * Reads a team file (YAML or JSON); relative `cwd`s are resolved against the file's directory. A
 * bad value or an unknown key is a UsageError (exit 2) naming the file and the key.
 * `backendChoices` (the registry's, from the caller) checks `backend:` with the file named.
 */
export async function loadTeamSpec(file: string, opts: { backendChoices?: readonly string[] } = {}): Promise<TeamSpec> {
  const spec = await readSpecFile(file, TeamSpec, 'team file', TEAM_FILE_KEYS)
  if (spec.backend !== undefined && opts.backendChoices && !opts.backendChoices.includes(spec.backend)) {
    throw new UsageError(`${file}: backend: ${JSON.stringify(spec.backend)} is not one of ${opts.backendChoices.join(', ')}`)
  }
  const base = path.dirname(path.resolve(file))
  return {
    ...spec,
    ...(spec.cwd ? { cwd: path.resolve(base, spec.cwd) } : {}),
    // A member on a host keeps its cwd as written: a path on that machine.
    members: spec.members.map((m) => ({ ...m, ...(m.cwd && m.host === undefined ? { cwd: path.resolve(base, m.cwd) } : {}) })),
  }
}
