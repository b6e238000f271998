import { describe, expect, it } from 'vitest'
import { type DetectInputs, type ProbeResult, detectBackend, isInteractive, resolveBackend } from '../../src/backends/detect.js'
import { parseBackendChoice } from '../../src/backends/registry.js'
import { tmuxInstallHint } from '../../src/backends/tmux-backend.js'
import { BackendUnavailableError, ExitCode, UsageError } from '../../src/errors.js'

const OK: ProbeResult = { ok: true, detail: 'tmux 3.3a' }
const NO: ProbeResult = { ok: false, detail: 'not installed' }

/** Inputs with probes that count how often they are asked. */
function inputs(
  over: { env?: NodeJS.ProcessEnv; isTTY?: boolean; tmux?: ProbeResult; it2?: ProbeResult; platform?: NodeJS.Platform; osRelease?: string } = {},
) {
  const asked = { tmux: 0, it2: 0 }
  const i: DetectInputs = {
    env: over.env ?? {},
    isTTY: over.isTTY ?? true,
    platform: over.platform ?? 'linux',
    osRelease: over.osRelease ?? 'ID=ubuntu\nID_LIKE=debian\n',
    probe: async (b) => {
      const which = b.type === 'tmux' ? 'tmux' : 'it2'
      asked[which]++
      return (which === 'tmux' ? over.tmux : over.it2) ?? (which === 'tmux' ? OK : NO)
    },
  }
  return { i, asked }
}

async function unavailable(p: Promise<unknown>): Promise<BackendUnavailableError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(BackendUnavailableError)
  expect((err as BackendUnavailableError).exitCode).toBe(ExitCode.backendUnavailable)
  return err as BackendUnavailableError
}

describe('backend detection (docs/architecture.md §5 order)', () => {
  it('1. inside tmux → tmux, without probing anything', async () => {
    const { i, asked } = inputs({ env: { TMUX: '/tmp/tmux-1/default,1,0', TERM_PROGRAM: 'iTerm.app' }, isTTY: false })
    expect((await detectBackend(i)).backend).toBe('tmux')
    expect(asked).toEqual({ tmux: 0, it2: 0 })
  })

  it('2. inside iTerm2 with a working it2 → iterm2 (TERM_PROGRAM or ITERM_SESSION_ID)', async () => {
    for (const env of [{ TERM_PROGRAM: 'iTerm.app' }, { ITERM_SESSION_ID: 'w0t0p0:ABC' }]) {
      const { i } = inputs({ env, it2: { ok: true, detail: 'ok' } })
      const d = await detectBackend(i)
      expect(d.backend).toBe('iterm2')
      expect(d.trace.join('\n')).toContain('it2 session list: works')
    }
  })

  it('3. inside iTerm2 without it2 but with tmux → tmux', async () => {
    const { i } = inputs({ env: { TERM_PROGRAM: 'iTerm.app' }, it2: NO, tmux: OK })
    const d = await detectBackend(i)
    expect(d.backend).toBe('tmux')
    expect(d.reason).toMatch(/without a working it2/)
  })

  it('4. inside iTerm2 with neither → error with it2 and Python API guidance', async () => {
    const { i } = inputs({ env: { TERM_PROGRAM: 'iTerm.app' }, it2: NO, tmux: NO, platform: 'darwin' })
    const err = await unavailable(detectBackend(i))
    expect(err.hint).toMatch(/it2/)
    expect(err.hint).toMatch(/Enable Python API/)
    expect(err.hint).toMatch(/brew install tmux/)
  })

  it('5. not interactive (no TTY, or CI) → in-process, without probing', async () => {
    for (const over of [{ isTTY: false }, { isTTY: true, env: { CI: 'true' } }, { isTTY: true, env: { CI: '1' } }]) {
      const { i, asked } = inputs(over)
      expect((await detectBackend(i)).backend).toBe('in-process')
      expect(asked).toEqual({ tmux: 0, it2: 0 })
    }
    expect(isInteractive({ CI: 'false' }, true)).toBe(true)
    expect(isInteractive({ CI: '0' }, true)).toBe(true)
  })

  it('6. interactive with tmux installed → tmux', async () => {
    const { i, asked } = inputs({ tmux: OK })
    expect((await detectBackend(i)).backend).toBe('tmux')
    expect(asked).toEqual({ tmux: 1, it2: 0 })
  })

  it('7. interactive without tmux → error with the install command for this OS', async () => {
    const err = await unavailable(detectBackend(inputs({ tmux: NO }).i))
    expect(err.hint).toMatch(/sudo apt-get install tmux/)
    expect(err.hint).toMatch(/--backend in-process/)
  })
})

describe('--backend', () => {
  it('parses auto and the three backends, and rejects anything else (exit 2)', () => {
    expect(parseBackendChoice(undefined)).toBe('auto')
    expect(parseBackendChoice('in-process')).toBe('in-process')
    expect(() => parseBackendChoice('screen')).toThrow(UsageError)
  })

  it('an explicit backend that works is used even where detection would pick another', async () => {
    expect((await resolveBackend('tmux', inputs({ isTTY: false }).i)).backend).toBe('tmux')
    expect((await resolveBackend('iterm2', inputs({ it2: { ok: true, detail: 'ok' } }).i)).backend).toBe('iterm2')
    expect((await resolveBackend('in-process', inputs({ env: { TMUX: 'x' } }).i)).backend).toBe('in-process')
    expect((await resolveBackend('auto', inputs({ env: { TMUX: 'x' } }).i)).backend).toBe('tmux')
  })

  it('an explicit backend that cannot work is an error, never a fallback', async () => {
    const tmux = await unavailable(resolveBackend('tmux', inputs({ tmux: NO, it2: { ok: true, detail: 'ok' } }).i))
    expect(tmux.message).toMatch(/--backend tmux/)
    const it2 = await unavailable(resolveBackend('iterm2', inputs({ env: { TERM_PROGRAM: 'iTerm.app' }, it2: NO, tmux: OK }).i))
    expect(it2.hint).toMatch(/pipx install it2/)
  })
})

describe('tmux install guidance', () => {
  it.each([
    ['linux', 'ID=ubuntu\nID_LIKE=debian', 'sudo apt-get install tmux'],
    ['linux', 'ID=debian', 'sudo apt-get install tmux'],
    ['linux', 'ID="fedora"', 'sudo dnf install tmux'],
    ['linux', 'ID="rocky"\nID_LIKE="rhel centos fedora"', 'sudo dnf install tmux'],
    ['linux', 'ID=arch', 'sudo pacman -S tmux'],
    ['linux', 'ID=manjaro\nID_LIKE=arch', 'sudo pacman -S tmux'],
    ['linux', 'ID=alpine', 'sudo apk add tmux'],
    ['darwin', '', 'brew install tmux'],
  ] as const)('%s %j → %s', (platform, osRelease, expected) => {
    expect(tmuxInstallHint(platform, osRelease)).toContain(expected)
  })

  it('lists every package manager when the distribution is unknown', () => {
    const hint = tmuxInstallHint('linux', '')
    for (const cmd of ['apt-get', 'dnf', 'pacman', 'brew']) expect(hint).toContain(cmd)
  })
})
