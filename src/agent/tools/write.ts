import fs from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { defineTool, oneFileTool } from '../tool.js'
import { writableTarget } from './writable.js'

const inputSchema = z.object({
  file_path: z.string().min(1).describe('The path of the file to write (absolute, or relative to the working directory)'),
  content: z.string().describe('The whole new content of the file'),
})

export const writeTool = defineTool({
  name: 'Write',
  description: [
    'Writes a file to the local filesystem, replacing it if it exists.',
    'Missing parent directories are created.',
    'Prefer Edit for changing part of an existing file; read a file before overwriting it.',
  ].join('\n'),
  inputSchema,
  ...oneFileTool('edit'),
  async execute(input, ctx) {
    const file = await writableTarget(ctx, input.file_path)
    const existed = await fs.stat(file).then(
      (s) => {
        if (s.isDirectory()) throw new Error(`${file} is a directory`)
        return true
      },
      () => false,
    )
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.writeFile(file, input.content, { signal: ctx.signal })
    const n = input.content === '' ? 0 : input.content.split('\n').length
    const lines = `${n} line${n === 1 ? '' : 's'}`
    return existed ? `The file ${file} has been overwritten (${lines}).` : `File created successfully at: ${file} (${lines}).`
  },
})
