/**
 * The person's side of a decision window in a page: what the protocol lets this side say now, drawn
 * from the spec itself (buttons for enums, number inputs with the spec's bounds, text inputs), a
 * countdown to the window's deadline, and why the previous choice was refused. Boards and chat that a
 * form serves badly get a custom renderer (boards.ts). DOM only: no network, no engine code, and peer
 * data only reaches the page as text nodes, so it is never interpreted as markup.
 */
import type { Message, Role } from '../hooks/types.js';
import type { FieldSchema, MessageSpec, Spec } from '../spec/types.js';
import { boardFor, el, uid, type StateView } from './boards.js';

export interface DecisionWindow {
  match_key: string;
  match_value: number;
  expects: 'value' | 'message';
  deadline_at: string | null;
}
export interface DecisionView {
  spec: Spec;
  role: Role; // this side
  options: Record<string, unknown>; // the session's options (board size etc.)
  window: DecisionWindow;
  frames: { from: Role; msg: Message }[]; // every frame sent or accepted so far, in order
  /** Why the previous decision was refused (the engine's reason), shown to the person. */
  refused?: string;
}
export type DecisionAnswer = { value: unknown } | { message: Record<string, unknown> };

/** Field types whose values are machine material (hashes, keys): never typed by a person, not shown in the log. */
const OPAQUE = new Set(['hash', 'nonce', 'signature', 'ciphertext', 'key', 'ot_blob']);
/** Fields that count moves: prefilled with the next number after the frames' highest. */
const COUNTER = /^(turn|seq|round|attempt|move_number|step)$/;

/**
 * What is drawn in a root: its timer (stopped when the root is drawn again), its window, and the
 * control that last had the focus ('' for somewhere else inside; absent when the focus left it).
 */
interface Drawn {
  stop(): void;
  window?: string;
  focus?: string;
}
const drawn = new WeakMap<HTMLElement, Drawn>();

interface Carried {
  window?: string;
  focus?: string;
  values: Map<string, string>;
}

/** Clears a root, keeping what the person typed and where the focus was, for the next drawing. */
function reset(root: HTMLElement): Carried {
  const prev = drawn.get(root);
  prev?.stop();
  drawn.delete(root);
  const values = new Map<string, string>();
  root.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('input[data-key], textarea[data-key]').forEach((e) => values.set(e.dataset['key']!, e.value));
  root.replaceChildren();
  return { ...(prev?.window !== undefined && { window: prev.window }), ...(prev?.focus !== undefined && { focus: prev.focus }), values };
}

/**
 * A redraw of the same window (a new frame, a refusal) gives back the typed text and the focus; a new
 * window or the end moves a focus that was inside to the heading, so the next Tab reaches the first
 * control and a screen reader reads what is asked now. A focus elsewhere in the page is left alone.
 */
function settle(root: HTMLElement, section: HTMLElement, heading: HTMLElement, carried: Carried, state: Drawn): void {
  const same = state.window !== undefined && carried.window === state.window;
  if (same)
    section.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('input[data-key], textarea[data-key]').forEach((e) => {
      const v = carried.values.get(e.dataset['key']!);
      if (v !== undefined) e.value = v;
    });
  section.addEventListener('focusin', (e) => {
    state.focus = (e.target as HTMLElement).dataset?.['key'] ?? '';
  });
  section.addEventListener('focusout', (e) => {
    const to = (e as FocusEvent).relatedTarget;
    if (to instanceof Node && !section.contains(to)) delete state.focus;
  });
  drawn.set(root, state);
  if (carried.focus === undefined) return;
  const target = same && carried.focus ? section.querySelector<HTMLElement>(`[data-key="${CSS.escape(carried.focus)}"]`) : null;
  if (target && !(target as HTMLButtonElement).disabled) target.focus();
  else heading.focus();
}

const wireDir = (role: Role) => (role === 'host' ? 'host_to_guest' : 'guest_to_host');
const mayFixed = (f: FieldSchema) => f.type === 'enum' && f.values?.length === 1;

function describe(a: DecisionAnswer): string {
  if ('value' in a) return String(a.value);
  const { action, ...rest } = a.message;
  const parts = Object.entries(rest).map(([k, v]) => `${k} ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return `${String(action)}${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

function countdown(deadline: string | null): { node: HTMLElement; stop: () => void } {
  const p = el('p', { class: 'deadline', role: 'timer', 'aria-live': 'off' });
  const at = deadline === null ? NaN : Date.parse(deadline);
  if (Number.isNaN(at)) {
    p.textContent = 'No time limit.';
    return { node: p, stop: () => {} };
  }
  let timer: ReturnType<typeof setInterval> | undefined;
  const stop = () => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
  };
  const tick = () => {
    const s = Math.max(0, Math.ceil((at - Date.now()) / 1000));
    p.textContent = s > 0 ? `Time left: ${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}` : 'Time is up.';
    if (s === 0 || !p.isConnected) stop();
  };
  tick();
  if (at > Date.now()) timer = setInterval(tick, 1000);
  return { node: p, stop };
}

/** The highest value of `name` in the frames (this side's only, for per-sender counters) plus one. */
function nextCount(v: StateView, name: string, f: FieldSchema): number | undefined {
  let max: number | undefined;
  for (const { from, msg } of v.frames) {
    if (name === 'seq' && from !== v.role) continue;
    const x = msg[name];
    if (typeof x === 'number' && Number.isInteger(x)) max = Math.max(max ?? x, x);
  }
  return max === undefined ? f.min : max + 1;
}

type Read = { ok: true; value?: unknown } | { ok: false; error: string };
interface Control {
  node: HTMLElement;
  read(): Read;
}

/** Buttons that submit one value each (enums and booleans). */
function choiceButtons(label: string, values: unknown[], pick: (value: unknown) => void): HTMLElement {
  const group = el('div', { class: 'choices', role: 'group', 'aria-label': label });
  for (const value of values) {
    const b = el('button', { type: 'button', class: 'choice', 'data-key': `${label}:${String(value)}` }, String(value));
    b.addEventListener('click', () => pick(value));
    group.append(b);
  }
  return group;
}

/** One field of a form with several: its input and how to read it. */
function fieldControl(key: string, name: string, f: FieldSchema, v: StateView): Control {
  const id = uid('field');
  const label = el('label', { for: id }, f.required ? name : `${name} (optional)`);
  const hint = f.description ? el('span', { class: 'hint' }, ` ${f.description}`) : '';
  if (f.type === 'enum' || f.type === 'boolean') {
    const values: unknown[] = f.type === 'boolean' ? [true, false] : (f.values ?? []);
    let chosen: { value: unknown } | undefined;
    const labelId = uid('label');
    const group = el('div', { class: 'choices', role: 'group', 'aria-labelledby': labelId });
    const buttons = values.map((value) => {
      // The mark shows the choice without colour; it is hidden from the name, which aria-pressed carries.
      const mark = el('span', { 'aria-hidden': 'true' });
      const b = el('button', { type: 'button', class: 'choice', 'aria-pressed': 'false', 'data-key': `${key}:${String(value)}` }, mark, String(value));
      b.addEventListener('click', () => {
        chosen = { value };
        for (const o of buttons) {
          o.setAttribute('aria-pressed', String(o === b));
          o.firstElementChild!.textContent = o === b ? '✓ ' : '';
          o.style.fontWeight = o === b ? 'bold' : '';
        }
      });
      group.append(b);
      return b;
    });
    const node = el('div', { class: 'field' }, el('span', { id: labelId }, f.required ? name : `${name} (optional)`), hint, ' ', group);
    return { node, read: () => (chosen ? { ok: true, value: chosen.value } : f.required ? { ok: false, error: `choose a ${name}` } : { ok: true }) };
  }
  if (f.type === 'integer') {
    const input = el('input', { type: 'number', id, name, step: '1', inputmode: 'numeric', 'data-key': key, ...(f.required && { required: '' }) });
    if (f.min !== undefined) input.min = String(f.min);
    if (f.max !== undefined) input.max = String(f.max);
    const start = COUNTER.test(name) ? nextCount(v, name, f) : undefined;
    if (start !== undefined) input.value = String(start);
    const read = (): Read => {
      if (input.value === '') return f.required ? { ok: false, error: `${name} is required` } : { ok: true };
      const n = Number(input.value);
      if (!Number.isSafeInteger(n)) return { ok: false, error: `${name} must be a whole number` };
      const low = f.min !== undefined && n < f.min;
      const high = f.max !== undefined && n > f.max;
      if (low || high)
        return {
          ok: false,
          error:
            f.min !== undefined && f.max !== undefined
              ? `${name} must be from ${f.min} to ${f.max}`
              : low
                ? `${name} must be at least ${f.min}`
                : `${name} must be at most ${f.max}`,
        };
      return { ok: true, value: n };
    };
    return { node: el('div', { class: 'field' }, label, hint, ' ', input), read };
  }
  const structured = f.type === 'array' || f.type === 'json';
  const input = structured
    ? el('textarea', { id, name, rows: '3', 'data-key': key })
    : el('input', { type: 'text', id, name, autocomplete: 'off', 'data-key': key });
  if (f.required) input.required = true;
  if (f.max_length !== undefined) input.maxLength = f.max_length;
  const read = (): Read => {
    if (input.value === '') return f.required ? { ok: false, error: `${name} is required` } : { ok: true };
    if (!structured) return { ok: true, value: input.value };
    try {
      return { ok: true, value: JSON.parse(input.value) as unknown };
    } catch {
      return { ok: false, error: `${name} must be JSON` };
    }
  };
  return { node: el('div', { class: 'field' }, label, hint, ' ', input), read };
}

/** The form for one message this side may send: fixed fields filled in, the others asked for. */
function messageForm(m: MessageSpec, v: StateView, submit: (a: DecisionAnswer) => void): HTMLElement {
  const fixed: Record<string, unknown> = {};
  const free: [string, FieldSchema][] = [];
  for (const [name, f] of Object.entries(m.fields)) {
    if (mayFixed(f)) fixed[name] = f.values![0];
    else if (!OPAQUE.has(f.type) || f.required) free.push([name, f]);
  }
  if (!('action' in fixed)) fixed['action'] = m.name;
  const legendId = uid('legend');
  const box = el('fieldset', { class: 'message', 'aria-labelledby': legendId }, el('legend', { id: legendId }, m.name));
  if (m.description) box.append(el('p', { class: 'hint' }, m.description));
  // One choice field and nothing else: each choice is a button that sends the message.
  const only = free.length === 1 ? free[0]! : undefined;
  if (only && (only[1].type === 'enum' || only[1].type === 'boolean')) {
    const [name, f] = only;
    box.append(
      choiceButtons(`${m.name}: ${name}`, f.type === 'boolean' ? [true, false] : (f.values ?? []), (value) => submit({ message: { ...fixed, [name]: value } })),
    );
    return el('div', { class: 'message-form' }, box);
  }
  const form = el('form', { class: 'message-form', novalidate: '' }, box);
  const controls = free.map(([name, f]) => [name, fieldControl(`${m.name}.${name}`, name, f, v)] as const);
  for (const [, c] of controls) box.append(c.node);
  const error = el('p', { class: 'form-error', role: 'alert' });
  box.append(el('button', { type: 'submit', 'data-key': `send:${m.name}` }, free.length ? `Send ${m.name}` : m.name), error);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const msg: Record<string, unknown> = { ...fixed };
    for (const [name, c] of controls) {
      const r = c.read();
      if (!r.ok) {
        error.textContent = r.error;
        return;
      }
      if ('value' in r) msg[name] = r.value;
    }
    error.textContent = '';
    submit({ message: msg });
  });
  return form;
}

/** The schema of a simultaneous round's value (flow.round.value_type_ref, "reveal.fields.choice"). */
function roundField(spec: Spec): [string, FieldSchema] {
  const name = spec.flow?.round?.value_field ?? 'value';
  const [msg, , field] = (spec.flow?.round?.value_type_ref ?? '').split('.');
  const f = spec.messages.find((m) => m.name === msg)?.fields[field ?? name] ?? spec.messages.map((m) => m.fields[name]).find((x) => x !== undefined);
  return [name, f ?? (spec.choices ? { type: 'enum', values: spec.choices, required: true } : { type: 'text', required: true })];
}

function valueControls(v: DecisionView, submit: (a: DecisionAnswer) => void): HTMLElement {
  const [name, f] = roundField(v.spec);
  if (f.type === 'enum' || f.type === 'boolean')
    return choiceButtons(`your ${name}`, f.type === 'boolean' ? [true, false] : (f.values ?? []), (value) => submit({ value }));
  const c = fieldControl(`value.${name}`, name, { ...f, required: true }, v);
  const error = el('p', { class: 'form-error', role: 'alert' });
  const form = el('form', { class: 'value-form', novalidate: '' }, c.node, el('button', { type: 'submit', 'data-key': 'send:value' }, 'Choose'), error);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const r = c.read();
    if (!r.ok) error.textContent = r.error;
    else submit({ value: r.value });
  });
  return form;
}

/** The messages this side may send at a turn: every one in its direction but the opening join/ready. */
function sendable(spec: Spec, role: Role): MessageSpec[] {
  const opening = role === 'guest' ? 'join' : 'ready';
  const last = (m: MessageSpec) => (m.name === 'error' || m.name === 'end' ? 1 : 0);
  return spec.messages.filter((m) => (m.direction === 'both' || m.direction === wireDir(role)) && m.name !== opening).sort((a, b) => last(a) - last(b));
}

/** Every frame so far as text, without the machine material (hashes, nonces). */
function frameLog(v: StateView): HTMLElement {
  const list = el('ol', { class: 'frames', 'aria-label': 'Frames so far' });
  for (const { from, msg } of v.frames) {
    const dir = from === 'host' ? 'host_to_guest' : 'guest_to_host';
    const spec =
      v.spec.messages.find((m) => m.name === msg.action && (m.direction === 'both' || m.direction === dir)) ??
      v.spec.messages.find((m) => m.name === msg.action);
    const parts = Object.entries(msg)
      .filter(([k]) => k !== 'action' && !OPAQUE.has(spec?.fields[k]?.type ?? ''))
      .map(([k, x]) => `${k} ${typeof x === 'string' ? x : JSON.stringify(x)}`);
    list.append(
      el(
        'li',
        { class: from === v.role ? 'me' : 'peer' },
        el('strong', {}, from === v.role ? `you (${from})` : `peer (${from})`),
        ` ${String(msg.action)}${parts.length ? `: ${parts.join(', ')}` : ''}`,
      ),
    );
  }
  if (!v.frames.length) list.append(el('li', {}, 'Nothing yet.'));
  return el('div', { class: 'log' }, el('h3', {}, 'So far'), list);
}

/** Renders the decision into `root` (replacing its content); calls `submit` once per person's choice. */
export function renderDecision(root: HTMLElement, v: DecisionView, submit: (a: DecisionAnswer) => void): void {
  const carried = reset(root);
  const kit = boardFor(v.spec);
  const custom = kit && v.window.expects === 'message' && kit.decides(v.spec, v.role);
  const headingId = uid('heading');
  // Windows count from 0; people count from 1.
  const what =
    v.window.expects === 'value'
      ? `${v.window.match_key.charAt(0).toUpperCase()}${v.window.match_key.slice(1)} ${v.window.match_value + 1}, your choice`
      : 'Your move';
  // A chat has no moves, only lines to say: its heading is its name, and it says nothing of a time limit it does not have.
  const chat = custom && kit.title === 'Chat';
  const heading = el('h2', { id: headingId, tabindex: '-1' }, chat ? kit.title : `${kit?.title ?? v.spec.name}: ${what}`);
  const section = el('section', { class: 'aigenora-decision', 'aria-labelledby': headingId }, heading);
  const timer = countdown(v.window.deadline_at);
  if (!chat || v.window.deadline_at !== null) section.append(timer.node);
  if (v.refused) section.append(el('p', { class: 'refused', role: 'alert' }, `Your previous choice was refused: ${v.refused}`));
  const sent = el('p', { class: 'sent', role: 'status' });
  let done = false;
  // A chat goes on after each line; every other window takes one answer, then its controls are locked.
  const repeatable = chat;
  const once = (a: DecisionAnswer) => {
    if (done) return;
    if (!repeatable) {
      done = true;
      section.querySelectorAll<HTMLButtonElement | HTMLInputElement | HTMLTextAreaElement>('button, input, textarea').forEach((c) => (c.disabled = true));
      sent.textContent = `Sent: ${describe(a)}. Waiting for the session…`;
    }
    submit(a);
  };
  if (custom) kit.render(section, v, once);
  else {
    // A board this side does not move on (the referee's) is drawn above the form that answers.
    if (kit) {
      const board = el('div', { class: 'state' });
      kit.render(board, v);
      section.append(board);
    }
    const controls = el('div', { class: 'controls' });
    if (v.window.expects === 'value') controls.append(valueControls(v, once));
    else for (const m of sendable(v.spec, v.role)) controls.append(messageForm(m, v, once));
    section.append(controls);
    if (!kit) section.append(frameLog(v));
  }
  section.append(sent);
  root.append(section);
  settle(root, section, heading, carried, { stop: timer.stop, window: `${v.window.match_key}:${v.window.match_value}` });
}

/** The board or conversation so far, without a decision (for watching, and after the end). */
export function renderState(root: HTMLElement, v: Omit<DecisionView, 'window'>): void {
  const carried = reset(root);
  const kit = boardFor(v.spec);
  const headingId = uid('heading');
  const heading = el('h2', { id: headingId, tabindex: '-1' }, kit?.title ?? v.spec.name);
  const section = el('section', { class: 'aigenora-state', 'aria-labelledby': headingId }, heading);
  if (kit) kit.render(section, v);
  else section.append(frameLog(v));
  root.append(section);
  settle(root, section, heading, carried, { stop: () => {} });
}
