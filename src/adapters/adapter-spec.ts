/**
 * The data form of an adapter: what a user writes in `.claude/swarm-agents/<kind>.yaml` and what
 * the built-ins in the package's `adapters/` are written as, validated here at the trust boundary.
 * Strings may hold `{{…}}` placeholders (template.ts). A spec that could never deliver is refused.
 */
import path from 'node:path'
import { z } from 'zod'
import { MODEL_APIS, SWARM_HOOK_EVENTS } from './types.js'

const HookEventName = z.enum(SWARM_HOOK_EVENTS)
const Pattern = z.string().refine((s) => {
  try {
    new RegExp(s)
    return true
  } catch {
    return false
  }
}, 'not a valid regular expression')
const Words = z.union([z.string(), z.array(z.string())])
/** A spec's own variable (`{{var:NAME}}`): cases tried in order, the last one without `when`. */
const VarCases = z
  .array(z.strictObject({ when: z.record(z.string().min(1), Words).optional(), value: Words }))
  .min(1)
  .refine((cases) => cases.at(-1)?.when === undefined, 'the last case has no `when`: it is the value when no other case holds')
const Patterns = z.strictObject({ working: Pattern.optional(), idle: Pattern.optional(), waiting: Pattern.optional() })

/**
 * A file written into the teammate's config dir: `json` (any value, expanded) or `text`. Read-only
 * to the CLI and rewritten at each start; `writable: true` seeds it once — written only when missing,
 * then the CLI's own (a CLI that rewrites its config by rename, as Copilot CLI its config.json, exits
 * 1 on a read-only one).
 */
const Writable = { writable: z.boolean().default(false) }
export const AdapterFileSpec = z.union([
  z.strictObject({ path: z.string().min(1), json: z.unknown(), ...Writable }),
  z.strictObject({ path: z.string().min(1), text: z.string(), ...Writable }),
])
export type AdapterFileSpec = z.infer<typeof AdapterFileSpec>

/** A hook reply: what `swarm hook` prints (`json` or `stdout` text; `stderr` text), expanded with {{message}}, and its exit code. */
const ReplySpec = z.strictObject({
  json: z.unknown().optional(),
  stdout: z.string().optional(),
  stderr: z.string().optional(),
  exitCode: z.number().int().min(0).max(255).default(0),
})

/** A spec's `projectConfig`: the CLI's project config dir and the entries inside it that are protected. */
const ProjectConfigSpec = z.strictObject({
  dir: z.string().regex(/^\.[A-Za-z0-9._-]{1,63}$/, 'a dot-directory name such as .mycli'),
  protect: z.array(z.string().regex(/^[^/\\]{1,255}$/, 'a name inside the directory')).min(1),
  makeWhenMissing: z.boolean().default(true),
})

export const AdapterSpec = z
  .strictObject({
    kind: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,31}$/, 'lowercase letters, digits and -, starting with a letter')
      .optional(),
    description: z.string().default(''),
    /** The program `command` runs (its first word); optional, and when given it must name that program. */
    binary: z.string().min(1).optional(),
    /**
     * The programs a launcher command really runs (`npx -y mycli`, `sh -c 'mycli …'` run `mycli`):
     * each is looked for before the spawn, as the first word is. Required when that is a launcher.
     */
    requires: z.array(z.string().min(1)).default([]),
    versionArgs: z.array(z.string()).default(['--version']),
    /** argv of the interactive CLI; {{prompt}} is the first prompt. */
    command: z.array(z.string()).min(1),
    /** argv used instead by `team resume` (default: command). */
    resumeCommand: z.array(z.string()).min(1).optional(),
    /**
     * Values that depend on the teammate (`{{var:modelArgs}}`): for each name, cases whose `when`
     * holds placeholders and the value (or values) each must have; the first case that holds is used.
     */
    vars: z.record(z.string().regex(/^[A-Za-z][\w-]{0,63}$/, 'letters, digits, _ and -, starting with a letter'), VarCases).default({}),
    env: z.record(z.string(), z.string()).default({}),
    providerEnv: z.array(z.string()).default([]),
    /**
     * How it reaches its model (the API it speaks, the variables naming its base URL and key): its
     * requests then go through swarm's metering proxy and count against its budgets.
     */
    modelRoute: z
      .strictObject({
        api: z.enum(MODEL_APIS),
        baseUrlEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name'),
        defaultBaseUrl: z.url({ protocol: /^https?$/ }),
        keyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name'),
        hideKey: z.boolean().default(true),
      })
      .optional(),
    /** At least one of these must be set at spawn: else a warning, or (refuse) exit 2. */
    requiredEnv: z.strictObject({ anyOf: z.array(z.string().min(1)).min(1), without: z.enum(['warn', 'refuse']).default('warn') }).optional(),
    files: z.array(AdapterFileSpec).default([]),
    delivery: z
      .discriminatedUnion('method', [
        z.strictObject({
          method: z.literal('paste'),
          settleMs: z.number().int().min(0).max(10_000).default(300),
          submitKeys: z
            .array(z.string().regex(/^[A-Za-z0-9-]{1,16}$/))
            .min(1)
            .default(['Enter']),
          /** `hook`: its prompt-submit hook saw the text (the only confirmation a spec may use; see checkDelivery). */
          confirm: z.enum(['hook', 'screen']).default('hook'),
          /** Paste in pieces of at most this many characters and lines (a CLI that folds a big paste). */
          chunk: z.strictObject({ chars: z.number().int().min(1), lines: z.number().int().min(1) }).optional(),
        }),
        z.strictObject({ method: z.literal('inbox') }),
      ])
      .default({ method: 'paste', settleMs: 300, submitKeys: ['Enter'], confirm: 'hook' }),
    /** Its project config dir (`.mycli`) and what inside it is protected (asked in every mode, read-only in every sandbox). */
    projectConfig: ProjectConfigSpec.optional(),
    /**
     * The variables naming its user config dir → where under a throwaway home (`{ MYCLI_HOME: .mycli }`):
     * `swarm doctor`'s probes point each there, never at the user's own.
     */
    configEnv: z
      .record(
        z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name'),
        z.string().refine((p) => !path.isAbsolute(p) && !p.split(/[\\/]/).includes('..'), 'a path inside the probe home'),
      )
      .default({}),
    /** Its tools that run a shell command (with `command` in their input): "always" keeps a rule for them. */
    shellTools: z.array(z.string().min(1)).default([]),
    /** Its file-writing tools, as swarm's Edit or Write: decided by swarm's rules with the path they write. */
    fileTools: z.record(z.string(), z.enum(['Edit', 'Write'])).default({}),
    states: z.strictObject({ titles: Patterns.optional(), screen: Patterns.optional() }).default({}),
    /** The CLI's hook event names → swarm's. */
    hookEvents: z.record(z.string(), HookEventName).default({}),
    /** Where its hook payload keeps each fact (top-level field names); the prompt is read from a prompt-submit event only. */
    payload: z
      .strictObject({
        sessionId: z.string().default('session_id'),
        toolName: z.string().default('tool_name'),
        toolInput: z.string().default('tool_input'),
        prompt: z.string().default('prompt'),
        lastAssistantText: z.string().default('last_assistant_message'),
        message: z.string().default('message'),
      })
      .prefault({}),
    permission: z.strictObject({ allow: ReplySpec, deny: ReplySpec }).optional(),
    quit: z
      .strictObject({
        keys: z.array(z.string().regex(/^[A-Za-z0-9-]{1,16}$/)).optional(),
        text: z.string().optional(),
        signal: z.enum(['SIGINT', 'SIGTERM', 'SIGHUP']).optional(),
        graceMs: z.number().int().min(0).max(60_000).default(3_000),
      })
      .default({ signal: 'SIGTERM', graceMs: 3_000 }),
  })
  .superRefine(checkProgram)
  .superRefine(checkDelivery)
export type AdapterSpec = z.infer<typeof AdapterSpec>

/** First words that start another program by its name: what they run is what the preflight must find. */
const LAUNCHERS = new Set(['env', 'npx', 'pnpx', 'bunx', 'uvx', 'pipx'])

/**
 * A pasted message counts as delivered only once the CLI says it was submitted, and the courier
 * hands over the next only once the CLI says its turn ended: a paste delivery needs both hooks.
 * Without a `stop` hook the teammate never looks idle and nothing after its first prompt arrives;
 * `confirm: screen` took a line-echo CLI's echo for an unsent message and pasted it three times.
 */
function checkDelivery(spec: { delivery: { method: string; confirm?: string }; hookEvents: Record<string, string> }, ctx: z.RefinementCtx): void {
  if (spec.delivery.method !== 'paste') return
  const mapped = new Set(Object.values(spec.hookEvents))
  const issue = (where: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path: where, message })
  if (spec.delivery.confirm === 'screen')
    issue(
      ['delivery', 'confirm'],
      'screen cannot tell a CLI that echoes its input from one that did not submit it (a message was pasted three times); map its prompt-submit hook and use confirm: hook',
    )
  else if (!mapped.has('stop'))
    issue(
      ['hookEvents'],
      'no CLI event is mapped to stop: swarm would never see a turn end and would deliver nothing after the first prompt; map its turn-end hook to stop',
    )
  else if (!mapped.has('prompt-submit'))
    issue(
      ['hookEvents'],
      'no CLI event is mapped to prompt-submit: swarm could never confirm a pasted message was submitted; map its prompt-submit hook',
    )
}

/**
 * What a spec's teammate runs is its command's first word: that is the program the preflight and
 * `swarm doctor` look for, so it must be knowable before the spawn (a name looked up on PATH, or an
 * absolute path; no placeholder), `binary` may only repeat it (or its file name), and
 * `resumeCommand` must run the same program.
 */
function checkProgram(
  spec: { binary?: string | undefined; command: string[]; resumeCommand?: string[] | undefined; requires?: string[] },
  ctx: z.RefinementCtx,
): void {
  const program = spec.command[0]
  const issue = (where: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path: where, message })
  if (program.includes('{{')) {
    issue(['command', 0], 'the first word is the program swarm checks before starting it and cannot hold a placeholder')
  } else if (program.includes('/') && !path.isAbsolute(program)) {
    issue(['command', 0], `${JSON.stringify(program)} is a relative path; give the program's name (looked up on PATH) or its absolute path`)
  } else if (spec.binary !== undefined && spec.binary !== program && spec.binary !== path.basename(program)) {
    issue(
      ['binary'],
      `${JSON.stringify(spec.binary)} is not the program command runs (${JSON.stringify(program)}); drop binary or make it command's first word`,
    )
  } else if (LAUNCHERS.has(path.basename(program)) && !spec.requires?.length) {
    issue(
      ['requires'],
      `command runs ${JSON.stringify(program)}, which starts another program: name the program it really runs in requires (checked before the spawn)`,
    )
  } else if (spec.resumeCommand && spec.resumeCommand[0] !== program) {
    issue(
      ['resumeCommand', 0],
      `${JSON.stringify(spec.resumeCommand[0])} is not the program command runs (${JSON.stringify(program)}); a resume must run the same program`,
    )
  }
}

/** The program a spec's teammate runs, which its preflight and `swarm doctor` look for. */
export function specProgram(spec: Pick<AdapterSpec, 'command'>): string {
  return spec.command[0]
}
