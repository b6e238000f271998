/**
 * A built-in adapter written as a spec, in the form of a user's adapter file: `adapters/builtin/
 * <kind>.yaml` (its build copy `<kind>.json` wins, scripts/builtin-specs.mjs), read by the same
 * loader (spec-loader.ts). Only its project config dir is read when the registry loads (it is
 * protected from the start); the whole spec the first time the adapter is asked for: its cold
 * validation took 10–20 ms in the bundle (YAML's parse 50–180 ms), which a command or hook that
 * never runs this CLI should not pay.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { CorruptFileError, NotFoundError } from '../errors.js'
import { parseSpecData } from '../util/spec-file.js'
import { specAdapter } from './spec-loader.js'
import type { AgentAdapter, ProjectConfigDir } from './types.js'

export interface SpecBuiltIn {
  readonly kind: string
  readonly projectConfig?: ProjectConfigDir
  /** The adapter, read and validated the first time (a broken file: CorruptFileError, exit 5). */
  adapter(): AgentAdapter
}

export function specBuiltIn(kind: string): SpecBuiltIn {
  const file = builtInSpecFile(kind)
  let bytes: Buffer
  try {
    bytes = fs.readFileSync(file)
  } catch (err) {
    throw new NotFoundError(`the built-in adapter file ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, {
      hint: 'reinstall swarm: its package ships the file',
    })
  }
  const projectConfig = projectConfigOf(file, parseSpecData(file, bytes.toString('utf8')))
  let adapter: AgentAdapter | undefined
  return {
    kind,
    ...(projectConfig && { projectConfig }),
    adapter: () => (adapter ??= specAdapter(file, 'built-in', bytes, { builtIn: kind })),
  }
}

/**
 * Its `projectConfig`, checked for shape only: zod's first parse in a process costs milliseconds,
 * and the whole spec goes through the spec's schema when the adapter is loaded (and at build).
 */
function projectConfigOf(file: string, raw: unknown): ProjectConfigDir | undefined {
  const pc = (raw as { projectConfig?: unknown } | null)?.projectConfig
  if (pc === undefined) return undefined
  const { dir, protect, makeWhenMissing } = (pc ?? {}) as Record<string, unknown>
  const names = Array.isArray(protect) && protect.every((p) => typeof p === 'string') ? (protect as string[]) : undefined
  if (typeof dir !== 'string' || !dir.startsWith('.') || !names || (makeWhenMissing !== undefined && typeof makeWhenMissing !== 'boolean'))
    throw new CorruptFileError(file, 'projectConfig: not { dir: .name, protect: [names], makeWhenMissing?: boolean }')
  return { dir, protect: names, ...(makeWhenMissing !== undefined && { makeWhenMissing }) }
}

/**
 * This module runs from src/adapters (tests), dist/adapters (tsc) or dist/bundle (the CLI), at
 * different depths: the nearest `adapters/builtin` upward holds the files.
 */
function builtInSpecFile(kind: string): string {
  specDir ??= findSpecDir(path.dirname(fileURLToPath(import.meta.url)))
  const compiled = path.join(specDir, `${kind}.json`)
  return fs.existsSync(compiled) ? compiled : path.join(specDir, `${kind}.yaml`)
}
let specDir: string | undefined

function findSpecDir(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'adapters', 'builtin')
    if (fs.existsSync(candidate)) return candidate
    if (path.dirname(dir) === dir) return path.join(from, 'builtin')
  }
}
