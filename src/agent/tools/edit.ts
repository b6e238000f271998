import fs from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { defineTool, oneFileTool } from '../tool.js'
import { writableTarget } from './writable.js'

const inputSchema = z.object({
  file_path: z.string().min(1).describe('The path of the file to change (absolute, or relative to the working directory)'),
  old_string: z.string().describe('The exact text to replace (an empty string creates a new file)'),
  new_string: z.string().describe('The text to put in its place (must differ from old_string)'),
  replace_all: z.boolean().optional().describe('Replace every occurrence of old_string (default false)'),
})

export const editTool = defineTool({
  name: 'Edit',
  description: [
    'Replaces exact text in a file.',
    'old_string must occur exactly once, unless replace_all is true; give more surrounding context to make it unique.',
    'Whitespace and indentation must match the file exactly.',
    'With an empty old_string, creates a file that does not exist yet with new_string as its content.',
  ].join('\n'),
  inputSchema,
  ...oneFileTool('edit'),
  async execute(input, ctx) {
    const file = await writableTarget(ctx, input.file_path)
    if (input.old_string === input.new_string) {
      throw new Error('old_string and new_string are the same; there is nothing to change')
    }
    const original = await fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined
      if (err.code === 'EISDIR') throw new Error(`${file} is a directory`)
      throw err
    })
    if (original === undefined) {
      if (input.old_string !== '') throw new Error(`File does not exist: ${file}`)
      await fs.mkdir(path.dirname(file), { recursive: true })
      await fs.writeFile(file, input.new_string, { flag: 'wx' })
      return `File created successfully at: ${file}`
    }
    if (input.old_string === '') {
      throw new Error(`${file} already exists; an empty old_string only creates new files — use Write to replace it`)
    }
    const positions = occurrences(original, input.old_string)
    if (positions.length === 0) {
      throw new Error(`old_string was not found in ${file}; check whitespace and indentation, or Read the file again`)
    }
    if (positions.length > 1 && !input.replace_all) {
      throw new Error(`old_string occurs ${positions.length} times in ${file}; set replace_all to true, or include more context to make it unique`)
    }
    const targets = input.replace_all ? positions : positions.slice(0, 1)
    await fs.writeFile(file, splice(original, targets, input.old_string.length, input.new_string))
    const n = targets.length
    return `The file ${file} has been updated (${n} replacement${n === 1 ? '' : 's'}).`
  },
})

/** Non-overlapping start offsets of `needle` in `text`. */
function occurrences(text: string, needle: string): number[] {
  const out: number[] = []
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) out.push(i)
  return out
}

// Slices instead of String.replace, which would expand `$&`, `$1`… in the new text.
function splice(text: string, starts: number[], length: number, replacement: string): string {
  let out = ''
  let from = 0
  for (const start of starts) {
    out += text.slice(from, start) + replacement
    from = start + length
  }
  return out + text.slice(from)
}
