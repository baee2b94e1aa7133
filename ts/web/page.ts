/**
 * The agent page (`aigenora web`): joins the session an invitation in the URL offers and plays it,
 * by itself (#mode=autonomous) or with a person deciding each move (#mode=human, #mode=hybrid). When
 * the session ends, #outcome says how (`completed` or the end reason) and what the in-page receipt
 * check found (`receipt verified` or why not), so that a script can drive the page too.
 */
import { createCrypto, loadCryptoFeature } from '../crypto/browser.js';
import type { Window } from '../engine/decision-window.js';
import type { ControlMode, Message, Role } from '../hooks/types.js';
import { AgentError, joinFromPage, openInvitation, type PageSessionResult } from './agent.js';
import type { Answer } from './decisions.js';
import { renderDecision, renderState } from './decide-form.js';
import { pageSeed, saveSession } from './keystore.js';
import { pageProtocols, type ServedSpec } from './page-protocols.js';

const MODES: ControlMode[] = ['autonomous', 'human', 'hybrid'];
const PAINT_MS = 200;

const byId = (id: string): HTMLElement => {
  const e = document.getElementById(id);
  if (!e) throw new Error(`the page lacks #${id}`);
  return e;
};

function say(text: string): void {
  byId('status').textContent = text;
}

/** One line of the frame log: who sent which action, fields as text. */
function logFrame(from: Role, msg: Message): void {
  const li = document.createElement('li');
  const fields = Object.entries(msg).filter(([k]) => k !== 'action' && !k.startsWith('_'));
  li.textContent = `${from}: ${String(msg.action)}${fields.length ? ` ${fields.map(([k, v]) => `${k}=${typeof v === 'string' && v.length > 64 ? `${v.slice(0, 48)}…` : JSON.stringify(v)}`).join(' ')}` : ''}`;
  byId('log').append(li);
}

function askForInvitation(): void {
  const form = byId('join') as HTMLFormElement;
  form.hidden = false;
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const data = new FormData(form);
    const p = new URLSearchParams({ invitation: String(data.get('invitation') ?? '').trim(), mode: String(data.get('mode') ?? 'human') });
    location.hash = p.toString();
    location.reload();
  });
}

function download(result: PageSessionResult): void {
  const a = byId('download') as HTMLAnchorElement;
  a.href = URL.createObjectURL(new Blob([result.transcript], { type: 'application/x-ndjson' }));
  a.download = `transcript-${result.sid.slice(0, 16)}.jsonl`;
  a.hidden = false;
}

async function run(invitation: string, mode: ControlMode): Promise<void> {
  say('loading the WASM core…');
  let pyjson: Promise<unknown> | undefined;
  const loadProtocolId = () => (pyjson ??= loadCryptoFeature('pyjson', new URL('./aigenora_wasm_pyjson_bg.wasm', location.href)));
  const [crypto, served] = await Promise.all([
    createCrypto('wasm', new URL('./aigenora_wasm_bg.wasm', location.href)),
    fetch('./protocols.json').then(async (r) => (await r.json()) as ServedSpec[]),
  ]);
  // A served built-in as the page was built has its protocol_id recorded in the page; only another
  // text needs it computed, in the pyjson module, fetched then (or after the session, for the receipt check).
  const protocols = await pageProtocols(crypto, served, loadProtocolId);
  // Refuse a bad invitation before any key is made or any connection opened.
  const { protocol, invitation: inv } = openInvitation(crypto, invitation, protocols);
  byId('protocol').textContent = `${protocol.alias} · ${mode} control · options ${JSON.stringify(inv.options)}`;
  say('connecting to the host…');
  const seed = await pageSeed();
  const frames: { from: Role; msg: Message }[] = [];
  const board = byId('board');
  const decision = byId('decision');
  /** First and last frame, ms since the page was opened (for the bench). */
  const frameAt = { first: 0, last: 0 };
  const view = () => ({ spec: protocol.spec, role: 'guest' as Role, options: inv.options, frames });
  /**
   * Frames can come far faster than a person reads them: the log and the board are redrawn at most
   * every PAINT_MS (at once when the page was quiet), not once per frame of the session, whose layout
   * work was four fifths of the page's time in an agent-against-agent game.
   */
  const unlogged: { from: Role; msg: Message }[] = [];
  let painted = 0;
  let painting: ReturnType<typeof setTimeout> | undefined;
  const paint = () => {
    painting = undefined;
    painted = performance.now();
    for (const f of unlogged.splice(0)) logFrame(f.from, f.msg);
    renderState(board, view());
    draw();
  };
  const repaint = () => {
    painting ??= setTimeout(paint, Math.max(0, painted + PAINT_MS - performance.now()));
  };
  /** The window open now, drawn again when a frame comes (a chat goes on while the person types). */
  let open: { w: Window; submit: (a: Answer) => string | undefined; refused?: string } | undefined;
  const draw = () => {
    if (!open) return;
    const { w, submit, refused } = open;
    renderDecision(decision, { ...view(), window: w, ...(refused && { refused }) }, (a) => {
      const why = submit(a);
      if (!why) say('sent');
    });
  };
  const result = await joinFromPage({
    crypto,
    seed,
    invitation,
    protocols,
    controlMode: mode,
    loadProtocolId,
    onReady: ({ sid, guestKey }) => {
      say(`session ${sid.slice(0, 16)}… ready`);
      byId('identity').textContent = `this page's key ${guestKey.slice(0, 16)}…`;
      // Since the page was opened with the invitation: loading, the WASM core, dialling, the handshake.
      document.body.dataset['readyMs'] = String(Math.round(performance.now()));
    },
    onMessage: (from, msg) => {
      frames.push({ from, msg });
      frameAt.last = performance.now();
      if (frames.length === 1) frameAt.first = frameAt.last;
      unlogged.push({ from, msg });
      repaint();
      // The conversation is redrawn whole, which a screen reader cannot follow: each line the peer
      // says is announced here, once, as it comes.
      if (from !== 'guest' && msg.action === 'chat') byId('said').textContent = `peer: ${String(msg['text'] ?? '')}`;
      if (from !== 'guest' && msg.action === 'end' && protocol.spec.flow?.mode === 'free') byId('said').textContent = 'the peer left the conversation';
    },
    onWindow: (w: Window | null, submit: (a: Answer) => string | undefined, refused?: string) => {
      // A board game's decision draws the board itself: one board on screen at a time.
      board.hidden = w !== null;
      open = w ? { w, submit, ...(refused && { refused }) } : undefined;
      // The open window, for a script driving the page (`round:2`, `turn:5`, `chat:0`).
      if (!w) {
        delete document.body.dataset['window'];
        decision.replaceChildren();
        return;
      }
      document.body.dataset['window'] = `${w.match_key}:${w.match_value}`;
      say('your move');
      draw();
    },
  });
  decision.replaceChildren();
  board.hidden = false;
  open = undefined;
  clearTimeout(painting);
  paint();
  const verified = result.check.ok && result.check.receipt ? 'receipt verified' : `receipt not verified: ${result.check.reason ?? 'no receipt'}`;
  byId('outcome').textContent = `${result.completed ? 'completed' : result.reason}${result.detail ? ` (${result.detail})` : ''} · ${verified}`;
  say(`session ${result.sid.slice(0, 16)}… ended`);
  download(result);
  await saveSession({
    sid: result.sid,
    protocol: protocol.alias,
    reason: result.reason,
    completed: result.completed,
    transcript: result.transcript,
    spec: protocol.specText,
    receipt: result.receipt,
    saved_at: new Date().toISOString(),
  }).catch(() => undefined);
  Object.assign(window, {
    __aigenora: {
      done: true,
      completed: result.completed,
      reason: result.reason,
      check: result.check,
      transcript: result.transcript,
      receipt: result.receipt,
      spec: protocol.specText,
      frames: frames.length,
      firstFrameMs: frameAt.first,
      lastFrameMs: frameAt.last,
      readyMs: Number(document.body.dataset['readyMs'] ?? NaN),
      events: result.events.map((e) => e.type),
    },
  });
}

async function main(): Promise<void> {
  const params = new URLSearchParams(location.hash.slice(1));
  const invitation = params.get('invitation');
  const mode = (params.get('mode') ?? 'human') as ControlMode;
  if (!invitation) {
    say('paste an invitation to join a session');
    askForInvitation();
    return;
  }
  try {
    if (!MODES.includes(mode)) throw new AgentError('INVITATION_INVALID', `mode must be one of ${MODES.join(', ')}`);
    await run(invitation, mode);
  } catch (e) {
    const text = e instanceof AgentError ? e.message : `error: ${(e as Error)?.message ?? String(e)}`;
    byId('outcome').textContent = text;
    say('not joined');
    Object.assign(window, { __aigenora: { done: true, error: text } });
  }
}

void main();
