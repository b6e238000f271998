import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { NotFoundError } from '../errors.js'

/**
 * The page's script and styles, built by scripts/bundle.mjs (esbuild, from src/web/page/ with
 * xterm.js from npm) into `dist/web-page/` of this package: served from here, nothing from a CDN.
 * Found from this module's own place, the tsc build (dist/web/) or the CLI bundle (dist/bundle/).
 */

export const ASSET_TYPES: Record<string, string> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
}

/** `<package>/dist/web-page`: the package root is the nearest directory above with a package.json. */
async function assetsDir(): Promise<string> {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (await fs.stat(path.join(dir, 'package.json')).catch(() => undefined)) return path.join(dir, 'dist', 'web-page')
    const up = path.dirname(dir)
    if (up === dir) throw new NotFoundError('the swarm web page is not built', { hint: 'run npm run build' })
    dir = up
  }
}

/** The built assets, read once at start: a missing build fails `swarm web` at once, not a page later. */
export async function loadAssets(): Promise<Map<string, Buffer>> {
  const dir = await assetsDir()
  const assets = new Map<string, Buffer>()
  for (const name of Object.keys(ASSET_TYPES)) {
    const data = await fs.readFile(path.join(dir, name)).catch(() => undefined)
    if (!data) throw new NotFoundError(`the swarm web page is not built (${path.join(dir, name)} is missing)`, { hint: 'run npm run build' })
    assets.set(name, data)
  }
  return assets
}
