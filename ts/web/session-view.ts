/**
 * The page `aigenora session web` serves: one HTML document, its script and style inline under the
 * response's CSP nonce, no framework and no request but to its own server (relative URLs under the
 * token path). Everything the session wrote (peer messages included) reaches the DOM through
 * textContent only, so peer text is never interpreted as markup.
 */

const STYLE = `
:root { font-family: system-ui, sans-serif; line-height: 1.4; color: #111; background: #fff; }
body { margin: 0 auto; max-width: 70rem; padding: 1rem; }
h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
h2 { font-size: 1.1rem; margin: 1.25rem 0 .5rem; }
code, td, .mono { font-family: ui-monospace, monospace; font-size: .9rem; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid #888; padding: .2rem .4rem; text-align: left; vertical-align: top; }
td.fields { word-break: break-all; }
#decision { border: 3px solid #000; padding: .5rem 1rem 1rem; margin-top: 1rem; }
#choices button, form button { font-size: 1.1rem; padding: .5rem 1rem; margin: .25rem .5rem .25rem 0; border: 2px solid #000; background: #f2f2f2; color: #000; cursor: pointer; }
button:focus-visible, input:focus-visible, textarea:focus-visible, select:focus-visible { outline: 3px solid #000; outline-offset: 2px; }
button[disabled] { opacity: .6; cursor: default; }
label { display: block; font-weight: 600; margin-top: .5rem; }
textarea { width: 100%; min-height: 8rem; font-family: ui-monospace, monospace; }
#error { font-weight: 700; }
.note { font-size: .9rem; }
`;

const SCRIPT = String.raw`
'use strict';
const $ = (id) => document.getElementById(id);
const say = (el, s) => { el.textContent = s === undefined || s === null ? '' : String(s); };
const make = (tag, text) => { const e = document.createElement(tag); if (text !== undefined) say(e, text); return e; };
const shortText = (v) => { const s = typeof v === 'string' ? v : JSON.stringify(v); return s.length > 96 ? s.slice(0, 93) + '...' : s; };
const fieldsText = (f) => Object.keys(f).map((k) => k + '=' + shortText(f[k])).join('  ');

let ended = false;
let windowId = null;
let current = null;
let sent = null;
let framesKey = '';
let eventsKey = '';

async function poll() {
  try {
    const r = await fetch('state', { cache: 'no-store', headers: { accept: 'application/json' } });
    const body = await r.json();
    if (!r.ok) throw new Error(body && body.error ? body.error.code + ': ' + body.error.message : 'HTTP ' + r.status);
    render(body);
    say($('error'), '');
  } catch (e) {
    say($('error'), 'The session view server does not answer: ' + (e && e.message ? e.message : String(e)));
  }
  setTimeout(poll, ended ? 2000 : 300);
}

function render(s) {
  say($('sid'), s.sid ? s.sid.slice(0, 16) : 'unknown');
  say($('protocol'), s.protocol_name || s.protocol_id || 'unknown');
  say($('role'), s.role || 'unknown');
  say($('dir'), s.session_dir);
  const snap = s.snapshot || {};
  const phase = snap.phase || 'not started';
  say($('phase'), phase);
  say($('reason'), snap.reason ? '(' + snap.reason + (snap.detail ? ': ' + snap.detail : '') + ')' : '');
  ended = phase === 'ended' || phase === 'aborted';
  document.body.dataset.phase = phase;
  renderFrames(s);
  renderEvents(s);
  renderWindow(s);
  renderSent(s);
}

function renderFrames(s) {
  const frames = s.frames || [];
  const last = frames[frames.length - 1];
  const key = frames.length + ':' + (last ? last.from + last.seq : '') + ':' + s.frames_truncated;
  if (key === framesKey) return;
  framesKey = key;
  const body = $('frames-body');
  body.replaceChildren();
  const results = $('results');
  results.replaceChildren();
  for (const f of frames) {
    const tr = make('tr');
    tr.dataset.action = f.action;
    tr.append(make('td', f.seq), make('td', f.from), make('td', f.action));
    const td = make('td', fieldsText(f.fields));
    td.className = 'fields';
    tr.append(td);
    body.append(tr);
    if (f.action === 'round_result') {
      const li = make('li', fieldsText(f.fields));
      li.dataset.round = String(f.fields.round !== undefined ? f.fields.round : f.fields.turn);
      results.append(li);
    }
  }
  $('results-section').hidden = results.children.length === 0;
  say($('frames-note'), frames.length + ' frame' + (frames.length === 1 ? '' : 's') + ' shown' + (s.frames_truncated ? ' (the transcript is larger than ' + s.limits.tail_bytes + ' bytes or ' + s.limits.frames + ' frames: only its end is read)' : '') + (s.frames_unreadable ? '; ' + s.frames_unreadable + ' unreadable line(s) skipped' : '') + '.');
}

function renderEvents(s) {
  const events = s.events || [];
  const last = events[events.length - 1];
  const key = events.length + ':' + (last ? last.ts + last.type : '');
  if (key === eventsKey) return;
  eventsKey = key;
  const list = $('events');
  list.replaceChildren();
  for (const e of events.slice().reverse()) {
    const li = make('li');
    li.append(make('span', e.ts + ' '), make('strong', e.type), make('span', e.data ? ' ' + shortText(e.data) : ''));
    list.append(li);
  }
  say($('events-note'), 'Newest first; the last ' + events.length + ' event(s)' + (s.events_truncated ? ' (older events are not read)' : '') + '.');
}

function when(iso) {
  if (!iso) return '';
  const left = Math.max(0, Math.round((Date.parse(iso) - Date.now()) / 1000));
  return new Date(iso).toLocaleTimeString() + ' (' + left + ' s left)';
}

function renderWindow(s) {
  const w = s.window;
  const section = $('decision');
  if (!w || ended) {
    section.hidden = true;
    windowId = null;
    current = null;
    return;
  }
  if (w.window_id !== windowId) {
    windowId = w.window_id;
    current = w;
    buildForm(w, s.control || { expects: w.expects });
    section.hidden = false;
    const first = section.querySelector('button, input, textarea');
    if (first && (document.activeElement === document.body || document.activeElement === null)) first.focus();
  }
  say($('deadline'), w.deadline_at ? 'Decide by ' + when(w.deadline_at) + '; after it the session ends (decision_timeout).' : 'Until ' + when(w.release_at) + ' a decision replaces the agent\'s move; after it the agent\'s own move is played.');
}

function buildForm(w, control) {
  say($('window-title'), (control.expects === 'message' ? 'Your next message' : 'Your ' + (control.field || 'value')) + ' for ' + w.match_key + ' ' + w.match_value);
  // The forms outlive a window: a new window opens them again after a decision disabled them.
  $('decision').querySelectorAll('button, input, textarea, select').forEach((c) => { c.disabled = false; });
  const choices = $('choices');
  choices.replaceChildren();
  $('value-form').hidden = true;
  $('message-form').hidden = true;
  if (control.expects === 'value' && Array.isArray(control.choices) && control.choices.length) {
    for (const c of control.choices) {
      const b = make('button', typeof c === 'string' ? c : JSON.stringify(c));
      b.type = 'button';
      b.dataset.value = JSON.stringify(c);
      b.addEventListener('click', () => decide({ value: c }, b.textContent));
      choices.append(b);
    }
  } else if (control.expects === 'value') {
    const input = $('value-input');
    input.value = '';
    input.type = control.input && control.input.type === 'integer' ? 'number' : 'text';
    if (control.input && control.input.min !== undefined) input.min = String(control.input.min); else input.removeAttribute('min');
    if (control.input && control.input.max !== undefined) input.max = String(control.input.max); else input.removeAttribute('max');
    say($('value-label'), (control.field || 'Value') + (input.type === 'text' ? ' (JSON, or plain text for a string)' : ''));
    $('value-form').hidden = false;
  } else {
    const select = $('template-select');
    select.replaceChildren();
    for (const [i, t] of (control.templates || []).entries()) {
      const o = make('option', t.action);
      o.value = String(i);
      select.append(o);
    }
    $('template-row').hidden = select.options.length < 2;
    const fill = () => { const t = (control.templates || [])[Number(select.value) || 0]; $('message-input').value = t ? t.text : '{\n  "action": ""\n}'; };
    select.onchange = fill;
    fill();
    $('message-form').hidden = false;
  }
}

async function decide(body, label) {
  if (!current) return;
  const controls = $('decision').querySelectorAll('button, input, textarea, select');
  controls.forEach((c) => { c.disabled = true; });
  say($('decide-result'), 'Sending ' + label + '...');
  try {
    const r = await fetch('decide', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(Object.assign({ window_id: current.window_id }, body)) });
    const out = await r.json();
    if (!r.ok) throw new Error(out && out.error ? out.error.code + ': ' + out.error.message : 'HTTP ' + r.status);
    sent = { id: out.decision_id, label: label, window: current.window_id };
    say($('decide-result'), 'Sent ' + label + ' for ' + current.match_key + ' ' + current.match_value + '; waiting for the engine.');
  } catch (e) {
    say($('decide-result'), 'Not sent: ' + (e && e.message ? e.message : String(e)));
    controls.forEach((c) => { c.disabled = false; });
  }
}

function renderSent(s) {
  if (!sent) return;
  for (const e of s.events || []) {
    if (!e.data || e.data.decision_id !== sent.id) continue;
    if (e.type === 'local_decision_consumed') {
      say($('decide-result'), 'The engine took ' + sent.label + ' for ' + e.data.match_key + ' ' + e.data.match_value + '.');
      sent = null;
      return;
    }
    if (e.type === 'local_decision_rejected') {
      say($('decide-result'), 'The engine refused ' + sent.label + ': ' + e.data.reason + '. Decide again.');
      if (current && current.window_id === sent.window) $('decision').querySelectorAll('button, input, textarea, select').forEach((c) => { c.disabled = false; });
      sent = null;
      return;
    }
  }
}

$('value-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const input = $('value-input');
  let v = input.value;
  if (input.type === 'number') v = Number(v);
  else { try { v = JSON.parse(v); } catch { v = input.value; } }
  decide({ value: v }, input.value);
});

$('message-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  let m;
  try { m = JSON.parse($('message-input').value); } catch (e) { say($('decide-result'), 'Not sent: the message is not JSON (' + e.message + ')'); return; }
  if (typeof m !== 'object' || m === null || Array.isArray(m)) { say($('decide-result'), 'Not sent: the message must be a JSON object'); return; }
  decide({ message: m }, typeof m.action === 'string' ? m.action : 'the message');
});

poll();
`;

/** The page, its inline style and script marked with `nonce` (the CSP names the same nonce). */
export function sessionViewPage(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>aigenora session</title>
<link rel="icon" href="favicon.ico">
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<header>
<h1>aigenora session <span id="sid" class="mono"></span></h1>
<p>Protocol <strong id="protocol"></strong>, this side: <strong id="role"></strong>. Directory: <code id="dir"></code></p>
<p role="status" aria-live="polite">Phase: <strong id="phase">loading</strong> <span id="reason"></span></p>
<p id="error" role="alert"></p>
</header>
<main>
<section id="decision" aria-labelledby="window-title" hidden>
<h2 id="window-title">Your decision</h2>
<p id="deadline"></p>
<div id="choices" role="group" aria-labelledby="window-title"></div>
<form id="value-form" hidden>
<label id="value-label" for="value-input">Value</label>
<input id="value-input" autocomplete="off">
<button type="submit">Send</button>
</form>
<form id="message-form" hidden>
<div id="template-row"><label for="template-select">Message kind (fills the template)</label><select id="template-select"></select></div>
<label for="message-input">Message (JSON)</label>
<textarea id="message-input" spellcheck="false"></textarea>
<button type="submit">Send message</button>
</form>
</section>
<p id="decide-result" role="status" aria-live="polite"></p>
<section id="results-section" aria-labelledby="results-title" hidden>
<h2 id="results-title">Round results</h2>
<ol id="results"></ol>
</section>
<section aria-labelledby="frames-title">
<h2 id="frames-title">Frames</h2>
<p id="frames-note" class="note"></p>
<table>
<thead><tr><th scope="col">seq</th><th scope="col">from</th><th scope="col">action</th><th scope="col">fields</th></tr></thead>
<tbody id="frames-body"></tbody>
</table>
</section>
<section aria-labelledby="events-title">
<h2 id="events-title">Events</h2>
<p id="events-note" class="note"></p>
<ol id="events" class="mono"></ol>
</section>
</main>
<script nonce="${nonce}">${SCRIPT}</script>
</body>
</html>
`;
}
