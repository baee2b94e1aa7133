/**
 * What a decision window asks for, drawn from the session's spec.json: the page's controls (`session
 * web`), the line `host` and `join` print when a window opens, and the allowed values `session decide`
 * names when the engine refuses a decision. One derivation, so that all three offer the same choices.
 */
import type { Window } from '../engine/decision-window.js';
import type { FieldSchema, MessageSpec, Spec } from '../spec/types.js';
import { terminalSafe } from './progress.js';

/** How the page asks for a window's decision, derived from the session's spec.json. */
export interface Control {
  expects: 'value' | 'message';
  /** value windows: the message field the value fills, and its choices when the spec gives an enum. */
  field?: string;
  message?: string;
  choices?: unknown[];
  input?: { type: 'integer' | 'text'; min?: number; max?: number };
  /** message windows: one template per message this side may send. */
  templates?: { action: string; text: string }[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const sendsAs = (m: MessageSpec, role: string) => m.direction === 'both' || m.direction === `${role}_to_${role === 'host' ? 'guest' : 'host'}`;

/**
 * simultaneous_round: the value is `flow.round.value_field` of the message `flow.round.value_type_ref`
 * names (e.g. "reveal.fields.choice"), the one each round sends; an enum there gives the choices.
 * Other value windows (mental_poker's action_seq) get a free input.
 */
export function controlFor(spec: Spec | undefined, role: string, w: Pick<Window, 'expects' | 'match_key'>): Control {
  if (w.expects === 'message') return { expects: 'message', templates: spec ? templates(spec, role) : [] };
  const round = spec?.flow?.round;
  if (!spec || !round || w.match_key !== 'round') return { expects: 'value', input: { type: 'text' } };
  const [msgName, , refField] = (round.value_type_ref ?? '').split('.');
  const field = round.value_field;
  const msgs = Array.isArray(spec.messages) ? spec.messages : [];
  const msg = msgs.find(
    (m) => m.name === (msgName || 'reveal') && sendsAs(m, role) && isObject(m.fields) && isObject(m.fields[refField ?? field] ?? m.fields[field]),
  );
  const schema = msg ? (msg.fields[refField ?? field] ?? msg.fields[field]) : undefined;
  const base = { expects: 'value' as const, field, ...(msg && { message: msg.name }) };
  if (schema?.type === 'enum' && Array.isArray(schema.values) && schema.values.length) return { ...base, choices: schema.values };
  if (schema?.type === 'boolean') return { ...base, choices: [true, false] };
  if (schema?.type === 'integer')
    return {
      ...base,
      input: { type: 'integer', ...(typeof schema.min === 'number' && { min: schema.min }), ...(typeof schema.max === 'number' && { max: schema.max }) },
    };
  return { ...base, input: { type: 'text' } };
}

function placeholder(s: FieldSchema): unknown {
  switch (s.type) {
    case 'enum':
      return Array.isArray(s.values) && s.values.length ? s.values[0] : '';
    case 'integer':
      return typeof s.min === 'number' ? s.min : 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'json':
      return {};
    default:
      return '';
  }
}

/**
 * The messages this side may send as a move, the ones the flow's phases after the handshake name first
 * (join and ready are the engine's), each as a JSON template with its required fields.
 */
function templates(spec: Spec, role: string): { action: string; text: string }[] {
  const msgs = (Array.isArray(spec.messages) ? spec.messages : []).filter(
    (m) => isObject(m) && typeof m.name === 'string' && sendsAs(m, role) && m.name !== 'join' && m.name !== 'ready',
  );
  const inFlow: string[] = [];
  for (const p of spec.flow?.phases ?? []) if (p.phase !== 'join') for (const x of p.exchange ?? []) if (!inFlow.includes(x.message)) inFlow.push(x.message);
  const rank = (name: string) => (inFlow.includes(name) ? inFlow.indexOf(name) : inFlow.length);
  return msgs
    .sort((a, b) => rank(a.name) - rank(b.name))
    .map((m) => {
      const body: Record<string, unknown> = { action: m.name };
      for (const [k, s] of Object.entries(isObject(m.fields) ? m.fields : {})) if (k !== 'action' && s.required === true) body[k] = placeholder(s);
      return { action: m.name, text: JSON.stringify(body, null, 2) };
    });
}

// ---- the same, as text for a terminal ------------------------------------------------------------

/** An enum longer than this is listed by its first values and its count: a line stays a line. */
const MAX_LISTED = 12;

const valueText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** What the window accepts, in words: "choice, one of: rock, paper, scissors", "a message: guess or end". */
export function allowedText(c: Control): string {
  if (c.expects === 'message') {
    const names = (c.templates ?? []).map((t) => t.action);
    return names.length
      ? `a whole message: ${names.slice(0, MAX_LISTED).join(' or ')}${names.length > MAX_LISTED ? ` (${names.length} in all)` : ''}`
      : 'a whole message';
  }
  const what = c.message && c.field ? `${c.message}.${c.field}` : (c.field ?? 'a value');
  if (c.choices?.length) {
    const listed = c.choices.slice(0, MAX_LISTED).map(valueText).join(', ');
    return `${what}, one of: ${listed}${c.choices.length > MAX_LISTED ? `, … (${c.choices.length} in all)` : ''}`;
  }
  if (c.input?.type === 'integer') {
    const { min, max } = c.input;
    return `${what}, an integer${min !== undefined && max !== undefined ? ` from ${min} to ${max}` : min !== undefined ? ` of at least ${min}` : max !== undefined ? ` of at most ${max}` : ''}`;
  }
  return `${what} (JSON, or taken as text)`;
}

/** `s` as one shell word: left bare when it is plainly safe, else single-quoted. */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The command that answers the window, with a placeholder (value windows) or a template (message windows) to edit. */
export function decideCommand(dir: string, c: Control): string {
  const base = `aigenora session decide ${shellWord(dir)}`;
  if (c.expects === 'message') {
    const first = c.templates?.[0];
    return `${base} --message ${shellWord(first ? JSON.stringify(JSON.parse(first.text)) : '{"action":"…"}')}`;
  }
  return `${base} --value ${c.choices?.length ? `<${c.field ?? 'value'}>` : `<${c.input?.type === 'integer' ? 'integer' : (c.field ?? 'value')}>`}`;
}

/**
 * The one line a running `host` or `join` prints when a window opens for its person: what is asked,
 * what is allowed, until when, and the command that answers it. Undefined for a hybrid window that
 * closes as it opens (no min_think): nobody could answer it in time.
 */
export function awaitedLine(spec: Spec | undefined, role: string, w: Window, dir: string, now = Date.now()): string | undefined {
  const opened = Date.parse(w.opened_at);
  const closes = Date.parse(w.deadline_at ?? w.release_at);
  if (!(closes > opened)) return undefined;
  const c = controlFor(spec, role, w);
  const left = Math.max(0, Math.round((closes - now) / 1000));
  const until = w.deadline_at
    ? `deadline ${w.deadline_at} (${left} s), then the session ends`
    : `until ${w.release_at} (${left} s), then the hooks' move is played`;
  return terminalSafe(`decision awaited: ${w.match_key} ${w.match_value}, ${allowedText(c)}; ${until}; answer: ${decideCommand(dir, c)}`);
}
