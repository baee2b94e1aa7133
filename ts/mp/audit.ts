/**
 * The mental-poker post-game audit, as pure functions over what both sides disclosed (NOTES A16):
 * the four checks of the reference's proto/mental_poker.py with its exact `reason`s and `evidence`,
 * and `auditGame`, the verifier's whole audit in the reference's order (proto/mp_engine.py `audit`).
 *
 * A failed check is a result, never an exception. An exception (MpError MP_AUDIT_INPUT) means the
 * material is such that the reference itself raises instead of reaching a verdict (hex that does not
 * parse, a k_inner never disclosed, a card that does not open after its keys were verified); the audit
 * has not passed. Crypto comes from a backend's `deck` and `ot`.
 */
import { CryptoError } from '../crypto/errors.js';
import type { Deck } from '../crypto/deck.js';
import { toHex } from '../crypto/encoding.js';
import {
  bigintToFixed,
  PAYLOAD_K_INNER,
  PAYLOAD_K_OUTER,
  ROLE_GUEST,
  ROLE_HOST,
  type Ot,
  type PayloadType,
  type RsaPublicKey,
  type SenderRole,
} from '../crypto/ot.js';
import { compareCodePoints } from '../crypto/unicode.js';
import { MpError } from './errors.js';
import { bigintToBytes, bytesToBigint, hexToBigint, hexToBytes, pyRepr, pyReprList } from './numbers.js';
import type { OpeningEntry, Role, Witness } from './types.js';

/** Every `reason` an audit reports, plus the receipt's, as the reference spells them. */
export const AUDIT_REASONS = [
  'deck_size_mismatch',
  'deck_universe_mismatch',
  'keyset_mismatch',
  'forged_token',
  'sealed_payload_poisoned',
  'payload_mismatch',
  'derive_id_map_failed',
  'duplicate_transcript_ot_id',
  'duplicate_witness_ot_id',
  'witness_transcript_mismatch',
  'bad_witness',
  'label_not_in_map',
  'peeked_non_hand',
  'ot_snapshot_missing',
  'peer_receipt_signature_invalid',
] as const;
export type AuditReason = (typeof AUDIT_REASONS)[number];

/** The reference's evidence objects: ids and labels, counts, sorted lists of labels / ot_ids / hex cards. */
export type AuditEvidence = { readonly [key: string]: string | number | readonly string[] };

/** The verdict of an audit step: `reason` and `evidence` exactly as the reference reports them (evidence may be null). */
export type AuditResult =
  | { readonly ok: true; readonly reason: null; readonly evidence: null }
  | { readonly ok: false; readonly reason: AuditReason; readonly evidence: AuditEvidence | null };

/** What the audit needs of a crypto backend (any `Crypto` with `ot` is one). */
export interface AuditCrypto {
  readonly deck: Pick<Deck, 'openLayer' | 'encodeCard'>;
  readonly ot: Pick<Ot, 'context' | 'checkToken' | 'openSealed' | 'checkWitness'>;
}

/** One Sender's OT table as the context binds it: its public key and the context fields other than the label. */
export interface OtTable {
  readonly pub: RsaPublicKey;
  /** The spec's name (the reference's quirk), not its protocol_id hash. */
  readonly protocolId: string;
  readonly sessionId: string;
  readonly senderRole: SenderRole;
  readonly payloadType: PayloadType;
}

const PASS: AuditResult = { ok: true, reason: null, evidence: null };
const fail = (reason: AuditReason, evidence: AuditEvidence | null = null): AuditResult => ({ ok: false, reason, evidence });

const sortedUnique = (xs: Iterable<string>) => [...new Set(xs)].sort(compareCodePoints);
const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>) => a.size === b.size && [...a].every((x) => b.has(x));

function context(c: AuditCrypto, t: OtTable, label: string): Uint8Array {
  try {
    return c.ot.context({ protocolId: t.protocolId, sessionId: t.sessionId, senderRole: t.senderRole, payloadType: t.payloadType, label });
  } catch (e) {
    if (e instanceof CryptoError) throw new MpError('MP_AUDIT_INPUT', `label ${pyRepr(label)}: ${e.message}`);
    throw e;
  }
}

/**
 * The full-deck check: every card face reconstructed from the openings (2 bytes each) against the
 * deck's universe. deck_size_mismatch `{actual, expected}` when the counts differ (duplicates counted),
 * else deck_universe_mismatch `{missing, extra}` (sorted hex cards) when the sets differ.
 */
export function auditFullDeck(cards: readonly Uint8Array[], expectedCards: readonly Uint8Array[]): AuditResult {
  const expected = new Set(expectedCards.map(toHex));
  if (cards.length !== expected.size) return fail('deck_size_mismatch', { actual: cards.length, expected: expected.size });
  const got = new Set(cards.map(toHex));
  if (!sameSet(got, expected)) {
    // Sorting hex strings orders the bytes they spell.
    return fail('deck_universe_mismatch', {
      missing: [...expected].filter((x) => !got.has(x)).sort(),
      extra: [...got].filter((x) => !expected.has(x)).sort(),
    });
  }
  return PASS;
}

/**
 * The sealed-table check of one Sender (attack #15 of the reference's design): the disclosed tokens,
 * the sealed table and the disclosed payloads must cover the same labels (keyset_mismatch, sorted
 * lists); then for each label in the order `tokens` lists them: 1 ≤ token < n and token^e ≡ FDH
 * (forged_token), the sealed entry opens under the token's key (sealed_payload_poisoned: also for hex
 * that does not parse or is too short), and gives the disclosed payload (payload_mismatch).
 */
export function auditSealedPayload(
  c: AuditCrypto,
  tokens: ReadonlyMap<string, bigint>,
  sealed: ReadonlyMap<string, string>,
  expectedPayloads: ReadonlyMap<string, Uint8Array>,
  table: OtTable,
): AuditResult {
  const [t, s, p] = [new Set(tokens.keys()), new Set(sealed.keys()), new Set(expectedPayloads.keys())];
  if (!sameSet(t, s) || !sameSet(t, p)) {
    return fail('keyset_mismatch', { tokens: sortedUnique(t), sealed: sortedUnique(s), expected: sortedUnique(p) });
  }
  const n = bytesToBigint(table.pub.n);
  for (const [label, token] of tokens) {
    // The range is checked before the label is encoded, as in the reference.
    if (token < 1n || token >= n) return fail('forged_token', { label });
    const ctx = context(c, table, label);
    if (!c.ot.checkToken(table.pub.n, ctx, bigintToBytes(token))) return fail('forged_token', { label });
    const box = hexToBytes(sealed.get(label)!);
    let payload: Uint8Array;
    try {
      if (!box) throw new CryptoError('AEAD_OPEN_FAILED', 'sealed entry is not hex');
      payload = c.ot.openSealed(bigintToFixed(token, table.pub.n.length), ctx, box);
    } catch (e) {
      if (e instanceof CryptoError) return fail('sealed_payload_poisoned', { label });
      throw e;
    }
    if (toHex(payload) !== toHex(expectedPayloads.get(label)!)) return fail('payload_mismatch', { label });
  }
  return PASS;
}

/** The id-B → id-A map derived from the Guest's k_outer, or the reference's AuditError text. */
export type IdMapResult = { readonly ok: true; readonly map: ReadonlyMap<string, string> } | { readonly ok: false; readonly detail: string };

/**
 * Derives id-B → id-A by opening every blob_B with its disclosed k_outer and finding the blob_A inside
 * among the Host's (never trusting a map a player sends). Refused, with the reference's message: a
 * blob_A repeated in the Host's table, a missing k_outer, a blob_B that does not open, a blob_A not in
 * the Host's table, two id-Bs on one id-A, an id-A left uncovered. A key that is not 32 bytes or a
 * blob too short to open throws MP_AUDIT_INPUT, where the reference raises.
 */
export function deriveIdMap(
  c: AuditCrypto,
  kOuterByIdB: ReadonlyMap<string, Uint8Array>,
  blobBByIdB: ReadonlyMap<string, Uint8Array>,
  blobAByIdA: ReadonlyMap<string, Uint8Array>,
): IdMapResult {
  const idAByBlobA = new Map<string, string>();
  for (const [idA, blobA] of blobAByIdA) {
    const key = toHex(blobA);
    if (idAByBlobA.has(key)) return { ok: false, detail: `duplicate blob_A in Host transcript (id_a ${pyRepr(idA)})` };
    idAByBlobA.set(key, idA);
  }
  const map = new Map<string, string>();
  const used = new Set<string>();
  for (const [idB, blobB] of blobBByIdB) {
    const k = kOuterByIdB.get(idB);
    if (k === undefined) return { ok: false, detail: `missing k_outer for id_b ${pyRepr(idB)}` };
    let blobA: Uint8Array;
    try {
      blobA = c.deck.openLayer(k, blobB);
    } catch (e) {
      if (e instanceof CryptoError && e.code === 'AEAD_OPEN_FAILED') return { ok: false, detail: `cannot open blob_B for id_b ${pyRepr(idB)}` };
      if (e instanceof CryptoError) throw new MpError('MP_AUDIT_INPUT', `blob_B of id_b ${pyRepr(idB)}: ${e.message}`);
      throw e;
    }
    const idA = idAByBlobA.get(toHex(blobA));
    if (idA === undefined) return { ok: false, detail: `blob_A for id_b ${pyRepr(idB)} not in Host transcript` };
    if (used.has(idA)) return { ok: false, detail: `many-to-one: id_a ${pyRepr(idA)} claimed by multiple id_b` };
    used.add(idA);
    map.set(idB, idA);
  }
  if (used.size !== blobAByIdA.size) {
    const uncovered = [...blobAByIdA.keys()].filter((x) => !used.has(x)).sort(compareCodePoints);
    return { ok: false, detail: `id map not surjective: uncovered id_a ${pyReprList(uncovered)}` };
  }
  return { ok: true, map };
}

/**
 * The witness check of one Receiver's OTs against the transcript. `transcriptOtPairs` are that
 * Receiver's `mp_ot` events `[ot_id, z]` in transcript order; z is always taken from there. In order:
 * an ot_id twice in the transcript (duplicate_transcript_ot_id) or among the witnesses
 * (duplicate_witness_ot_id), the two sets of ot_ids differing (witness_transcript_mismatch, sorted
 * `missing` / `extra`); then per witness in the order given: z == FDH(label)·r^e with 1 ≤ r < n and
 * gcd(r, n) = 1 (bad_witness), the label names a card (label_not_in_map), and that card is the one
 * this OT was meant to fetch (peeked_non_hand).
 */
export function auditWitnesses(
  c: AuditCrypto,
  witnesses: readonly Witness[],
  transcriptOtPairs: readonly (readonly [string, bigint])[],
  table: OtTable,
  labelToIdB: ReadonlyMap<string, string>,
  handAtOt: ReadonlyMap<string, ReadonlySet<string>>,
): AuditResult {
  const tIds = transcriptOtPairs.map(([id]) => id);
  const tSet = new Set(tIds);
  if (tSet.size !== tIds.length) return fail('duplicate_transcript_ot_id');
  const zById = new Map(transcriptOtPairs);
  const wIds = witnesses.map((w) => w.otId);
  const wSet = new Set(wIds);
  if (wSet.size !== wIds.length) return fail('duplicate_witness_ot_id');
  if (!sameSet(wSet, tSet)) {
    return fail('witness_transcript_mismatch', {
      missing: [...tSet].filter((x) => !wSet.has(x)).sort(compareCodePoints),
      extra: [...wSet].filter((x) => !tSet.has(x)).sort(compareCodePoints),
    });
  }
  for (const w of witnesses) {
    const z = zById.get(w.otId)!;
    const ctx = context(c, table, w.label);
    if (z < 0n || w.r < 0n || !c.ot.checkWitness(table.pub.n, ctx, bigintToBytes(z), bigintToBytes(w.r))) {
      return fail('bad_witness', { ot_id: w.otId });
    }
    const idB = labelToIdB.get(w.label);
    if (idB === undefined) return fail('label_not_in_map', { label: w.label, ot_id: w.otId });
    if (!handAtOt.get(w.otId)?.has(idB)) return fail('peeked_non_hand', { ot_id: w.otId, id_b: idB, label: w.label });
  }
  return PASS;
}

/** One side's setup as the verifier holds it (its own, or the peer's `mp_setup_a` / `mp_setup_b` as received). */
export interface SetupTables {
  /** The decoded `rsa_pub` of this side's OT table. */
  readonly rsaPub: RsaPublicKey;
  /** blob_A (Host) or blob_B (Guest) of every card; the index is the card's id-A / id-B. */
  readonly blobs: readonly Uint8Array[];
  /** The sealed table: label (`h-<i>` / `g-<j>`) → the `c` hex as sent. */
  readonly sealed: ReadonlyMap<string, string>;
}

/** One `mp_ot` as the verifier recorded it: the ot_id as sent in the request, and its z. */
export interface OtRecord {
  readonly otId: string;
  readonly z: bigint;
}

/**
 * Everything the verifier's whole audit reads: the same whether the live engine mode calls it at the
 * end of a game or an offline verifier rebuilds it from a transcript or proof file.
 */
export interface AuditInput {
  /** The side whose records these are. Its own opening entries and witnesses are read before the peer's, as in the reference. */
  readonly verifier: Role;
  /** The OT context's protocol id: the spec's `name` (the reference's quirk). */
  readonly protocolId: string;
  /** The session's handshake session_id. */
  readonly sessionId: string;
  /** The game's deck universe `[rank, suit]` (proto_mp_deck_universe); order does not matter. */
  readonly universe: readonly (readonly [number, number])[];
  /** The Host's setup (`mp_setup_a`: blob_A, `h-` sealed table, rsa_pub) and the Guest's (`mp_setup_b`). */
  readonly host: SetupTables;
  readonly guest: SetupTables;
  /** Each side's `mp_opening` entries, parsed, in the order sent. */
  readonly openings: { readonly host: readonly OpeningEntry[]; readonly guest: readonly OpeningEntry[] };
  /**
   * Each side's witnesses: the verifier's own in the order it made its OTs, the peer's as received
   * (each side's `mp_witness`, parsed). Witnesses are sorted into the Host's and the Guest's OTs by
   * ot_id prefix (`host-` / `guest-`), whoever sent them.
   */
  readonly witnesses: { readonly host: readonly Witness[]; readonly guest: readonly Witness[] };
  /** Every `mp_ot` the verifier appended, both directions, in transcript order. */
  readonly otRecords: readonly OtRecord[];
  /**
   * The verifier's per-OT snapshot, both directions: ot_id → the id-B that OT was meant to fetch (the
   * dealt card, or the stock card of a draw), as recorded when the OT happened (a later record for the
   * same ot_id replaces the earlier one, as in the reference).
   */
  readonly otIdToIdB: ReadonlyMap<string, string>;
}

/** Python's `s[2:]`, by code point. */
const dropPrefix2 = (s: string) => Array.from(s).slice(2).join('');

function keyBytes(hex: string | undefined, what: string): Uint8Array {
  const b = hex === undefined ? null : hexToBytes(hex);
  if (!b) throw new MpError('MP_AUDIT_INPUT', `${what} is not hex`);
  return b;
}

function open(c: AuditCrypto, key: Uint8Array, blob: Uint8Array, what: string): Uint8Array {
  try {
    return c.deck.openLayer(key, blob);
  } catch (e) {
    if (e instanceof CryptoError) throw new MpError('MP_AUDIT_INPUT', `${what}: ${e.message}`);
    throw e;
  }
}

/**
 * The verifier's whole audit, first failure reported, in the reference's order:
 * 1. id-B → id-A derived from the Guest's disclosed k_outer (derive_id_map_failed `{detail}`);
 * 2. the Host's sealed table, then the Guest's (keyset_mismatch, forged_token, sealed_payload_poisoned,
 *    payload_mismatch);
 * 3. every card face against the universe (deck_size_mismatch, deck_universe_mismatch);
 * 4. the Guest's OTs, then the Host's: every witness must have a per-OT record (ot_snapshot_missing
 *    `{ot_id}`, checked over all of that side's witnesses first), then auditWitnesses.
 * MP_AUDIT_INPUT is thrown where the reference raises (see the module comment).
 */
export function auditGame(c: AuditCrypto, input: AuditInput): AuditResult {
  const own = input.verifier;
  const peer: Role = own === 'host' ? 'guest' : 'host';
  const entries = [...input.openings[own], ...input.openings[peer]];
  const tokensH = new Map<string, bigint>();
  const tokensG = new Map<string, bigint>();
  const kInner = new Map<string, Uint8Array>();
  const kOuter = new Map<string, Uint8Array>();
  for (const e of entries) {
    if (e.kind === 'token') {
      const token = hexToBigint(e.token as string, `token of ${pyRepr(e.label)}`);
      (e.label.startsWith('h-') ? tokensH : tokensG).set(e.label, token);
    } else if (e.kind === 'k_inner') kInner.set(e.label, keyBytes(e.k, `k_inner of ${pyRepr(e.label)}`));
    else if (e.kind === 'k_outer') kOuter.set(e.label, keyBytes(e.k, `k_outer of ${pyRepr(e.label)}`));
  }

  const nA = input.host.blobs.length;
  if (input.guest.blobs.length !== nA) throw new MpError('MP_AUDIT_INPUT', `the Guest's deck has ${input.guest.blobs.length} blobs, the Host's ${nA}`);
  const ids = Array.from({ length: nA }, (_, i) => String(i));

  const kOuterByIdB = new Map<string, Uint8Array>();
  for (const [label, k] of kOuter) kOuterByIdB.set(dropPrefix2(label), k);
  const derived = deriveIdMap(
    c,
    kOuterByIdB,
    new Map(ids.map((id) => [id, input.guest.blobs[Number(id)]!])),
    new Map(ids.map((id) => [id, input.host.blobs[Number(id)]!])),
  );
  if (!derived.ok) return fail('derive_id_map_failed', { detail: derived.detail });
  const idMap = derived.map;

  const table = (role: Role): OtTable =>
    role === 'host'
      ? { pub: input.host.rsaPub, protocolId: input.protocolId, sessionId: input.sessionId, senderRole: ROLE_HOST, payloadType: PAYLOAD_K_INNER }
      : { pub: input.guest.rsaPub, protocolId: input.protocolId, sessionId: input.sessionId, senderRole: ROLE_GUEST, payloadType: PAYLOAD_K_OUTER };
  const disclosed = (keys: ReadonlyMap<string, Uint8Array>, prefix: string, kind: string) =>
    new Map(
      ids.map((id) => {
        const k = keys.get(`${prefix}${id}`);
        if (!k) throw new MpError('MP_AUDIT_INPUT', `no ${kind} disclosed for ${pyRepr(prefix + id)}`);
        return [`${prefix}${id}`, k] as const;
      }),
    );
  const r1 = auditSealedPayload(c, tokensH, input.host.sealed, disclosed(kInner, 'h-', 'k_inner'), table('host'));
  if (!r1.ok) return r1;
  const r2 = auditSealedPayload(c, tokensG, input.guest.sealed, disclosed(kOuter, 'g-', 'k_outer'), table('guest'));
  if (!r2.ok) return r2;

  const cards = ids.map((idB) => {
    const blobA = open(c, kOuter.get(`g-${idB}`)!, input.guest.blobs[Number(idB)]!, `blob_B of id_b ${pyRepr(idB)}`);
    const idA = idMap.get(idB)!;
    return open(c, kInner.get(`h-${idA}`)!, blobA, `blob_A of id_a ${pyRepr(idA)}`).subarray(0, 2);
  });
  let universe: Uint8Array[];
  try {
    universe = input.universe.map(([rank, suit]) => c.deck.encodeCard(rank, suit));
  } catch (e) {
    if (e instanceof CryptoError) throw new MpError('MP_AUDIT_INPUT', `deck universe: ${e.message}`);
    throw e;
  }
  const r3 = auditFullDeck(cards, universe);
  if (!r3.ok) return r3;

  const lastZ = new Map(input.otRecords.map((r) => [r.otId, r.z]));
  const pairs = (prefix: string) => input.otRecords.filter((r) => r.otId.startsWith(prefix)).map((r) => [r.otId, lastZ.get(r.otId)!] as const);
  const allWitnesses = [...input.witnesses[own], ...input.witnesses[peer]];
  const idBByIdA = new Map([...idMap].map(([b, a]) => [a, b]));
  const labelToIdB = {
    host: new Map(ids.map((idA) => [`h-${idA}`, idBByIdA.get(idA)!])),
    guest: new Map(ids.map((idB) => [`g-${idB}`, idB])),
  };
  // The Guest's OTs fetch from the Host's table (its k_inner), the Host's from the Guest's.
  const snapshots = (ws: readonly Witness[]): Map<string, Set<string>> | AuditResult => {
    const m = new Map<string, Set<string>>();
    for (const w of ws) {
      const idB = input.otIdToIdB.get(w.otId);
      if (idB === undefined) return fail('ot_snapshot_missing', { ot_id: w.otId });
      m.set(w.otId, new Set([idB]));
    }
    return m;
  };
  const guestWs = allWitnesses.filter((w) => w.otId.startsWith('guest-'));
  const hostWs = allWitnesses.filter((w) => w.otId.startsWith('host-'));
  const handG = snapshots(guestWs);
  if (!(handG instanceof Map)) return handG;
  const handH = snapshots(hostWs);
  if (!(handH instanceof Map)) return handH;
  const r4 = auditWitnesses(c, guestWs, pairs('guest-'), table('host'), labelToIdB.host, handG);
  if (!r4.ok) return r4;
  return auditWitnesses(c, hostWs, pairs('host-'), table('guest'), labelToIdB.guest, handH);
}
