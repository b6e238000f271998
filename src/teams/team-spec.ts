import fs from 'node:fs/promises'
import path from 'node:path'
import YAML from 'yaml'
import { z } from 'zod'
import { CorruptFileError, NotFoundError } from '../errors.js'
import { PermissionModeName } from '../permissions/rules/modes.js'

/** One member of a `--from team.yaml` file. */
export const TeamSpecMember = z.strictObject({
  name: z.string(),
  agentType: z.string().optional(),
  model: z.string().optional(),
  mode: PermissionModeName.optional(),
  prompt: z.string().optional(),
  cwd: z.string().optional(),
  /** A worktree of its own: true, or the worktree's name. */
  worktree: z.union([z.boolean(), z.string()]).optional(),
})

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
 *   - { name: implementer, mode: acceptEdits, worktree: true }
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
  members: z.array(TeamSpecMember).default([]),
})
export type TeamSpec = z.infer<typeof TeamSpec>

/** Reads a team file (YAML or JSON); relative `cwd`s are resolved against the file's directory. */
export async function loadTeamSpec(file: string): Promise<TeamSpec> {
  let text: string
  try {
    text = await fs.readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError(`no team file ${file}`)
    throw err
  }
  let raw: unknown
  try {
    raw = YAML.parse(text)
  } catch (err) {
    throw new CorruptFileError(file, `not valid YAML: ${(err as Error).message.split('\n')[0]}`)
  }
  const parsed = TeamSpec.safeParse(raw ?? {})
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new CorruptFileError(file, `${issue.path.join('.') || '(root)'}: ${issue.message}`)
  }
  const base = path.dirname(path.resolve(file))
  const spec = parsed.data
  return {
    ...spec,
    ...(spec.cwd ? { cwd: path.resolve(base, spec.cwd) } : {}),
    members: spec.members.map((m) => ({ ...m, ...(m.cwd ? { cwd: path.resolve(base, m.cwd) } : {}) })),
  }
}
