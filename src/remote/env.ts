/*
 * What of the spawner's environment travels to a member on another machine: the provider's
 * variables (its model's address and key, proxies), never a path. HOME, PATH, CLAUDE_CONFIG_DIR,
 * SWARM_HOME, TMPDIR, the team marker and the tmux socket are the host's own, resolved there
 * (a local CLAUDE_CONFIG_DIR sent to a host is an agent dead in 250 ms: agent-deck #1858).
 */

const TRAVELS = /^(ANTHROPIC_|OPENAI_|GEMINI_|GOOGLE_API_KEY$|CODEX_|SWARM_SUBAGENT_MODEL)/
const PROXIES = new Set(['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'all_proxy'])
/** Provider variables that name a path on this machine stay here too. */
const PATHS = new Set(['CODEX_HOME', 'GEMINI_CLI_HOME', 'ANTHROPIC_CONFIG_DIR'])

/** The variables of `env` a remote member gets. */
export function remoteMemberEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || PATHS.has(k)) continue
    if (TRAVELS.test(k) || PROXIES.has(k)) out[k] = v
  }
  return out
}
