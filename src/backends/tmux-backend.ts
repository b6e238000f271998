import { TmuxExecutor, type TmuxExecutorOptions } from './tmux.js'
import type { PaneBackend } from './backend.js'
import { teamStoreDirectory } from './directory.js'
import { ownTmuxPane, tmuxPaneDriver } from './tmux-pane-driver.js'
import { closeTmuxServer, inspectTmuxServer, tmuxAttachHint } from './tmux-server.js'
import { closeTmuxViews, openTmuxViews } from './tmux-views.js'

/** tmux: inside it, a window of the user's session; outside, a session on swarm's own server. */
export const tmuxBackend: PaneBackend = {
  type: 'tmux',
  kind: 'pane',
  label: 'tmux',
  probe: ['tmux', '-V'],
  standalone: true,
  inside: (env) => Boolean(env.TMUX),
  probeWhenInside: false,
  installHint: (platform, osRelease) => tmuxInstallHint(platform, osRelease),
  create: (opts) => new TmuxExecutor(opts as TmuxExecutorOptions),
  ownPane: ownTmuxPane,
  paneDriver: tmuxPaneDriver,
  attachHint: tmuxAttachHint,
  inspect: inspectTmuxServer,
  closeServer: closeTmuxServer,
  openViews: openTmuxViews,
  closeViews: closeTmuxViews,
  relayout: (team, socketPath, env) =>
    (socketPath ? new TmuxExecutor({ socket: { path: socketPath } }) : new TmuxExecutor({ env, directory: teamStoreDirectory(env) })).relayout(team),
}

/** The install command for tmux on this OS. */
export function tmuxInstallHint(platform: NodeJS.Platform, osRelease = ''): string {
  if (platform === 'darwin') return '"brew install tmux" (or "port install tmux")'
  if (platform === 'win32') return 'tmux needs WSL; inside WSL "sudo apt-get install tmux"'
  const ids = osReleaseIds(osRelease)
  const has = (...names: string[]) => names.some((n) => ids.includes(n))
  if (has('debian', 'ubuntu')) return '"sudo apt-get install tmux"'
  if (has('fedora', 'rhel', 'centos')) return '"sudo dnf install tmux"'
  if (has('arch')) return '"sudo pacman -S tmux"'
  if (has('alpine')) return '"sudo apk add tmux"'
  if (has('suse', 'opensuse')) return '"sudo zypper install tmux"'
  if (platform === 'freebsd') return '"sudo pkg install tmux"'
  return 'your package manager: "sudo apt-get install tmux" (Debian/Ubuntu), "sudo dnf install tmux" (Fedora/RHEL), "sudo pacman -S tmux" (Arch), "brew install tmux" (macOS)'
}

function osReleaseIds(text: string): string[] {
  const ids: string[] = []
  for (const line of text.split('\n')) {
    const m = /^(ID|ID_LIKE)=(.*)$/.exec(line.trim())
    if (m) ids.push(...m[2].replace(/["']/g, '').toLowerCase().split(/\s+/))
  }
  return ids
}
