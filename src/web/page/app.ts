/**
 * The page of `swarm web`, run in the browser (bundled by scripts/bundle.mjs with xterm.js). It
 * draws what the server's event stream says — every team, every pending request — and answers
 * through the server's API. Everything a teammate or a model wrote is set as text (textContent,
 * xterm's write of neutralised text), never as markup.
 */
import { Terminal } from '@xterm/xterm'
import '@xterm/xterm/css/xterm.css'
import './app.css'
import type { Snapshot, WebMember, WebRequest, WebTeam } from '../snapshot.js'

const readOnly = document.body.dataset.readOnly === '1'
const $ = (id: string) => document.getElementById(id) as HTMLElement

type Child = Node | string | undefined | false
function el(tag: string, props: Record<string, string> = {}, ...children: Child[]): HTMLElement {
  const e = document.createElement(tag)
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') e.className = v
    else e.setAttribute(k, v)
  }
  for (const c of children) if (c !== undefined && c !== false) e.append(typeof c === 'string' ? document.createTextNode(c) : c)
  return e
}
function button(label: string, props: Record<string, string>, onClick: () => void | Promise<void>): HTMLElement {
  const b = el('button', { type: 'button', ...props }, label)
  b.addEventListener('click', () => void onClick())
  return b
}

async function post(path: string, body: unknown): Promise<{ ok: boolean; data: Record<string, unknown> }> {
  const res = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    credentials: 'same-origin',
  })
  const data = (await res.json().catch(() => ({}))) as Record<string, unknown>
  return { ok: res.ok, data }
}

// ---- requests ----------------------------------------------------------------------------

/** What became of each answer given on this page: on its card while it is pending, and in the log of answers after. */
const notes = new Map<string, string>()
function flash(id: string, text: string): void {
  notes.set(id, text)
  const n = document.querySelector(`[data-note="${CSS.escape(id)}"]`)
  if (n) n.textContent = text
  const log = $('answered')
  const line = log.querySelector(`[data-answered="${CSS.escape(id)}"]`) ?? log.appendChild(el('p', { 'data-answered': id }))
  line.textContent = text
}

async function answer(team: string, r: WebRequest, decision: 'approve' | 'deny', always = false): Promise<void> {
  const feedback = (document.querySelector(`textarea[data-feedback="${CSS.escape(r.id)}"]`) as HTMLTextAreaElement | null)?.value ?? ''
  flash(r.id, 'sending…')
  const { ok, data } = await post('/api/answer', {
    team,
    id: r.id,
    decision,
    ...(always ? { always } : {}),
    ...(feedback.trim() ? { feedback } : {}),
  })
  flash(
    r.id,
    `[${r.shortId}] ` +
      (ok
        ? `${decision === 'approve' ? (always ? 'approved always' : 'approved') : 'denied'} — by ${String(data.by)}`
        : String(data.error ?? 'failed')),
  )
}

function confirmAlways(r: WebRequest): Promise<boolean> {
  const dialog = $('confirm') as HTMLDialogElement
  $('confirm-text').textContent = `[${r.shortId}] always allow ${r.agent}: ${r.always.join(', ') || '(this exact call)'}?`
  dialog.showModal()
  return new Promise((resolve) => {
    const done = (v: boolean) => {
      dialog.close()
      $('confirm-yes').onclick = null
      $('confirm-no').onclick = null
      resolve(v)
    }
    $('confirm-yes').onclick = () => done(true)
    $('confirm-no').onclick = () => done(false)
  })
}

function requestCard(team: string, r: WebRequest): HTMLElement {
  const what = r.kind === 'plan' ? 'plan approval' : r.toolName
  const card = el(
    'article',
    { class: 'request', 'data-request': r.id },
    el('h3', {}, el('span', { class: 'short' }, `[${r.shortId}]`), ` ${r.agent} · ${what} `, el('span', { class: 'team' }, team)),
    r.description ? el('p', { class: 'desc' }, r.description) : undefined,
    el('pre', { class: 'input' }, r.inputLines.join('\n')),
    r.always.length ? el('p', { class: 'rule' }, `always would add: ${r.always.join(', ')}`) : undefined,
  )
  if (!readOnly) {
    card.append(
      el('textarea', { 'data-feedback': r.id, placeholder: 'feedback (with deny: what the model is told)', rows: '2' }),
      el(
        'div',
        { class: 'answers' },
        button('Approve once', { class: 'approve', 'data-action': 'approve' }, () => void answer(team, r, 'approve')),
        button('Always…', { class: 'always', 'data-action': 'always' }, async () => {
          if (await confirmAlways(r)) await answer(team, r, 'approve', true)
        }),
        button('Deny', { class: 'deny', 'data-action': 'deny' }, () => void answer(team, r, 'deny')),
      ),
    )
  }
  card.append(el('p', { class: 'note', 'data-note': r.id }, notes.get(r.id) ?? ''))
  return card
}

// ---- teams -------------------------------------------------------------------------------

const usd = (n: number) => `$${n.toFixed(n < 1 ? 4 : 2)}`

function memberRow(team: string, m: WebMember): HTMLElement {
  const tokens = m.tokens ? `${m.tokens.input + m.tokens.cacheRead + m.tokens.cacheWrite} in / ${m.tokens.output} out` : '—'
  return el(
    'div',
    { class: `member status-${m.status.replace(/\W/g, '-')}`, 'data-member': `${team}/${m.name}` },
    el(
      'div',
      { class: 'who' },
      el('strong', {}, m.name),
      ' ',
      el('span', { class: 'state' }, m.status),
      ' ',
      el('span', { class: 'backend' }, m.backend),
    ),
    el(
      'div',
      { class: 'facts' },
      m.task ? `task ${m.task} · ` : '',
      m.detail ? `${m.detail} · ` : '',
      `${tokens}`,
      m.cachedShare !== undefined ? ` · ${Math.round(m.cachedShare * 100)}% cached` : '',
      m.costUsd !== undefined ? ` · ${usd(m.costUsd)}${m.maxCostUsd !== undefined ? ` of ${usd(m.maxCostUsd)}` : ''}` : '',
      ` · ${m.unread} unread`,
      m.pending ? ` · ${m.pending} waiting` : '',
    ),
    el(
      'div',
      { class: 'member-actions' },
      button('View', { class: 'view', 'data-view': `${team}/${m.name}` }, () => openViewer(team, m)),
    ),
  )
}

function teamBlock(t: WebTeam): HTMLElement {
  return el(
    'section',
    { class: 'team', 'data-team': t.team },
    el(
      'h2',
      {},
      t.team,
      el(
        'span',
        { class: 'spend' },
        ` ${usd(t.costUsd)}${t.maxCostUsd !== undefined ? ` of ${usd(t.maxCostUsd)}` : ''} · tasks ${t.tasks.pending} pending, ${t.tasks.inProgress} in progress, ${t.tasks.completed} done`,
      ),
    ),
    ...t.problems.map((p) => el('p', { class: 'problem' }, p)),
    ...t.members.map((m) => memberRow(t.team, m)),
  )
}

// ---- the viewer: pane, transcript, inbox, message ----------------------------------------

let viewStream: EventSource | undefined
let term: Terminal | undefined

function openViewer(team: string, m: WebMember): void {
  const dialog = $('viewer') as HTMLDialogElement
  $('viewer-title').textContent = `${m.name} · ${team}`
  const tabs = $('viewer-tabs')
  tabs.replaceChildren(
    ...(m.pane ? [button('Pane', { 'data-tab': 'pane' }, () => showView(team, m.name, 'pane'))] : []),
    button('Transcript', { 'data-tab': 'transcript' }, () => showView(team, m.name, 'transcript')),
    button('Inbox', { 'data-tab': 'inbox' }, () => void showInbox(team, m.name)),
  )
  $('viewer-extra').replaceChildren()
  if (!readOnly && m.name !== 'team-lead') {
    const text = el('textarea', { 'data-message': `${team}/${m.name}`, rows: '2', placeholder: `message to ${m.name}` }) as HTMLTextAreaElement
    const note = el('p', { class: 'note' })
    $('viewer-extra').append(
      text,
      button('Send', { class: 'approve', 'data-action': 'send' }, async () => {
        const { ok, data } = await post('/api/send', { team, to: m.name, text: text.value })
        note.textContent = ok ? 'sent' : String(data.error ?? 'failed')
        if (ok) text.value = ''
      }),
      note,
    )
  }
  dialog.showModal()
  showView(team, m.name, m.pane ? 'pane' : 'transcript')
}

function terminal(): Terminal {
  if (!term) {
    term = new Terminal({ convertEol: true, disableStdin: true, cursorBlink: false, scrollback: 2_000, fontSize: 13, rows: 24 })
    term.open($('term'))
  }
  return term
}

/** How much of what the viewer wrote is kept on its element. */
const TERM_TEXT_KEPT = 64 * 1024

function showView(team: string, name: string, source: 'pane' | 'transcript'): void {
  viewStream?.close()
  $('term').hidden = false
  const t = terminal()
  t.reset()
  const q = new URLSearchParams({ team, name, ...(source === 'transcript' ? { source } : {}) })
  viewStream = new EventSource(`/api/view?${q}`)
  // What was written, kept on the element (its recent part) for a reader other than xterm's screen.
  const written = (text: string, fresh: boolean) => {
    const box = $('term')
    box.dataset.text = ((fresh ? '' : (box.dataset.text ?? '')) + text).slice(-TERM_TEXT_KEPT)
  }
  // The server sends neutralised text (a pane's colours kept): a whole view, then what the pane prints next.
  viewStream.addEventListener('view', (e) => {
    const view = JSON.parse((e as MessageEvent).data) as { text: string }
    t.reset()
    t.write(view.text)
    written(view.text, true)
  })
  viewStream.addEventListener('more', (e) => {
    const more = JSON.parse((e as MessageEvent).data) as { text: string }
    t.write(more.text)
    written(more.text, false)
  })
}

async function showInbox(team: string, name: string): Promise<void> {
  viewStream?.close()
  $('term').hidden = true
  const res = await fetch(`/api/inbox?${new URLSearchParams({ team, name })}`)
  const data = (await res.json()) as { messages?: Array<{ from: string; timestamp: string; read: boolean; text: string }>; error?: string }
  const list = el(
    'div',
    { class: 'inbox' },
    ...(data.messages ?? []).map((m) =>
      el('div', { class: m.read ? 'msg' : 'msg unread' }, el('div', { class: 'meta' }, `${m.from} · ${m.timestamp}`), el('pre', {}, m.text)),
    ),
  )
  if (data.error) list.append(el('p', { class: 'problem' }, data.error))
  $('viewer-extra').prepend(list)
}

$('viewer-close').addEventListener('click', () => {
  viewStream?.close()
  viewStream = undefined
  ;($('viewer') as HTMLDialogElement).close()
})

// ---- notifications -----------------------------------------------------------------------

let known: Set<string> | undefined
function notifyNew(s: Snapshot): void {
  const all = s.teams.flatMap((t) => t.requests.map((r) => ({ team: t.team, r })))
  if (known && 'Notification' in window && Notification.permission === 'granted') {
    for (const { team, r } of all)
      if (!known.has(r.id))
        new Notification(`[${r.shortId}] ${r.agent} asks (${team})`, {
          body: `${r.kind === 'plan' ? 'plan' : r.toolName}: ${r.inputLines.join(' ').slice(0, 200)}`,
          tag: r.id,
        })
  }
  known = new Set(all.map((x) => x.r.id))
}
if ('Notification' in window && Notification.permission === 'default') {
  const b = $('notify-on')
  b.hidden = false
  b.addEventListener('click', () => void Notification.requestPermission().then(() => (b.hidden = true)))
}

// ---- the stream --------------------------------------------------------------------------

function draw(s: Snapshot): void {
  const requests = s.teams.flatMap((t) => t.requests.map((r) => requestCard(t.team, r)))
  $('requests').replaceChildren(el('h2', {}, requests.length ? `${requests.length} waiting` : 'no pending requests'), ...requests)
  $('teams').replaceChildren(...(s.teams.length ? s.teams.map(teamBlock) : [el('p', {}, 'no teams on this machine')]))
  notifyNew(s)
}

const events = new EventSource('/api/events')
events.addEventListener('state', (e) => {
  $('conn').textContent = 'live'
  draw(JSON.parse((e as MessageEvent).data) as Snapshot)
})
events.addEventListener('error', () => ($('conn').textContent = 'reconnecting…'))
