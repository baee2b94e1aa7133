/**
 * Two mental_poker modes wired to each other in memory: every message one side sends is fed to the
 * other, in order, whenever that side waits for one; a `decide` is answered by `decide` (null: the
 * hooks' own choice). A side may alter what it sends (`tamper`), to play a cheating peer.
 */
import type { Crypto } from '../../ts/crypto/backend.js';
import type { Ot } from '../../ts/crypto/ot.js';
import { toHex } from '../../ts/crypto/encoding.js';
import { instantiateHooks } from '../../ts/hooks/load.js';
import type { HooksModule, MentalPokerHooks, Message, Role } from '../../ts/hooks/types.js';
import { createMpMode, type MpEffect, type MpEnd, type MpMode } from '../../ts/mp/mode.js';
import type { MpSecrets } from '../../ts/mp/secrets.js';

export interface SideSetup {
  secrets: MpSecrets;
  seed: Uint8Array;
  /** Alters (or drops: null; or multiplies: an array) what this side sends; `n` counts its messages from 0. */
  tamper?: (msg: Message, n: number) => Message | Message[] | null;
  /** Answers a decision window; undefined: the hooks' own choice. */
  decide?: (seq: number, legal: unknown[]) => unknown;
  hooks?: MentalPokerHooks;
  decisions?: boolean;
  /** Wraps this side's mode (a cheat that rewrites what goes in and out). */
  wrap?: (mode: MpMode) => MpMode;
}

export interface PairRun {
  ends: Record<Role, MpEnd | null>;
  modes: Record<Role, MpMode>;
  /** Every message as it went over the wire (after tampering). */
  wire: { from: Role; msg: Message }[];
  events: Record<Role, { name: string; data: Record<string, unknown> }[]>;
  sent: Record<Role, Message[]>;
}

export async function runPair(opts: {
  crypto: Crypto & { ot: Ot };
  module: HooksModule;
  options: Record<string, unknown>;
  otProtocolId: string;
  sessionId: string;
  host: SideSetup;
  guest: SideSetup;
}): Promise<PairRun> {
  const { crypto } = opts;
  const pub = (s: SideSetup) => toHex(crypto.ed25519PublicKey(s.seed));
  const make = (role: Role): MpMode => {
    const side = opts[role];
    const peer = opts[role === 'host' ? 'guest' : 'host'];
    const hooks =
      side.hooks ??
      (instantiateHooks(opts.module as HooksModule<'mental_poker'>, {
        role,
        options: opts.options,
        args: [],
        stateDir: '/nonexistent',
        decision: null,
        random: () => 0.5,
      }) as MentalPokerHooks);
    hooks.proto_init?.(opts.options, role, [], '/nonexistent', null);
    const mode = createMpMode({
      role,
      crypto,
      hooks,
      secrets: side.secrets,
      otProtocolId: opts.otProtocolId,
      sessionId: opts.sessionId,
      signer: side.seed,
      publicKey: pub(side),
      peerPublicKey: pub(peer),
      decisions: side.decisions ?? false,
    });
    return side.wrap ? side.wrap(mode) : mode;
  };
  const modes: Record<Role, MpMode> = { host: make('host'), guest: make('guest') };
  const inbox: Record<Role, Message[]> = { host: [], guest: [] };
  const waiting: Record<Role, 'message' | 'decision' | null> = { host: null, guest: null };
  const pendingDecision: Record<Role, { seq: number; legal: unknown[] } | null> = { host: null, guest: null };
  const ends: Record<Role, MpEnd | null> = { host: null, guest: null };
  const wire: PairRun['wire'] = [];
  const events: PairRun['events'] = { host: [], guest: [] };
  const sent: PairRun['sent'] = { host: [], guest: [] };
  const count: Record<Role, number> = { host: 0, guest: 0 };

  const apply = (role: Role, effects: MpEffect[]) => {
    const peer: Role = role === 'host' ? 'guest' : 'host';
    waiting[role] = 'message';
    for (const e of effects) {
      if (e.kind === 'send') {
        const t = opts[role].tamper ? opts[role].tamper!(e.msg, count[role]++) : e.msg;
        const msgs = t === null ? [] : Array.isArray(t) ? t : [t];
        for (const m of msgs) {
          sent[role].push(m);
          wire.push({ from: role, msg: m });
          inbox[peer].push(m);
        }
      } else if (e.kind === 'event') events[role].push({ name: e.name, data: e.data });
      else if (e.kind === 'decide') {
        waiting[role] = 'decision';
        pendingDecision[role] = { seq: e.value, legal: e.legal };
      } else {
        ends[role] = e.end;
        waiting[role] = null;
      }
    }
  };
  apply('host', await modes.host.step({ kind: 'start' }));
  apply('guest', await modes.guest.step({ kind: 'start' }));
  for (let guard = 0; guard < 100_000; guard++) {
    let progressed = false;
    for (const role of ['host', 'guest'] as const) {
      if (waiting[role] === 'decision') {
        const d = pendingDecision[role]!;
        apply(role, await modes[role].step({ kind: 'decision', value: opts[role].decide?.(d.seq, d.legal) ?? null }));
        progressed = true;
      } else if (waiting[role] === 'message' && inbox[role].length) {
        apply(role, await modes[role].step({ kind: 'message', msg: inbox[role].shift()! }));
        progressed = true;
      }
    }
    if (!progressed) break;
  }
  return { ends, modes, wire, events, sent };
}
