/**
 * tmux's keyboard and screen of one pane (a PaneDriver; callers get it wrapped in a PaneIo): a
 * paste is `load-buffer -` on stdin, so a message never reaches an argv, then `paste-buffer -p`,
 * which brackets it when the program asked for bracketed paste; the buffer is deleted after.
 */
import { randomBytes } from 'node:crypto'
import { TmuxClient, resolveSocket } from './tmux-client.js'
import type { PaneAddress, PaneDriver } from './types.js'
import type { Env } from '../home/env.js'

/** The pane this process runs in, from tmux's own variables ($TMUX = socket,pid,session; $TMUX_PANE). */
export function ownTmuxPane(env: Env): PaneAddress | undefined {
  const socketPath = env.TMUX?.split(',')[0]
  const paneId = env.TMUX_PANE
  return socketPath && paneId ? { paneId, socketPath } : undefined
}

/** A pane on its recorded server; without one, the server swarm uses from `env`. */
export function tmuxPaneDriver(pane: PaneAddress, env: Env): PaneDriver {
  const tmux = new TmuxClient({ socket: pane.socketPath ? { path: pane.socketPath } : resolveSocket(env), env })
  const target = pane.paneId
  return {
    async paste(piece) {
      const buffer = `swarm-${randomBytes(4).toString('hex')}`
      const load = await tmux.exec(['load-buffer', '-b', buffer, '-'], piece)
      if (load.code !== 0) throw tmux.failure('load-buffer', load.stderr)
      await tmux.run(['paste-buffer', '-p', '-d', '-b', buffer, '-t', target], 'paste-buffer')
    },
    async keys(keys) {
      await tmux.run(['send-keys', '-t', target, ...keys], 'send-keys')
    },
    async type(text) {
      await tmux.run(['send-keys', '-l', '-t', target, text], 'send-keys')
    },
    screen: () => tmux.run(['capture-pane', '-p', '-J', '-t', target], 'capture-pane'),
  }
}
