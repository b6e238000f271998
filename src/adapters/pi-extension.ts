/**
 * The source of swarm's pi extension, written into the teammate's `extensions/` dir: pi has no
 * permission prompt and no command hooks, so this extension calls `swarm hook` itself — on input
 * (prompt-submit, with the text), agent_end (stop, with the last assistant text), session start and
 * shutdown — and asks before the tools in `gated` run, blocking the call when the lead denies it.
 */
export function piExtensionSource(hookArgv: Record<string, string[]>, gated: readonly string[]): string {
  return `// Written by swarm for one teammate; regenerated at each start. Do not edit.
import { spawn } from 'node:child_process'

const HOOKS = ${JSON.stringify(hookArgv)}
const GATED = new Set(${JSON.stringify(gated)})

function hook(event, payload) {
  return new Promise((resolve) => {
    const argv = HOOKS[event]
    if (!argv) return resolve({ code: 0, stdout: '' })
    const child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'ignore'] })
    let stdout = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.on('error', () => resolve({ code: 1, stdout: '' }))
    child.on('close', (code) => resolve({ code: code ?? 1, stdout }))
    child.stdin.end(JSON.stringify(payload))
  })
}

function lastAssistantText(messages) {
  for (let i = (messages ?? []).length - 1; i >= 0; i--) {
    const m = messages[i]
    if (m?.role !== 'assistant') continue
    const content = Array.isArray(m.content) ? m.content : [{ type: 'text', text: String(m.content ?? '') }]
    const text = content.filter((c) => c?.type === 'text').map((c) => c.text).join('\\n').trim()
    if (text) return text
  }
  return undefined
}

export default function (pi) {
  pi.on('session_start', async () => void (await hook('session-start', {})))
  pi.on('input', async (event) => {
    await hook('prompt-submit', { prompt: event.text })
    return { action: 'continue' }
  })
  pi.on('tool_call', async (event) => {
    await hook('pre-tool', { tool_name: event.toolName, tool_input: event.input })
    if (!GATED.has(event.toolName)) return undefined
    const r = await hook('permission-request', { tool_name: event.toolName, tool_input: event.input })
    let answer
    try {
      answer = JSON.parse(r.stdout)
    } catch {
      answer = undefined
    }
    if (answer?.decision === 'allow') return undefined
    return { block: true, reason: answer?.message ?? 'swarm could not ask the team lead' }
  })
  pi.on('agent_end', async (event) => void (await hook('stop', { last_assistant_message: lastAssistantText(event.messages) })))
  pi.on('session_shutdown', async () => void (await hook('session-end', {})))
}
`
}
