/**
 * The progress lines `aigenora host` and `aigenora join` print while a two-party session runs: what the
 * protocol's own narrator (HooksModule.narrator) says of each message, else what the spec declares of
 * it. Every line is made safe for a terminal here, whoever wrote it: peer text reaches these lines.
 */
import type { HooksModule, Message, Narration, Narrator, Role } from '../hooks/types.js';
import { flowMode, type FieldSchema, type Spec } from '../spec/types.js';

/** A narrated line is cut past this many characters: a whole chat line (2000 at most in human-chat) still fits. */
export const MAX_LINE = 2100;
/** The spec-driven fallback's lines are short: they list fields a person may not care for. */
export const MAX_GENERIC_LINE = 200;
const MAX_VALUE = 48;
/** Digests, keys and other opaque blobs show their first characters only. */
const OPAQUE: ReadonlySet<FieldSchema['type']> = new Set(['hash', 'nonce', 'signature', 'key', 'ciphertext', 'ot_blob', 'ticket']);
const OPAQUE_PREFIX = 8;
/** A realtime match without a narrator prints its tick this often (seconds of play), not every frame. */
const REALTIME_STATUS_SECONDS = 10;
/** Until rt_ready names the tick rate: the rate of the reference's realtime protocols. */
const DEFAULT_TICK_HZ = 10;

/**
 * What can drive or fool a terminal, escaped: control characters (ESC starts a terminal command; CR and
 * LF would let a peer forge a line of ours), line and paragraph separators, bidirectional overrides
 * (which reorder what is shown) and lone surrogates.
 */
const UNSAFE = /[\p{Cc}\p{Cs}\p{Zl}\p{Zp}\p{Bidi_Control}]/gu;
const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `text` as one terminal line of at most `max` characters (code points), cut with an ellipsis. */
export function terminalSafe(text: string, max = MAX_LINE): string {
  // Only a bounded prefix is looked at, so a megabyte of peer text costs no more than a line of it.
  const head = text.length > max * 2 + 2 ? text.slice(0, max * 2 + 2) : text;
  const escaped = head.replace(UNSAFE, (c) => NAMED[c] ?? `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`);
  const chars = Array.from(escaped);
  return chars.length > max || head !== text ? `${chars.slice(0, max - 1).join('')}…` : escaped;
}

/** A guest's join (rt_join in realtime) opens a session: a daemon host serves one after another through one callback. */
const opensSession = (msg: Message, from: Role) => from === 'guest' && (msg.action === 'join' || msg.action === 'rt_join');

const linesOf = (n: Narration): string[] => {
  if (typeof n === 'string') return [n];
  return Array.isArray(n) ? n.filter((l): l is string => typeof l === 'string') : [];
};

/**
 * The progress printer for one protocol followed from side `me`: the lines (possibly none) for each
 * message of the session, in the order the engine reports them. A narrator that throws, or a protocol
 * without one, gets the spec-driven lines instead; protocol-internal messages (`_…`) get none.
 */
export function progressLines(protocol: { spec: Spec; hooks: Pick<HooksModule, 'narrator'> }, me: Role): (from: Role, msg: Message) => string[] {
  const generic = () => genericNarrator(protocol.spec);
  const fresh = (): { narrate: Narrator; own: boolean } => {
    const make = protocol.hooks.narrator;
    if (typeof make === 'function') {
      try {
        const n: unknown = make.call(protocol.hooks, me);
        if (typeof n === 'function') return { narrate: n as Narrator, own: true };
      } catch {
        // A narrator is a nicety: a protocol whose narrator cannot start is shown the generic way.
      }
    }
    return { narrate: generic(), own: false };
  };
  let current: { narrate: Narrator; own: boolean } | undefined;
  let fallback: Narrator | undefined;
  return (from, msg) => {
    if (msg.action.startsWith('_')) return [];
    if (!current || opensSession(msg, from)) {
      current = fresh();
      fallback = undefined;
    }
    let said: Narration;
    let max = current.own ? MAX_LINE : MAX_GENERIC_LINE;
    try {
      said = current.narrate(msg, from);
    } catch {
      if (!current.own) return [];
      said = (fallback ??= generic())(msg, from);
      max = MAX_GENERIC_LINE;
    }
    return linesOf(said)
      .map((l) => terminalSafe(l, max))
      .filter((l) => l.length > 0);
  };
}

/** A value for a one-line listing: opaque blobs and long values shortened, text quoted. */
function valueText(schema: FieldSchema | undefined, v: unknown): string {
  const cut = (s: string, n: number) => (Array.from(s).length > n ? `${Array.from(s).slice(0, n).join('')}…` : s);
  if (typeof v === 'string') {
    if (schema && OPAQUE.has(schema.type)) return cut(v, OPAQUE_PREFIX);
    return schema?.type === 'text' ? JSON.stringify(cut(v, MAX_VALUE)) : cut(v, MAX_VALUE);
  }
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  if (Array.isArray(v)) return `[${v.length} item${v.length === 1 ? '' : 's'}]`;
  if (typeof v === 'object') return cut(JSON.stringify(v), MAX_VALUE);
  return '?';
}

/** `from action field=value …` over the fields the spec declares for the message, in its order. */
function fieldsLine(fields: Readonly<Record<string, FieldSchema>> | undefined, msg: Message, from: Role, skip: readonly string[] = []): string {
  const parts = [`${from} ${msg.action}`];
  for (const [name, schema] of Object.entries(fields ?? {})) {
    if (name === 'action' || skip.includes(name) || !(name in msg)) continue;
    parts.push(`${name}=${valueText(schema, msg[name])}`);
  }
  return parts.join(' ');
}

/**
 * The fallback narrator: each message's declared fields, one short line. The messages the engine runs
 * itself carry cryptography rather than moves, and some modes send many: mental poker's deck setup,
 * oblivious transfers and audit are left out (a draw becomes one line), a simultaneous round's commits
 * too, and a realtime match prints its rejections, its tick every few seconds and its end.
 */
export function genericNarrator(spec: Spec): Narrator {
  const fields = new Map(spec.messages.map((m) => [m.name, m.fields] as const));
  const mode = flowMode(spec);
  /** mental_poker: a card fetched once play began (the first play or pass) is a draw, not the deal. */
  let playing = false;
  let statusEvery = DEFAULT_TICK_HZ * REALTIME_STATUS_SECONDS;
  const line = (msg: Message, from: Role, skip?: readonly string[]) => fieldsLine(fields.get(msg.action), msg, from, skip);
  return (msg, from) => {
    if (mode === 'simultaneous_round' && msg.action === 'commit') return undefined;
    if (mode === 'mental_poker') {
      switch (msg.action) {
        case 'mp_setup_a':
        case 'mp_setup_b':
        case 'mp_ot_response':
        case 'mp_opening':
        case 'mp_witness':
          return undefined;
        case 'mp_ot_request':
          return playing ? `${from} draws a card` : undefined;
        case 'mp_play':
          playing = true;
          return line(msg, from, ['id_b', 'k_inner', 'k_outer']);
        case 'mp_pass':
          playing = true;
          return `${from} passes`;
        case 'mp_terminal_receipt':
          return `${from} signs the audit: ${String(msg['audit_status'])}`;
        default:
          return line(msg, from);
      }
    }
    if (mode === 'authoritative_realtime') {
      switch (msg.action) {
        case 'rt_join':
        case 'rt_command':
          return undefined;
        case 'rt_command_ack':
          return msg['status'] === 'rejected' ? line(msg, from, ['command_hash']) : undefined;
        case 'rt_ready': {
          const config = msg['config'] as Record<string, unknown> | undefined;
          const hz = config?.['tick_rate_hz'];
          if (typeof hz === 'number' && hz > 0) statusEvery = Math.max(1, Math.round(hz * REALTIME_STATUS_SECONDS));
          return `${from} rt_ready: the match starts${typeof hz === 'number' ? ` at ${hz} ticks a second` : ''}`;
        }
        case 'rt_frame': {
          const frame = msg['frame'] as { tick?: unknown; outcome?: unknown } | undefined;
          const tick = frame?.tick;
          if (typeof tick !== 'number') return undefined;
          if (typeof frame?.outcome === 'string' && frame.outcome !== 'none') return `tick ${tick}: the match is over, outcome ${frame.outcome}`;
          return tick % statusEvery === 0 ? `tick ${tick}` : undefined;
        }
        default:
          return line(msg, from);
      }
    }
    return line(msg, from, mode === 'simultaneous_round' && msg.action === 'reveal' ? ['nonce'] : []);
  };
}
