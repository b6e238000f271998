import { execFile, execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Browser, Page, Viewport } from 'puppeteer-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listPending, readResolved } from '../../src/asks/store.js'
import type { LoopbackServer } from '../../src/loopback-model/loopback-server.js'
import { updateTeam } from '../../src/teams/team-store.js'
import { shortRequestId } from '../../src/home/request-id.js'
import { agentDir, inboxPath } from '../../src/home/paths.js'
import { readInbox } from '../../src/mailbox/inbox.js'
import { BIN, requireBuilt } from '../support/repo.js'
import { makeTeam, track, useAgentTeam, type Fixture } from '../support/agent-team.js'
import { hasTmux, reapTmux } from '../support/tmux.js'
import { waitFor } from '../support/wait.js'
import { nudge, startInProcess, toolResult } from '../permissions/requests/bubbling-helpers.js'
import { ARTEFACTS, hasChromium, launchBrowser, startWeb, type RunningWeb } from './helpers.js'

/**
 * `swarm web` in a real headless Chromium: team crew has alice, swarm's own agent (in this
 * process, on the loopback model), and gem, a Gemini CLI member whose permission hook is the real
 * `swarm hook permission-request` process (the agent-CLI side of the one ask flow, as the default
 * suite runs it: no Gemini CLI binary needed). Requests show on the page, are answered there
 * through the broker, and race the lead's own `swarm perms`.
 */
const TEAM = 'crew'
let loopback: LoopbackServer
let fx: Fixture
let browser: Browser
let profileDir: string
useAgentTeam({
  team: (l) => makeTeam(TEAM, l, [{ name: 'alice' }, { name: 'gem', agent: 'gemini' }], 'swarm-web-'),
  onReady: (t) => ({ loopback, fx } = t),
})
beforeAll(async () => {
  requireBuilt('dist/web-page/app.js')
  profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-web-chromium-'))
  browser = await launchBrowser(profileDir, profileDir)
})
afterAll(async () => {
  await browser?.close()
  fs.rmSync(profileDir, { recursive: true, force: true })
})

interface Ran {
  code: number | null
  stdout: string
  stderr: string
}
function run(args: string[], stdin = ''): Promise<Ran> {
  const child = spawn(process.execPath, [BIN, ...args], { env: fx.env, cwd: fx.cwd, stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  child.stdin.end(stdin)
  const done = new Promise<Ran>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
  track(
    `swarm ${args.slice(0, 2).join(' ')}`,
    async () => {
      if (child.exitCode === null) child.kill('SIGKILL')
      return done
    },
    () => stdout + stderr,
  )
  return done
}
/** gem's CLI asks to run `command` in its shell (Gemini CLI's BeforeTool hook). */
const gemShell = (command: string) =>
  run(
    ['hook', 'permission-request', '--team', TEAM, '--name', 'gem', '--agent', 'gemini'],
    JSON.stringify({ tool_name: 'run_shell_command', tool_input: { command } }),
  )
const pendingOf = async (agent: string) => (await listPending(TEAM, { env: fx.env })).requests.find((r) => r.agent === agent)

async function openPage(web: RunningWeb, viewport: Viewport = { width: 1280, height: 800 }): Promise<Page> {
  const context = await browser.createBrowserContext()
  track(
    'browser context',
    () => context.close(),
    () => '',
  )
  const page = await context.newPage()
  await page.setViewport(viewport)
  await page.goto(web.url)
  await page.waitForFunction(() => document.getElementById('conn')?.textContent === 'live')
  return page
}

/** alice is asked by her model to run one Bash command; the model then says whether it was refused. */
function aliceAsks(command: string, id: string, description = 'a command'): Promise<void> {
  loopback.setScenario({
    agents: {
      alice: [
        { content: [{ type: 'tool_use', id, name: 'Bash', input: { command, description } }] },
        { oneOf: [{ when: { toolResultIsError: true }, text: 'It was refused.' }, { text: 'It ran.' }] },
      ],
    },
  })
  return nudge(fx)
}

describe.skipIf(!hasChromium)('swarm web in a real browser', () => {
  it("alice's Bash request is on the page within 1 s; approve there runs it once, recorded as from the web", async () => {
    const web = await startWeb(fx)
    const page = await openPage(web)
    const agent = await startInProcess(fx)
    await aliceAsks('echo ran >> once.txt', 'toolu_a')
    const pending = await waitFor('alice pending', () => pendingOf('alice'), 15_000, { output: agent.pane })
    await page.waitForSelector(`[data-request="${pending.id}"]`, { timeout: 5_000 })
    expect(Date.now() - pending.createdAt).toBeLessThanOrEqual(1_000)
    // The whole input, and the short id.
    const card = await page.$eval(`[data-request="${pending.id}"]`, (e) => e.textContent ?? '')
    expect(card).toContain('echo ran >> once.txt')
    expect(card).toContain(`[${shortRequestId(pending.id)}]`)
    await page.click(`[data-request="${pending.id}"] [data-action="approve"]`)
    await waitFor('once.txt', () => fs.existsSync(path.join(fx.cwd, 'once.txt')), 15_000, { output: agent.pane })
    await waitFor('alice told the model', () => toolResult(loopback, 'toolu_a')?.isError === false)
    expect(fs.readFileSync(path.join(fx.cwd, 'once.txt'), 'utf8')).toBe('ran\n')
    expect((await readResolved(TEAM, pending.id, fx.env))?.resolvedBy).toMatch(/ from the web$/)
    await page.waitForSelector(`[data-request="${pending.id}"]`, { hidden: true })
    await web.printed(`approve alice's Bash request ${pending.id} — by`)
  })

  it("deny with feedback on the page reaches alice's model", async () => {
    const web = await startWeb(fx)
    const page = await openPage(web)
    const agent = await startInProcess(fx)
    await aliceAsks('rm -rf build', 'toolu_d')
    const pending = await waitFor('alice pending', () => pendingOf('alice'), 15_000, { output: agent.pane })
    await page.waitForSelector(`[data-request="${pending.id}"]`)
    await page.type(`textarea[data-feedback="${pending.id}"]`, 'not the build dir, use make clean')
    await page.click(`[data-request="${pending.id}"] [data-action="deny"]`)
    const result = await waitFor('the refusal told to the model', () => toolResult(loopback, 'toolu_d'), 15_000, { output: agent.pane })
    expect(result.isError).toBe(true)
    expect(result.content).toContain('not the build dir, use make clean')
  })

  it("gem's request answered on the page and by the lead's swarm perms at once gets exactly one answer", async () => {
    const web = await startWeb(fx)
    const page = await openPage(web)
    const hook = gemShell('touch raced.txt')
    const pending = await waitFor('gem pending', () => pendingOf('gem'))
    await page.waitForSelector(`[data-request="${pending.id}"] [data-action="approve"]`)
    const [, perms] = await Promise.all([
      page.click(`[data-request="${pending.id}"] [data-action="approve"]`),
      run(['perms', 'deny', TEAM, pending.id]),
    ])
    const resolved = await waitFor('resolved', () => readResolved(TEAM, pending.id, fx.env))
    const reply = JSON.parse((await hook).stdout) as { decision: string }
    // One record, and the hook got what it says; the loser was told who answered.
    expect(reply.decision).toBe(resolved.decision === 'approve' ? 'allow' : 'deny')
    const pageText = await answeredNote(page, pending.id)
    if (resolved.resolvedBy.endsWith('from the web')) {
      expect(perms.code).toBe(4)
      expect(perms.stderr).toMatch(/already answered: approved by .* from the web/)
    } else {
      expect(perms.code).toBe(0)
      expect(pageText).toMatch(/already answered: denied by .*via swarm perms/)
    }
  })

  it("gem's request answered at the leader console (in tmux) and on the page at once gets exactly one answer; the console names the web", async () => {
    if (!hasTmux) return
    track(
      'tmux server',
      () => reapTmux(fx.env),
      () => '',
    )
    // The real `swarm leader` in a pane of the isolated tmux server, in the fixture's home.
    const script = path.join(fx.base, 'leader.sh')
    const exports = Object.entries(fx.env)
      .filter(([k, v]) => v !== undefined && /^[A-Z_][A-Z0-9_]*$/.test(k))
      .map(([k, v]) => `export ${k}='${String(v).replace(/'/g, "'\\''")}'`)
    fs.writeFileSync(script, [...exports, `cd '${fx.cwd}'`, `exec '${process.execPath}' '${BIN}' leader ${TEAM}`].join('\n') + '\n')
    const tmux = (...args: string[]) => execFileSync('tmux', ['-L', 'swarm', ...args], { env: fx.env, encoding: 'utf8' }).trim()
    const pane = tmux('new-session', '-d', '-s', 'leader', '-x', '220', '-y', '50', '-P', '-F', '#{pane_id}', `sh ${script}; sleep 60`)
    const screen = () => tmux('capture-pane', '-p', '-J', '-S', '-', '-t', pane)
    await waitFor('the leader console', () => screen().includes(`swarm leader — team ${TEAM}`), 15_000, { output: screen })
    const web = await startWeb(fx)
    const page = await openPage(web)
    const hook = gemShell('touch console-raced.txt')
    const pending = await waitFor('gem pending', () => pendingOf('gem'))
    const short = shortRequestId(pending.id)
    await waitFor('the prompt at the console', () => screen().includes(`? [${short}] gem wants to use run_shell_command`), 10_000, { output: screen })
    await page.waitForSelector(`[data-request="${pending.id}"] [data-action="approve"]`)
    // At the same moment: the deny key at the console, the approve click on the page.
    const keys = new Promise<void>((resolve, reject) =>
      execFile('tmux', ['-L', 'swarm', 'send-keys', '-t', pane, 'n raced at the console', 'Enter'], { env: fx.env }, (err) =>
        err ? reject(err) : resolve(),
      ),
    )
    await Promise.all([keys, page.click(`[data-request="${pending.id}"] [data-action="approve"]`)])
    const resolved = await waitFor('resolved', () => readResolved(TEAM, pending.id, fx.env))
    const reply = JSON.parse((await hook).stdout) as { decision: string }
    expect(reply.decision).toBe(resolved.decision === 'approve' ? 'allow' : 'deny')
    const pageText = await answeredNote(page, pending.id)
    if (resolved.resolvedBy.endsWith('from the web')) {
      expect(resolved.decision).toBe('approve')
      // The console lost: it says who answered and from where, whichever way it learnt it.
      await waitFor(
        'the console naming the web',
        () => new RegExp(`${short}.* was (already answered: )?approved by \\S+ from the web`).test(screen()),
        10_000,
        {
          output: screen,
        },
      )
      expect(screen()).not.toContain(`denied ${short}:`)
    } else {
      expect(resolved).toMatchObject({ decision: 'deny', resolvedBy: 'team-lead console', feedback: 'raced at the console' })
      expect(pageText).toMatch(/already answered: denied \("raced at the console"\) by team-lead console/)
    }
    expect(fs.existsSync(path.join(fx.cwd, 'console-raced.txt'))).toBe(false) // the hook answers; gem's CLI would run it
  })

  it('a tmux pane shows what its teammate printed; a transcript shows escapes as text; markup stays text', async () => {
    if (!hasTmux) return
    track(
      'tmux server',
      () => reapTmux(fx.env),
      () => '',
    )
    // gem's pane prints a line, waits for the viewer to be open, then prints colour, a title escape and a clear.
    const gemDir = agentDir(TEAM, 'gem', fx.env)
    fs.mkdirSync(gemDir, { recursive: true })
    const go = path.join(fx.base, 'go')
    const script = [
      `printf 'hello from gem <b>bold</b> <img src=x onerror=window.__pwned=1>\\n'`,
      `while [ ! -e ${go} ]; do sleep 0.05; done`,
      `printf '\\033[31mred alert\\033[0m then \\033]0;pwned\\007 title \\033[2J cleared <script>window.__pwned=3</script>\\n'`,
      'sleep 120',
    ].join('; ')
    const tmux = (...args: string[]) => execFileSync('tmux', ['-L', 'swarm', ...args], { env: fx.env, encoding: 'utf8' }).trim()
    const paneId = tmux('new-session', '-d', '-s', 'webtest', '-x', '100', '-y', '20', '-P', '-F', '#{pane_id}', `sleep 0.3; ${script}`)
    // As tmux-spawn does for a teammate: the pane's output appended to its pane.log.
    tmux('pipe-pane', '-o', '-t', paneId, `exec cat >> ${path.join(gemDir, 'pane.log')}`)
    await updateTeam(
      TEAM,
      (t) => {
        const gem = t.members.find((m) => m.name === 'gem')!
        Object.assign(gem, { tmuxPaneId: paneId, backendType: 'tmux' })
      },
      fx.env,
    )
    // alice's model writes markup and escapes; her transcript carries them.
    const agent = await startInProcess(fx)
    loopback.setScenario({ agents: { alice: [{ text: 'clear \x1b[2J title \x1b]0;pwned\x07 <script>window.__pwned=1</script> done' }] } })
    await nudge(fx)
    await waitFor('alice answered', () => agent.pane().includes('done'), 15_000, { output: agent.pane })
    const web = await startWeb(fx)
    const page = await openPage(web)

    await waitFor('gem printed', () => tmux('capture-pane', '-p', '-t', paneId).includes('hello from gem'))
    await page.click(`[data-view="${TEAM}/gem"]`)
    await page.waitForFunction(() => (document.getElementById('term')?.dataset.text ?? '').includes('hello from gem'))
    await page.waitForFunction(() => (document.querySelector('#term .xterm-rows')?.textContent ?? '').includes('hello from gem <b>bold</b>'))
    // Printed while the viewer is open: streamed from pane.log, its colour kept, every other escape shown as text.
    fs.writeFileSync(go, '')
    const streamed = await page.waitForFunction(() => {
      const t = document.getElementById('term')?.dataset.text ?? ''
      return t.includes('cleared') ? t : undefined
    })
    const paneText = String(await streamed.jsonValue())
    expect(paneText).toContain('\x1b[31mred alert\x1b[0m then ␛]0;pwned␇ title ␛[2J cleared <script>')
    const sgr = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g')
    expect(paneText.replace(sgr, '')).not.toContain('\x1b')
    await page.waitForFunction(() => (document.querySelector('#term .xterm-rows')?.textContent ?? '').includes('title ␛[2J cleared'))
    const red = await page.$$eval('#term .xterm-rows span', (spans) =>
      spans.filter((s) => s.textContent?.includes('red alert')).map((s) => s.className),
    )
    expect(red.join(' ')).toMatch(/xterm-fg-1\b/)
    expect(await page.evaluate(() => document.title)).toBe('swarm')
    await page.click('#viewer-close')

    await page.click(`[data-view="${TEAM}/alice"]`)
    const shown = await page.waitForFunction(() => {
      const t = document.getElementById('term')?.dataset.text ?? ''
      return t.includes('done') ? t : undefined
    })
    const text = String(await shown.jsonValue())
    expect(text).toContain('clear ␛[2J title ␛]0;pwned␇ <script>')
    expect(text).not.toContain('\x1b')
    await page.waitForFunction(() => (document.querySelector('#term .xterm-rows')?.textContent ?? '').includes('␛[2J'))
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined()
    expect(await page.$$('#term img, #term script, #term b')).toHaveLength(0)
  })

  it('a message sent from the viewer reaches alice as team-lead; the notify setting runs for a new request', async () => {
    const got = path.join(fx.base, 'notified.txt')
    fs.writeFileSync(
      path.join(fx.home, 'settings.json'),
      JSON.stringify({
        notify: { command: [process.execPath, '-e', `require('fs').appendFileSync(${JSON.stringify(got)}, process.env.SWARM_REQUEST_TEXT + '\\n')`] },
      }),
    )
    const web = await startWeb(fx)
    const page = await openPage(web)
    await page.click(`[data-view="${TEAM}/alice"]`)
    await page.type(`textarea[data-message="${TEAM}/alice"]`, 'please run the tests')
    await page.click('[data-action="send"]')
    const inbox = await waitFor("the message in alice's inbox", async () =>
      (await readInbox(inboxPath(TEAM, 'alice', fx.env))).find((m) => m.text === 'please run the tests'),
    )
    expect(inbox.from).toBe('team-lead')
    const hook = gemShell('make deploy')
    const pending = await waitFor('gem pending', () => pendingOf('gem'))
    const line = await waitFor('notified', () => fs.existsSync(got) && fs.readFileSync(got, 'utf8'))
    expect(line).toBe(`[${shortRequestId(pending.id)}] gem asks to use run_shell_command: make deploy\n`)
    await run(['perms', 'deny', TEAM, pending.id])
    await hook
  })

  it('desktop and phone screenshots: answer buttons at least 44 px tall and 8 px apart, "always" confirmed first; markup in a request is text', async () => {
    const web = await startWeb(fx)
    const hook = gemShell(
      'echo "<script>window.__pwned=1</script><img src=x onerror=window.__pwned=2>" && a-long-command --with many --flags and-arguments-that-wrap '.repeat(
        3,
      ),
    )
    const pending = await waitFor('gem pending', () => pendingOf('gem'))
    fs.mkdirSync(ARTEFACTS, { recursive: true })
    for (const [name, viewport] of [
      ['desktop-1280x800', { width: 1280, height: 800 }],
      ['phone-390x844', { width: 390, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 2 }],
    ] as const) {
      const page = await openPage(web, viewport)
      await page.waitForSelector(`[data-request="${pending.id}"]`)
      const rects = await page.$$eval(`[data-request="${pending.id}"] .answers button`, (bs) =>
        bs.map((b) => {
          const r = b.getBoundingClientRect()
          return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height }
        }),
      )
      expect(rects).toHaveLength(3)
      for (const r of rects) expect(r.height).toBeGreaterThanOrEqual(44)
      // Well apart: any two buttons are at least 8 px apart, across or down (a thumb does not hit two).
      for (const [i, a] of rects.entries())
        for (const b of rects.slice(i + 1)) {
          const across = Math.max(b.left - a.right, a.left - b.right)
          const down = Math.max(b.top - a.bottom, a.top - b.bottom)
          expect(Math.max(across, down), `${name}: buttons ${JSON.stringify(a)} and ${JSON.stringify(b)}`).toBeGreaterThanOrEqual(8)
        }
      // The whole command is there, wrapped, not cut, and no wider than the screen.
      const input = await page.$eval(`[data-request="${pending.id}"] pre.input`, (e) => ({
        text: e.textContent ?? '',
        wide: e.scrollWidth > e.clientWidth,
      }))
      expect(input.text).toContain('and-arguments-that-wrap '.repeat(1).trim())
      expect(input.text.split('a-long-command').length).toBe(4)
      expect(input.wide).toBe(false)
      expect(await page.$$(`[data-request="${pending.id}"] img, [data-request="${pending.id}"] script`)).toHaveLength(0)
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined()
      await page.screenshot({ path: path.join(ARTEFACTS, `${name}.png`), fullPage: true })
      // "Always" asks first, with the rule it would add and big, separate buttons: cancelling it answers nothing.
      await page.click(`[data-request="${pending.id}"] [data-action="always"]`)
      await page.waitForSelector('#confirm[open]')
      expect(await page.$eval('#confirm-text', (e) => e.textContent ?? '')).toContain(`[${shortRequestId(pending.id)}] always allow gem`)
      const confirm = await page.$$eval('#confirm button', (bs) => bs.map((b) => b.getBoundingClientRect().toJSON() as DOMRect))
      for (const r of confirm) expect(r.height).toBeGreaterThanOrEqual(44)
      expect(Math.max(confirm[1].left - confirm[0].right, confirm[1].top - confirm[0].bottom)).toBeGreaterThanOrEqual(8)
      await page.click('#confirm-no')
      await page.waitForSelector('#confirm[open]', { hidden: true })
      expect(await pendingOf('gem')).toBeDefined()
      expect(await readResolved(TEAM, pending.id, fx.env)).toBeUndefined()
      if (name.startsWith('phone')) {
        // On the phone, confirmed: approved always, through the broker, from the web.
        await page.click(`[data-request="${pending.id}"] [data-action="always"]`)
        await page.waitForSelector('#confirm[open]')
        await page.tap('#confirm-yes')
        const resolved = await waitFor('approved always', () => readResolved(TEAM, pending.id, fx.env))
        expect(resolved).toMatchObject({ decision: 'approve', always: true })
        expect(resolved.resolvedBy).toMatch(/ from the web$/)
        const reply = JSON.parse((await hook).stdout) as { decision: string }
        expect(reply.decision).toBe('allow')
      }
    }
  })
})

/** What the page says of request `id` once its answer is through (not "sending…"). */
async function answeredNote(page: Page, id: string): Promise<string> {
  const note = await page.waitForFunction(
    (rid) => {
      const t = document.querySelector(`[data-answered="${rid}"]`)?.textContent ?? ''
      return t && !t.endsWith('sending…') ? t : undefined
    },
    {},
    id,
  )
  return String(await note.jsonValue())
}
