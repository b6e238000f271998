/**
 * The one HTML page `swarm web` serves: a shell that loads the bundled script and styles. Nothing
 * a teammate wrote is in it; the script fills the page from the event stream, as text only.
 */

export function pageHtml(options: { readOnly: boolean }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>swarm</title>
<link rel="stylesheet" href="/assets/app.css">
</head>
<body data-read-only="${options.readOnly ? '1' : '0'}">
<header id="top"><h1>swarm</h1><span id="conn">connecting…</span><button id="notify-on" type="button" hidden>notifications</button></header>
<main>
<section id="requests" aria-label="pending requests"></section>
<section id="teams" aria-label="teams"></section>
<section id="answered" aria-label="answers given here"></section>
</main>
<dialog id="viewer"><div class="viewer-head"><h2 id="viewer-title"></h2><button type="button" id="viewer-close">close</button></div><div id="viewer-tabs"></div><div id="term"></div><div id="viewer-extra"></div></dialog>
<dialog id="confirm"><p id="confirm-text"></p><div class="row"><button type="button" id="confirm-yes" class="approve">yes, always</button><button type="button" id="confirm-no">cancel</button></div></dialog>
<script src="/assets/app.js"></script>
</body>
</html>
`
}

/** The passphrase form a remote visitor with a valid token sees first. The token rides in a hidden field. */
export function loginHtml(token: string, message = ''): string {
  const safe = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>swarm — log in</title>
<style>body{font:16px system-ui,sans-serif;margin:2rem}input,button{font-size:1rem;min-height:44px;margin:.5rem 0;display:block}</style></head>
<body><main class="login"><h1>swarm</h1><p>${safe(message)}</p>
<form method="post" action="/login"><input type="hidden" name="token" value="${safe(token)}">
<label>passphrase <input type="password" name="passphrase" autocomplete="current-password" autofocus></label>
<button type="submit" class="approve">log in</button></form></main></body></html>
`
}
