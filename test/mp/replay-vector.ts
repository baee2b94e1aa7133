/**
 * The reference's recorded Crazy Eights game (aigenora-mp-audit-vectors.json, case `game`) as secrets
 * and a driver for one side of our engine: the side's RSA key is in the vector; its card keys come from
 * its openings; nonces are the first 12 bytes of each blob and sealed entry; the Host's pads come from
 * opening its blob_As; the Guest's shuffle is `derived.id_b_to_id_a`; blinding values are the witnesses'
 * r. With them our engine must say exactly what the reference said.
 */
import type { Ot } from '../../ts/crypto/ot.js';
import type { Crypto } from '../../ts/crypto/backend.js';
import { fromHex } from '../../ts/crypto/encoding.js';
import type { HooksModule, MentalPokerHooks, Message, Role } from '../../ts/hooks/types.js';
import { instantiateHooks } from '../../ts/hooks/load.js';
import { createMpMode, type MpEffect, type MpEnd, type MpMode } from '../../ts/mp/mode.js';
import type { MpSecrets } from '../../ts/mp/secrets.js';
import crazyEights from '../../ts/protocols/crazy-eights/hooks.js';

export interface RsaVector {
  n: string;
  d: string;
  p: string;
  q: string;
  dmp1: string;
  dmq1: string;
  iqmp: string;
}

export interface GameVector {
  protocol_id_in_ot_context: string;
  options: Record<string, unknown>;
  session_id: string;
  host: { ed25519_seed: string; public_key: string; rsa: RsaVector };
  guest: { ed25519_seed: string; public_key: string; rsa: RsaVector };
  messages: { direction: 'host_to_guest' | 'guest_to_host'; message: Message }[];
  openings: Record<Role, { kind: string; label: string; token?: string; k?: string }[]>;
  witnesses: Record<Role, { ot_id: string; label: string; r: string }[]>;
  derived: { id_b_to_id_a: Record<string, string> };
  expect: {
    host_result: unknown;
    guest_result: unknown;
    transcript_hash: string;
    host_receipt_signature: string;
    guest_receipt_signature: string;
  };
}

const dirOf = (r: Role) => (r === 'host' ? 'host_to_guest' : 'guest_to_host');
const even = (hex: string) => fromHex(hex.length % 2 ? `0${hex}` : hex);
const wide = (hex: string) => fromHex(hex.padStart(512, '0'));

/** The messages `role` sent in the recorded game, in order (join / ready included). */
export function sentBy(game: GameVector, role: Role): Message[] {
  return game.messages.filter((m) => m.direction === dirOf(role)).map((m) => m.message);
}

export function secretsOf(crypto: Crypto & { ot: Ot }, game: GameVector, role: Role): MpSecrets {
  const setup = sentBy(game, role).find((m) => m.action === (role === 'host' ? 'mp_setup_a' : 'mp_setup_b'))!;
  const blobs = (setup['blobs'] as string[]).map((b) => fromHex(b));
  const sealed = new Map((setup['sealed_keys'] as string[]).map((s) => JSON.parse(s) as { label: string; c: string }).map((o) => [o.label, fromHex(o.c)]));
  const kind = role === 'host' ? 'k_inner' : 'k_outer';
  const prefix = role === 'host' ? 'h-' : 'g-';
  const keys = new Map(game.openings[role].filter((e) => e.kind === kind).map((e) => [e.label, fromHex(e.k!)]));
  const rs = new Map(game.witnesses[role].map((w) => [w.ot_id, wide(w.r)]));
  const rsa = game[role].rsa;
  const need = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`the vector has no ${what}`);
    return v;
  };
  return {
    rsaKey: async () =>
      crypto.ot.importKey({
        n: even(rsa.n),
        e: 65537,
        d: even(rsa.d),
        p: even(rsa.p),
        q: even(rsa.q),
        dp: even(rsa.dmp1),
        dq: even(rsa.dmq1),
        qi: even(rsa.iqmp),
      }),
    cardKey: (i) => need(keys.get(`${prefix}${i}`), `${kind} of ${prefix}${i}`),
    blobNonce: (i) => need(blobs[i], `blob ${i}`).slice(0, 12),
    pad: (i) => crypto.deck.openLayer(need(keys.get(`h-${i}`), `k_inner of h-${i}`), blobs[i]!).slice(2),
    sealNonce: (label) => need(sealed.get(label), `sealed ${label}`).slice(0, 12),
    shuffle: (n) => Array.from({ length: n }, (_, j) => Number(need(game.derived.id_b_to_id_a[String(j)], `id-A of id-B ${j}`))),
    blinding: (otId) => need(rs.get(otId), `r of ${otId}`),
  };
}

export interface SideRun {
  /** What our side sent, join / ready first (the driver's defaults). */
  sent: Message[];
  end: MpEnd | null;
  mode: MpMode;
  events: { name: string; data: Record<string, unknown> }[];
}

/** Runs our engine as `role` against the peer messages given (the recorded ones, or altered ones). */
export async function runSide(
  crypto: Crypto & { ot: Ot },
  game: GameVector,
  role: Role,
  peerMessages: readonly Message[],
  module: HooksModule = crazyEights as HooksModule,
): Promise<SideRun> {
  const peer: Role = role === 'host' ? 'guest' : 'host';
  const hooks = instantiateHooks(module as HooksModule<'mental_poker'>, {
    role,
    options: game.options,
    args: [],
    stateDir: '/nonexistent',
    decision: null,
    random: () => 0.5,
  }) as MentalPokerHooks;
  hooks.proto_init?.(game.options, role, [], '/nonexistent', null);
  const mode = createMpMode({
    role,
    crypto,
    hooks,
    secrets: secretsOf(crypto, game, role),
    otProtocolId: game.protocol_id_in_ot_context,
    sessionId: game.session_id,
    signer: fromHex(game[role].ed25519_seed),
    publicKey: game[role].public_key,
    peerPublicKey: game[peer].public_key,
  });
  const sent: Message[] = [role === 'host' ? { action: 'ready' } : { action: 'join' }];
  const events: SideRun['events'] = [];
  let end: MpEnd | null = null;
  const take = (effects: MpEffect[]) => {
    for (const e of effects) {
      if (e.kind === 'send') sent.push(e.msg);
      else if (e.kind === 'event') events.push({ name: e.name, data: e.data });
      else if (e.kind === 'end') end = e.end;
      else throw new Error('no decisions in a replay');
    }
  };
  take(await mode.step({ kind: 'start' }));
  // The peer's join / ready is the driver's; the mode starts after it.
  for (const msg of peerMessages.slice(1)) {
    if (end) break;
    take(await mode.step({ kind: 'message', msg }));
  }
  return { sent, end, mode, events };
}
