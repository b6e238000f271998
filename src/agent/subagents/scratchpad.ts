import path from 'node:path'
import { scratchpadDir } from '../../home/paths.js'
import { ensureDir } from '../../util/fs.js'
import type { PermissionCheck } from '../tool.js'

/**
 * The team's shared scratchpad (`<root>/scratchpad/<team>/`): coordinator workers read and write
 * there without permission prompts; every other call goes to the wrapped check as before.
 */
export async function ensureScratchpad(team: string, env: NodeJS.ProcessEnv): Promise<string> {
  const dir = scratchpadDir(team, env)
  await ensureDir(dir)
  return dir
}

const FILE_TOOLS = new Set(['Read', 'Write', 'Edit', 'Glob', 'Grep'])

export function allowInScratchpad(check: PermissionCheck, dir: string): PermissionCheck {
  return (tool, input, ctx) => {
    if (FILE_TOOLS.has(tool.name)) {
      const paths = tool.paths(input, ctx)
      if (paths.length && paths.every((p) => p === dir || p.startsWith(dir + path.sep))) return { behavior: 'allow' }
    }
    return check(tool, input, ctx)
  }
}
