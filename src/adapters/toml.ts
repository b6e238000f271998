/**
 * The little TOML swarm writes (Codex's config.toml): tables of strings, string lists, numbers
 * and booleans. A JSON string is a valid TOML basic string, so values are quoted with JSON.
 */
type TomlScalar = string | number | boolean | string[]
export type TomlTable = Record<string, TomlScalar | undefined>

export function tomlValue(v: TomlScalar): string {
  if (Array.isArray(v)) return `[${v.map((s) => JSON.stringify(s)).join(', ')}]`
  return typeof v === 'string' ? JSON.stringify(v) : String(v)
}

/** `key = value` lines, then one `[table]` section per entry of `tables` (names quoted as needed). */
export function tomlDocument(top: TomlTable, tables: Array<[string[], TomlTable]>): string {
  const lines = Object.entries(top).flatMap(([k, v]) => (v === undefined ? [] : [`${tomlKey(k)} = ${tomlValue(v)}`]))
  for (const [name, table] of tables) {
    lines.push('', `[${name.map(tomlKey).join('.')}]`)
    for (const [k, v] of Object.entries(table)) if (v !== undefined) lines.push(`${tomlKey(k)} = ${tomlValue(v)}`)
  }
  return `${lines.join('\n')}\n`
}

function tomlKey(k: string): string {
  return /^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k)
}
