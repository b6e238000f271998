import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { readPending, writePending } from '../../src/asks/store.js'
import { BIN, requireBuilt } from '../support/repo.js'
import { makeTeam, useAgentTeam, type Fixture } from '../support/agent-team.js'
import { waitFor } from '../support/wait.js'
import { login, rawRequest, startWeb } from './helpers.js'

/**
 * What a hostile client gets from `swarm web`, over plain HTTP with whatever headers it likes:
 * nothing without the token, nothing state-changing from another origin or through another host
 * name, no acting routes when read-only, and no remote bind without a passphrase.
 */
const TEAM = 'crew'
let fx: Fixture
useAgentTeam({ team: (l) => makeTeam(TEAM, l, [{ name: 'alice' }], 'swarm-web-hostile-'), onReady: (t) => ({ fx } = t) })
beforeAll(() => requireBuilt('dist/web-page/app.js'))

/** A pending Bash request of alice's, as her ask flow writes it. */
async function aPending(): Promise<string> {
  const id = `perm-${Date.now().toString(36)}-abc123`
  await writePending(
    TEAM,
    {
      id,
      kind: 'permission',
      agent: 'alice',
      agentId: `alice@${TEAM}`,
      toolName: 'Bash',
      toolUseId: 'toolu_1',
      input: { command: 'rm -rf /' },
      description: 'x',
      createdAt: Date.now(),
    },
    fx.env,
  )
  return id
}

describe('swarm web against hostile clients', () => {
  it('no token: 401 and nothing else, on every path', async () => {
    const web = await startWeb(fx)
    const host = new URL(web.url).host
    for (const p of ['/', '/api/events', '/assets/app.js', '/api/inbox?team=crew&name=alice', '/api/view?team=crew&name=alice', '/?token=wrong']) {
      const r = await rawRequest(`${web.origin}${p}`, { headers: { host } })
      expect([p, r.status, r.body]).toEqual([p, 401, 'unauthorized'])
      expect(r.headers['set-cookie']).toBeUndefined()
    }
    const answered = await rawRequest(`${web.origin}/api/answer`, {
      method: 'POST',
      headers: { host, origin: web.origin, 'content-type': 'application/json' },
      body: '{}',
    })
    expect(answered.status).toBe(401)
  })

  it('a cross-origin POST with the session cookie is refused and answers nothing; another Host name is refused', async () => {
    const web = await startWeb(fx)
    const cookie = await login(web)
    const id = await aPending()
    const host = new URL(web.url).host
    const body = JSON.stringify({ team: TEAM, id, decision: 'approve' })
    const hostile: Array<Record<string, string>> = [
      { origin: 'http://evil.example' },
      { origin: 'null' },
      {}, // no Origin at all
      { origin: web.origin, 'sec-fetch-site': 'cross-site' },
    ]
    for (const headers of hostile) {
      const r = await rawRequest(`${web.origin}/api/answer`, {
        method: 'POST',
        headers: { host, cookie, 'content-type': 'application/json', ...headers },
        body,
      })
      expect(r.status).toBe(403)
    }
    expect(await readPending(TEAM, id, fx.env)).toBeDefined()
    // DNS rebinding: a name that resolves here is not this server's name.
    const rebound = await rawRequest(`${web.origin}/`, { headers: { host: `evil.example:${new URL(web.url).port}`, cookie } })
    expect(rebound.status).toBe(421)
    // The same request from the page's own origin is answered (the checks above refused, not a broken route).
    const ok = await rawRequest(`${web.origin}/api/answer`, {
      method: 'POST',
      headers: { host, cookie, origin: web.origin, 'content-type': 'application/json' },
      body,
    })
    expect(ok.status).toBe(200)
    expect(JSON.parse(ok.body)).toMatchObject({ decision: 'approve', by: expect.stringMatching(/ from the web$/) })
  })

  it('--read-only serves no answer or send route', async () => {
    const web = await startWeb(fx, ['--read-only'])
    const cookie = await login(web)
    const id = await aPending()
    const headers = { host: new URL(web.url).host, cookie, origin: web.origin, 'content-type': 'application/json' }
    const answer = await rawRequest(`${web.origin}/api/answer`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ team: TEAM, id, decision: 'approve' }),
    })
    const send = await rawRequest(`${web.origin}/api/send`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ team: TEAM, to: 'alice', text: 'hi' }),
    })
    expect([answer.status, send.status]).toEqual([404, 404])
    expect(await readPending(TEAM, id, fx.env)).toBeDefined()
    const page = await rawRequest(`${web.origin}/`, { headers: { host: headers.host, cookie } })
    expect(page.body).toContain('data-read-only="1"')
    // Watching still works.
    await waitFor('the request in the event stream', async () =>
      (await rawRequest(`${web.origin}/api/events`, { headers: { host: headers.host, cookie } })).body.includes(id),
    )
  })

  it('a non-loopback bind without a passphrase is refused at start, before listening', async () => {
    const child = spawn(process.execPath, [BIN, 'web', '--host', '0.0.0.0'], { env: fx.env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
    expect(code).toBe(2)
    expect(out).toMatch(/reachable from other machines: it needs a passphrase/)
    expect(out).not.toContain('http://')
  })

  it('with a passphrase: the token alone gets a login form; 5 wrong passphrases lock out that address, not another; 20 from many lock out all', async () => {
    const file = path.join(fx.base, 'passphrase')
    fs.writeFileSync(file, 'correct horse battery\n', { mode: 0o600 })
    const web = await startWeb(fx, ['--host', '0.0.0.0', '--passphrase-file', file])
    const port = new URL(web.url).port
    const host = `127.0.0.1:${port}`
    const base = `http://${host}`
    const token = new URL(web.url).searchParams.get('token')!
    const form = await rawRequest(`${base}/?token=${token}`, { headers: { host } })
    expect(form.status).toBe(200)
    expect(form.body).toContain('name="passphrase"')
    expect(form.headers['set-cookie']).toBeUndefined()
    // Each client its own loopback address (127.0.0.x): the server counts failures per address.
    const tryLogin = (passphrase: string, from: string) =>
      rawRequest(`${base}/login`, {
        method: 'POST',
        headers: { host, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, passphrase }).toString(),
        localAddress: from,
      })
    for (let i = 0; i < 5; i++) expect((await tryLogin('wrong', '127.0.0.2')).status).toBe(401)
    const locked = await tryLogin('correct horse battery', '127.0.0.2')
    expect(locked.status).toBe(429)
    expect(locked.headers['set-cookie']).toBeUndefined()
    // The attacker's lockout is not everyone's: another address still logs in.
    const other = await tryLogin('correct horse battery', '127.0.0.3')
    expect(other.status).toBe(303)
    expect(String(other.headers['set-cookie'])).toMatch(/^swarm_web=/)
    // Guessing spread over addresses, none past its own limit: 20 failures in all lock every login out.
    for (let a = 4; a < 7; a++) for (let i = 0; i < 5; i++) expect((await tryLogin('wrong', `127.0.0.${a}`)).status).toBe(401)
    const fresh = await tryLogin('correct horse battery', '127.0.0.9')
    expect(fresh.status).toBe(429)
    expect(fresh.headers['set-cookie']).toBeUndefined()
    await web.printed('failed login from 127.0.0.2')
    await web.printed('login refused from 127.0.0.9: too many failed logins from all addresses')
  })

  it('with a passphrase: the right one gets a session cookie, HttpOnly and SameSite=Strict', async () => {
    const web = await startWeb(fx, ['--host', '0.0.0.0'], { SWARM_WEB_PASSPHRASE: 'correct horse battery' })
    const port = new URL(web.url).port
    const host = `127.0.0.1:${port}`
    const base = `http://${host}`
    const token = new URL(web.url).searchParams.get('token')!
    const r = await rawRequest(`${base}/login`, {
      method: 'POST',
      headers: { host, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, passphrase: 'correct horse battery' }).toString(),
    })
    expect(r.status).toBe(303)
    const cookie = String(r.headers['set-cookie'])
    expect(cookie).toMatch(/^swarm_web=[\w-]+; HttpOnly; SameSite=Strict; Path=\//)
    const page = await rawRequest(`${base}/`, { headers: { host, cookie: cookie.split(';')[0] } })
    expect(page.status).toBe(200)
  })
})
