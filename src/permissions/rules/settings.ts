import os from 'node:os'
import path from 'node:path'
import { z } from 'zod'
import { CorruptFileError, UsageError } from '../../errors.js'
import { rootDir } from '../../home/paths.js'
import { PermissionModeName } from './modes.js'
import { parseJsonFile, readFileIfExists } from '../../util/fs.js'
import { type SandboxConfig, SandboxSettings, defaultSandboxConfig, mergeSandboxSettings } from '../../sandbox/sandbox-settings.js'
import { RuleSyntaxError, parseRule } from './rules.js'
import type { PermissionHook, PermissionRule, RuleBehavior, RuleSource, SettingsScope } from './types.js'

/** One hook command, as Claude Code writes it; non-command hook types are kept and ignored. */
const HookCommand = z.looseObject({
  type: z.string(),
  command: z.string().optional(),
  timeout: z.number().positive().optional(),
})

const HookMatcher = z.looseObject({
  matcher: z.string().optional(),
  hooks: z.array(HookCommand),
})

/**
 * The part of a Claude Code settings file swarm reads:
 * `{ permissions: { allow, deny, ask, defaultMode, additionalDirectories }, hooks: { PermissionRequest } }`.
 * Unknown fields (other hook events, env, model…) are kept.
 */
export const SettingsFile = z.looseObject({
  permissions: z
    .looseObject({
      allow: z.array(z.string()).optional(),
      deny: z.array(z.string()).optional(),
      ask: z.array(z.string()).optional(),
      defaultMode: z.string().optional(),
      additionalDirectories: z.array(z.string()).optional(),
    })
    .optional(),
  hooks: z.looseObject({ PermissionRequest: z.array(HookMatcher).optional() }).optional(),
  sandbox: SandboxSettings.optional(),
})
export type SettingsFile = z.infer<typeof SettingsFile>

/** Permission options given on the command line (`--allow`, `--deny`, `--ask`, `--mode`, `--add-dir`). */
export interface CliPermissionOptions {
  allow?: string[]
  deny?: string[]
  ask?: string[]
  mode?: PermissionModeName
  additionalDirectories?: string[]
}

export interface LoadedSettings {
  /** In merge order: user, project, local, command line; within each, allow then ask then deny. */
  rules: PermissionRule[]
  /** The command line's mode, else the last settings file's defaultMode. */
  defaultMode?: PermissionModeName
  /** Absolute; where acceptEdits passes edits besides the cwd. */
  additionalDirectories: string[]
  permissionRequestHooks: PermissionHook[]
  /** The `sandbox` keys merged (on by default). */
  sandbox: SandboxConfig
  files: Array<{ scope: SettingsScope; path: string; exists: boolean }>
  /** Non-fatal problems (an unknown defaultMode, a hook without a command). */
  diagnostics: string[]
}

/** The three settings files, lowest precedence first. */
export function settingsFiles(cwd: string, env: NodeJS.ProcessEnv = process.env): Array<{ scope: SettingsScope; path: string; baseDir: string }> {
  const root = rootDir(env)
  return [
    { scope: 'user', path: path.join(root, 'settings.json'), baseDir: root },
    { scope: 'project', path: path.join(cwd, '.claude', 'settings.json'), baseDir: cwd },
    { scope: 'local', path: path.join(cwd, '.claude', 'settings.local.json'), baseDir: cwd },
  ]
}

/**
 * Loads and merges permission settings, lowest precedence first: user `<root>/settings.json`,
 * project `<cwd>/.claude/settings.json`, local `<cwd>/.claude/settings.local.json`, then the
 * command line. Rule lists are concatenated in that order, so a later source wins "last matching
 * rule"; defaultMode comes from the last source that sets it; additionalDirectories and hooks are
 * unions. A settings file that is not valid JSON, does not match the shape or holds a rule that
 * does not parse makes loading fail with a CorruptFileError naming it: skipping it could silently
 * drop deny rules. The file is left where it is, for the user to fix.
 */
export async function loadPermissionSettings(options: { cwd: string; env?: NodeJS.ProcessEnv; cli?: CliPermissionOptions }): Promise<LoadedSettings> {
  const env = options.env ?? process.env
  const out: LoadedSettings = {
    rules: [],
    additionalDirectories: [],
    permissionRequestHooks: [],
    sandbox: defaultSandboxConfig(),
    files: [],
    diagnostics: [],
  }
  for (const file of settingsFiles(options.cwd, env)) {
    const text = await readFileIfExists(file.path)
    out.files.push({ scope: file.scope, path: file.path, exists: text !== undefined })
    if (text === undefined) continue
    const settings = parseJsonFile(file.path, text, SettingsFile)
    mergeFile(out, settings, file)
  }
  if (options.cli) mergeCli(out, options.cli, options.cwd)
  return out
}

function mergeFile(out: LoadedSettings, settings: SettingsFile, file: { scope: SettingsScope; path: string; baseDir: string }): void {
  const perms = settings.permissions ?? {}
  try {
    out.rules.push(...listRules(perms, file.scope, file.baseDir))
  } catch (err) {
    if (err instanceof RuleSyntaxError) throw new CorruptFileError(file.path, err.message, { cause: err })
    throw err
  }
  if (perms.defaultMode !== undefined) {
    const mode = PermissionModeName.safeParse(perms.defaultMode)
    if (mode.success) out.defaultMode = mode.data
    else out.diagnostics.push(`${file.path}: unknown permissions.defaultMode ${JSON.stringify(perms.defaultMode)} ignored`)
  }
  for (const dir of perms.additionalDirectories ?? []) out.additionalDirectories.push(resolveDir(dir, file.baseDir))
  if (settings.sandbox) mergeSandboxSettings(out.sandbox, settings.sandbox, file, out.diagnostics)
  for (const [i, matcher] of (settings.hooks?.PermissionRequest ?? []).entries()) {
    for (const hook of matcher.hooks) {
      if (hook.type !== 'command') continue
      if (!hook.command) {
        out.diagnostics.push(`${file.path}: hooks.PermissionRequest[${i}] has a command hook without a command; ignored`)
        continue
      }
      out.permissionRequestHooks.push({ matcher: matcher.matcher, command: hook.command, timeout: hook.timeout, source: file.scope, file: file.path })
    }
  }
}

function mergeCli(out: LoadedSettings, cli: CliPermissionOptions, cwd: string): void {
  try {
    out.rules.push(...listRules(cli, 'cli', cwd))
  } catch (err) {
    if (err instanceof RuleSyntaxError) throw new UsageError(err.message, { hint: 'write rules as Tool or Tool(content), e.g. "Bash(npm test:*)"' })
    throw err
  }
  if (cli.mode !== undefined) out.defaultMode = cli.mode
  for (const dir of cli.additionalDirectories ?? []) out.additionalDirectories.push(resolveDir(dir, cwd))
}

const ORDER: RuleBehavior[] = ['allow', 'ask', 'deny']

function listRules(lists: Partial<Record<RuleBehavior, string[]>>, source: RuleSource, baseDir: string): PermissionRule[] {
  return ORDER.flatMap((behavior) =>
    (lists[behavior] ?? []).map((raw, i) => {
      try {
        return parseRule(raw, behavior, { source, baseDir })
      } catch (err) {
        if (err instanceof RuleSyntaxError) err.message = `${source === 'cli' ? `--${behavior}` : `permissions.${behavior}[${i}]`}: ${err.message}`
        throw err
      }
    }),
  )
}

function resolveDir(dir: string, baseDir: string): string {
  if (dir === '~' || dir.startsWith('~/')) return path.join(os.homedir(), dir.slice(1))
  return path.resolve(baseDir, dir)
}
