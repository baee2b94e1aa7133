/**
 * A recorded mental-poker game replayed from one side's point of view: the transcript that side built,
 * the AuditInput its audit reads, and the verdict the reference reaches (audit failure, the peer's
 * receipt refused, or a stop during play when a peer's card fails the crypto play check).
 *
 * For an offline verifier (a finished game's messages, a proof file) and for the reference's recorded
 * games. What needs a side's secrets or the game's hooks is not redone: the verifier's own OT
 * recoveries are taken as they happened, and the game rules of a peer's play (`rule_rejected`) are not
 * checked here.
 */
import { CryptoError } from '../crypto/errors.js';
import type { Deck } from '../crypto/deck.js';
import type { Ot, RsaPublicKey } from '../crypto/ot.js';
import { auditGame, type AuditCrypto, type AuditEvidence, type AuditInput, type AuditReason, type OtRecord } from './audit.js';
import { parseJsonExact, type JsonObject, type JsonValue } from './canonical.js';
import { MpError } from './errors.js';
import { hexToBigint, hexToBytes } from './numbers.js';
import {
  drawPayload,
  openingPayload,
  otPayload,
  passPayload,
  playPayload,
  setupPayload,
  Transcript,
  verifyPeerReceipt,
  witnessPayloads,
  type TranscriptCrypto,
} from './transcript.js';
import type { OpeningEntry, Role, Witness } from './types.js';

export type Direction = 'host_to_guest' | 'guest_to_host';

/** One message as it went over the wire, in the order sent. */
export interface WireMessage {
  readonly direction: Direction;
  readonly message: { readonly [key: string]: unknown };
}

export interface ReplayOptions {
  readonly verifier: Role;
  /** The OT context's protocol id: the spec's name. */
  readonly protocolId: string;
  readonly sessionId: string;
  readonly universe: readonly (readonly [number, number])[];
  /** The game's initial deal (proto_mp_initial_deal): cards to each side, the Guest's first from the stock. */
  readonly deal: { readonly host: number; readonly guest: number };
  /** The peer's Ed25519 public key from the session handshake: its terminal receipt must be signed by it. */
  readonly peerPublicKey: Uint8Array;
}

/** The verdict in the shape of the reference's vectors. */
export interface ReplayVerdict {
  readonly auditPassed: boolean;
  /** The failed audit step, or `{reason: "peer_receipt_signature_invalid"}`; null otherwise. */
  readonly auditFailure: { readonly reason: AuditReason; readonly evidence?: AuditEvidence | null } | null;
  /** Why the verifier stopped before the audit (the reference raises), e.g. `peer play rejected: card_face_mismatch`. */
  readonly raised: string | null;
}

export interface Replay {
  readonly verdict: ReplayVerdict;
  /** The verifier's transcript as far as it got. */
  readonly transcript: Transcript;
  /** What the audit read, when the game reached it. */
  readonly input: AuditInput | null;
}

export type ReplayCrypto = TranscriptCrypto &
  AuditCrypto & { readonly deck: Pick<Deck, 'validatePlay' | 'openLayer' | 'encodeCard'>; readonly ot: Pick<Ot, 'decodeRsaPub'> & AuditCrypto['ot'] };

/** The reference raised: the replay stops here with this text. */
class Stop extends Error {}

const roleOf = (d: Direction): Role => (d === 'host_to_guest' ? 'host' : 'guest');

function str(v: unknown, what: string): string {
  if (typeof v !== 'string') throw new Stop(`${what} is not a string`);
  return v;
}

function obj(v: JsonValue, what: string): JsonObject {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Stop(`${what} is not an object`);
  return v as JsonObject;
}

function parse(text: unknown, what: string): JsonValue {
  try {
    return parseJsonExact(str(text, what));
  } catch (e) {
    if (e instanceof CryptoError) throw new Stop(`${what}: ${e.message}`);
    throw e;
  }
}

function list(v: unknown, what: string): readonly unknown[] {
  if (!Array.isArray(v)) throw new Stop(`${what} is not a list`);
  return v;
}

interface Side {
  rsaPub: RsaPublicKey;
  blobs: Uint8Array[];
  sealed: Map<string, string>;
}

function setup(c: ReplayCrypto, t: Transcript, type: 'mp_setup_a' | 'mp_setup_b', m: WireMessage['message'], deckSize: number | null): Side {
  const prefix = type === 'mp_setup_a' ? 'h-' : 'g-';
  const rsaPubObj = obj(parse(m['rsa_pub'], `${type} rsa_pub`), `${type} rsa_pub`);
  let rsaPub: RsaPublicKey;
  try {
    rsaPub = c.ot.decodeRsaPub(rsaPubObj);
  } catch (e) {
    if (e instanceof CryptoError) throw new Stop(`${type}: ${e.message}`);
    throw e;
  }
  const blobsHex = list(m['blobs'], `${type} blobs`).map((b, i) => str(b, `${type} blobs[${i}]`));
  const sealedKeys = list(m['sealed_keys'], `${type} sealed_keys`);
  if (sealedKeys.length !== blobsHex.length || (deckSize !== null && blobsHex.length !== deckSize)) throw new Stop(`${type}: length mismatch`);
  const sealed = new Map<string, string>();
  const blobs = blobsHex.map((hex, i) => {
    const o = obj(parse(sealedKeys[i], `${type} sealed_keys[${i}]`), `${type} sealed_keys[${i}]`);
    if (o['label'] !== `${prefix}${i}`) throw new Stop(`${type}: sealed_keys[${i}] label mismatch`);
    sealed.set(`${prefix}${i}`, str(o['c'], `${type} sealed_keys[${i}].c`));
    const b = hexToBytes(hex);
    if (!b) throw new Stop(`${type}: blobs[${i}] is not hex`);
    return b;
  });
  t.append(type, setupPayload(rsaPubObj, blobsHex, Object.fromEntries(sealed)));
  return { rsaPub, blobs, sealed };
}

function wireInt(v: unknown, what: string): bigint {
  try {
    return hexToBigint(str(v, what), what);
  } catch (e) {
    if (e instanceof MpError) throw new Stop(e.detail);
    throw e;
  }
}

function openingEntry(v: JsonValue, i: number): OpeningEntry {
  const o = typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : null;
  if (!o || typeof o['kind'] !== 'string' || typeof o['label'] !== 'string') throw new MpError('MP_AUDIT_INPUT', `opening entry ${i} has no kind and label`);
  const e: { kind: string; label: string; token?: string; k?: string } = { kind: o['kind'], label: o['label'] };
  if (typeof o['token'] === 'string') e.token = o['token'];
  if (typeof o['k'] === 'string') e.k = o['k'];
  return e;
}

/** Replays `messages` as `opts.verifier` saw them; see the module comment for what is not redone. */
export function replayGame(c: ReplayCrypto, messages: readonly WireMessage[], opts: ReplayOptions): Replay {
  const t = new Transcript(c);
  const own = opts.verifier;
  const peer: Role = own === 'host' ? 'guest' : 'host';
  let host: Side | null = null;
  let guest: Side | null = null;
  let ids: string[] = [];
  const stock = new Set<string>();
  const hands = { host: new Set<string>(), guest: new Set<string>() };
  const played = new Set<string>();
  const deals: { guest: string[]; host: string[] } = { guest: [], host: [] };
  const otRecords: OtRecord[] = [];
  const otIdToIdB = new Map<string, string>();
  const ownOtOrder: string[] = [];
  let pending: { who: Role; id: string; z: bigint; idB: string; draw: boolean } | null = null;
  const openings: Partial<Record<Role, JsonValue[]>> = {};
  const witnesses: Partial<Record<Role, Witness[]>> = {};
  let input: AuditInput | null = null;
  const done = (verdict: ReplayVerdict): Replay => ({ verdict, transcript: t, input });
  const raised = (why: string) => done({ auditPassed: false, auditFailure: null, raised: why });

  try {
    for (const { direction, message: m } of messages) {
      const from = roleOf(direction);
      const action = m['action'];
      if (action === 'join' || action === 'ready') continue;
      if (action === 'mp_setup_a') {
        host = setup(c, t, 'mp_setup_a', m, null);
        ids = host.blobs.map((_, i) => String(i));
      } else if (action === 'mp_setup_b') {
        guest = setup(c, t, 'mp_setup_b', m, ids.length);
        if (opts.deal.guest + opts.deal.host > ids.length) throw new Stop('deal plan asks for more cards than the deck');
        for (const id of ids) stock.add(id);
        deals.guest = ids.slice(0, opts.deal.guest);
        deals.host = ids.slice(opts.deal.guest, opts.deal.guest + opts.deal.host);
      } else if (action === 'mp_ot_request') {
        if (pending) throw new Stop('an OT request before the response to the previous one');
        const id = str(m['id'], 'mp_ot_request id');
        const z = wireInt(m['z'], 'mp_ot_request z');
        let idB: string | undefined;
        let draw = false;
        if (deals.guest.length > 0) {
          if (from !== 'guest') throw new Stop(`a ${from} OT request during the Guest's deal`);
          idB = deals.guest.shift();
        } else if (deals.host.length > 0) {
          if (from !== 'host') throw new Stop(`a ${from} OT request during the Host's deal`);
          idB = deals.host.shift();
        } else {
          idB = ids.find((x) => stock.has(x));
          draw = true;
          if (idB === undefined) throw new Stop('draw requested but stock is empty');
        }
        pending = { who: from, id, z, idB: idB!, draw };
        if (from === own) ownOtOrder.push(id);
      } else if (action === 'mp_ot_response') {
        if (!pending || from === pending.who) throw new Stop('an OT response with no request');
        const y = wireInt(m['y'], 'mp_ot_response y');
        const { who, id, z, idB, draw } = pending;
        pending = null;
        otRecords.push({ otId: id, z });
        t.append('mp_ot', otPayload(id, z, y));
        if (draw) t.append('mp_draw', drawPayload(who, id));
        otIdToIdB.set(id, idB);
        stock.delete(idB);
        hands[who].add(idB);
      } else if (action === 'mp_play') {
        const idB = str(m['id_b'], 'mp_play id_b');
        const [rank, suit] = [m['rank'], m['suit']];
        if (!Number.isInteger(rank) || !Number.isInteger(suit)) throw new Stop('mp_play rank and suit must be integers');
        const callSuit = m['call_suit'];
        if (callSuit !== undefined && callSuit !== null && !Number.isInteger(callSuit)) throw new Stop('mp_play call_suit must be an integer');
        if (from === peer) {
          let declared: Uint8Array;
          try {
            declared = c.deck.encodeCard(rank as number, suit as number);
          } catch (e) {
            if (e instanceof CryptoError) throw new Stop(e.message);
            throw e;
          }
          const [kInner, kOuter] = [hexToBytes(str(m['k_inner'], 'k_inner')), hexToBytes(str(m['k_outer'], 'k_outer'))];
          if (!kInner || !kOuter) throw new Stop('mp_play keys are not hex');
          if (!guest || !ids.includes(idB)) throw new Stop(`KeyError: no blob_B for id_b ${JSON.stringify(idB)}`);
          let v;
          try {
            v = c.deck.validatePlay({
              hand: [...hands[peer]],
              played: [...played],
              idB,
              declaredCard: declared,
              kInner,
              kOuter,
              blobB: guest.blobs[Number(idB)]!,
            });
          } catch (e) {
            if (e instanceof CryptoError) throw new Stop(e.message);
            throw e;
          }
          if (!v.ok) return raised(`peer play rejected: ${v.reason}`);
        } else if (!hands[from].has(idB) || played.has(idB)) {
          throw new Stop(`deck.play failed for ${from} ${idB}`);
        }
        hands[from].delete(idB);
        played.add(idB);
        t.append('mp_play', playPayload(from, idB, rank as number, suit as number, callSuit as number | null | undefined));
      } else if (action === 'mp_pass') {
        t.append('mp_pass', passPayload(from));
      } else if (action === 'mp_opening') {
        openings[from] = list(m['openings'], 'mp_opening openings').map((s, i) => parse(s, `opening ${i}`));
        if (openings.host && openings.guest) {
          t.append('mp_opening', openingPayload('host', openings.host));
          t.append('mp_opening', openingPayload('guest', openings.guest));
        }
      } else if (action === 'mp_witness') {
        witnesses[from] = list(m['witnesses'], 'mp_witness witnesses').map((s, i) => {
          const o = obj(parse(s, `witness ${i}`), `witness ${i}`);
          return { otId: str(o['ot_id'], `witness ${i} ot_id`), label: str(o['label'], `witness ${i} label`), r: wireInt(o['r'], `witness ${i} r`) };
        });
        if (!(witnesses.host && witnesses.guest)) continue;
        // The verifier's own witnesses in the order it made its OTs, as it holds them.
        const rank = (w: Witness) => {
          const i = ownOtOrder.indexOf(w.otId);
          return i < 0 ? Infinity : i;
        };
        const mine = [...witnesses[own]!].sort((a, b) => rank(a) - rank(b));
        const [hw, gw] = witnessPayloads([...mine, ...witnesses[peer]!]);
        t.append('mp_witness', hw);
        t.append('mp_witness', gw);
        if (!host || !guest || !openings.host || !openings.guest) throw new Stop('witnesses before the setups and openings');
        input = {
          verifier: own,
          protocolId: opts.protocolId,
          sessionId: opts.sessionId,
          universe: opts.universe,
          host,
          guest,
          openings: { host: openings.host.map(openingEntry), guest: openings.guest.map(openingEntry) },
          witnesses: own === 'host' ? { host: mine, guest: witnesses.guest } : { host: witnesses.host, guest: mine },
          otRecords,
          otIdToIdB,
        };
        const result = auditGame(c, input);
        if (!result.ok) return done({ auditPassed: false, auditFailure: { reason: result.reason, evidence: result.evidence }, raised: null });
      } else if (action === 'mp_terminal_receipt') {
        if (from === own) continue;
        if (!input) throw new Stop('a terminal receipt before the audit');
        const ok = verifyPeerReceipt(t, m, opts.peerPublicKey);
        return done({ auditPassed: ok, auditFailure: ok ? null : { reason: 'peer_receipt_signature_invalid' }, raised: null });
      } else {
        throw new Stop(`unexpected message: ${JSON.stringify(action)}`);
      }
    }
  } catch (e) {
    if (e instanceof Stop) return raised(e.message);
    if (e instanceof MpError) return raised(e.message);
    throw e;
  }
  return raised("the game ended before the peer's terminal receipt");
}
