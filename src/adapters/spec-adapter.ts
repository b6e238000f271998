/**
 * Turns an AdapterSpec (data: a user's file or a built-in's) into an AgentAdapter. prepare() writes
 * the spec's files into the teammate's config dir (0600, atomically) and expands argv and env; hook
 * payloads are read by the field names the spec gives; permission replies are the spec's templates with {{message}}.
 */
import fs from 'node:fs/promises'
import path from 'node:path'
import { UsageError } from '../errors.js'
import { atomicWriteFile, ensureDir } from '../util/fs.js'
import { type AdapterSpec, specProgram } from './adapter-spec.js'
import { contextVars, expandArgv, expandText, expandValue, withSpecVars } from './template.js'
import type { AdapterContext, AdapterSource, AgentAdapter, HookFacts, HookReply, LaunchPlan, QuitMethod } from './types.js'
import type { Verdict } from '../asks/types.js'

export interface SpecOrigin {
  kind: string
  source: AdapterSource
  file?: string
  sha256?: string
}

/** Claude-Code-style replies, the default of a spec that names none. */
const DEFAULT_PERMISSION: NonNullable<AdapterSpec['permission']> = {
  allow: { json: { decision: 'approve' }, exitCode: 0 },
  deny: { stderr: '{{message}}', exitCode: 2 },
}

export function adapterFromSpec(spec: AdapterSpec, origin: SpecOrigin): AgentAdapter {
  const delivery = spec.delivery
  return {
    kind: origin.kind,
    description: spec.description,
    source: origin.source,
    ...(origin.file !== undefined && { file: origin.file }),
    ...(origin.sha256 !== undefined && { sha256: origin.sha256 }),
    binary: specProgram(spec),
    versionArgs: spec.versionArgs,
    providerEnv: spec.providerEnv,
    ...(spec.requiredEnv && { requiredEnv: spec.requiredEnv }),
    ...(spec.modelRoute && { modelRoute: spec.modelRoute }),
    delivery,
    states: { hooks: Object.keys(spec.hookEvents).length > 0, ...spec.states },
    hookEvents: spec.hookEvents,
    quit: spec.quit,
    ...(spec.requires.length && { requiredBinaries: spec.requires }),
    ...(spec.projectConfig && { projectConfig: spec.projectConfig }),
    ...(spec.shellTools.length && { shellTools: spec.shellTools }),
    ...(Object.keys(spec.fileTools).length && { fileTools: spec.fileTools }),
    ...(Object.keys(spec.configEnv).length && { configEnv: spec.configEnv }),
    prepare: (ctx) => prepareFromSpec(spec, ctx),
    readHook: (event, payload) => {
      // Only a submission carries the prompt: another event's copy (Gemini CLI's AfterAgent repeats it) is no submission.
      const { prompt, ...facts } = readHookFields(payload, spec.payload)
      return event === 'prompt-submit' && prompt !== undefined ? { ...facts, prompt } : facts
    },
    answerPermission: (_event, answer) => replyFromSpec((spec.permission ?? DEFAULT_PERMISSION)[answer.behavior], answer),
  }
}

export async function prepareFromSpec(spec: AdapterSpec, ctx: AdapterContext): Promise<LaunchPlan> {
  const vars = withSpecVars(contextVars(ctx), spec.vars)
  await ensureDir(ctx.configDir)
  const readOnly: string[] = []
  for (const f of spec.files) {
    const rel = expandText(f.path, vars)
    const file = path.resolve(ctx.configDir, rel)
    if (!file.startsWith(ctx.configDir + path.sep)) throw new UsageError(`adapter file ${JSON.stringify(f.path)} leaves the teammate's config dir`)
    await ensureDir(path.dirname(file))
    const content = () => ('json' in f ? `${JSON.stringify(expandValue(f.json, vars), null, 2)}\n` : expandText(f.text, vars))
    // Seeded once and then the CLI's: written only when missing, and left writable.
    if (f.writable) {
      await writeIfMissing(file, content())
      continue
    }
    await atomicWriteFile(file, content())
    readOnly.push(file)
  }
  const argv = expandArgv(ctx.resume && spec.resumeCommand ? spec.resumeCommand : spec.command, vars)
  const env = Object.fromEntries(Object.entries(spec.env).map(([k, v]) => [k, expandText(v, vars)]))
  return { argv, env, readOnly }
}

async function writeIfMissing(file: string, text: string): Promise<void> {
  try {
    await fs.writeFile(file, text, { flag: 'wx', mode: 0o600 })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  }
}

/** Facts from a hook payload by top-level field names; anything of the wrong type is left out. */
export function readHookFields(payload: unknown, fields: AdapterSpec['payload']): HookFacts {
  const p = payload !== null && typeof payload === 'object' ? (payload as Record<string, unknown>) : {}
  const text = (k: string): string | undefined => (typeof p[k] === 'string' ? p[k] : undefined)
  const input = p[fields.toolInput]
  return {
    ...(text(fields.sessionId) !== undefined && { sessionId: text(fields.sessionId) }),
    ...(text(fields.toolName) !== undefined && { toolName: text(fields.toolName) }),
    ...(input !== null && typeof input === 'object' && !Array.isArray(input) && { toolInput: input as Record<string, unknown> }),
    ...(text(fields.prompt) !== undefined && { prompt: text(fields.prompt) }),
    ...(text(fields.lastAssistantText) !== undefined && { lastAssistantText: text(fields.lastAssistantText) }),
    ...(text(fields.message) !== undefined && { message: text(fields.message) }),
  }
}

/** The payload field names of Claude-Code-style command hooks (Codex and pi's extension use them). */
export const CLAUDE_STYLE_HOOK_FIELDS: AdapterSpec['payload'] = {
  sessionId: 'session_id',
  toolName: 'tool_name',
  toolInput: 'tool_input',
  prompt: 'prompt',
  lastAssistantText: 'last_assistant_message',
  message: 'message',
}

/** Ctrl-C twice quits a TUI (the first only interrupts a running turn); then SIGTERM. */
export const CTRL_C_TWICE: QuitMethod = { keys: ['C-c', 'C-c'], signal: 'SIGTERM', graceMs: 3_000 }

function replyFromSpec(reply: { json?: unknown; stdout?: string; stderr?: string; exitCode: number }, answer: Verdict): HookReply {
  const message = answer.message ?? (answer.behavior === 'allow' ? 'approved by the team lead' : 'denied by the team lead')
  const vars = (name: string) => (name === 'message' ? message : undefined)
  const stdout =
    reply.json !== undefined ? JSON.stringify(expandValue(reply.json, vars)) : reply.stdout !== undefined ? expandText(reply.stdout, vars) : undefined
  return {
    ...(stdout !== undefined && { stdout: `${stdout}\n` }),
    ...(reply.stderr !== undefined && { stderr: `${expandText(reply.stderr, vars)}\n` }),
    exitCode: reply.exitCode,
  }
}
