/**
 * The reference's mental-poker audit vectors (../shared/conformance/aigenora-reference/
 * aigenora-mp-audit-vectors.json, format in that folder's README) against one backend: the four audit
 * functions with their exact reasons and evidence, the whole recorded game replayed and audited from
 * each side, and every altered game: the offline replay reaches the verdict, and for a game stopped by
 * its rules (`peer play rule-rejected: …`) the game's own hooks replay the rules over the messages.
 * The test suite and `aigenora conformance` both run them through here; test/mp/replay.test.ts also
 * runs every altered game through the engine's mental_poker mode. The file is read from its text (see
 * mp-vectors.ts).
 */
import type { Crypto } from '../crypto/backend.js';
import { fromHex, toHex } from '../crypto/encoding.js';
import { intFromHex, RSA_E, type PayloadType, type SenderRole } from '../crypto/ot.js';
import { auditFullDeck, auditSealedPayload, auditWitnesses, deriveIdMap, type AuditCrypto, type OtTable } from '../mp/audit.js';
import { replayGame, type WireMessage } from '../mp/replay.js';
import { replayRules } from '../mp/mode-rules.js';
import { instantiateHooks } from '../hooks/load.js';
import type { HooksModule, MentalPokerHooks } from '../hooks/types.js';
import crazyEights from '../protocols/crazy-eights/hooks.js';
import type { Role } from '../mp/types.js';
import type { Suite } from './formats.js';
import { entriesInOrder, eq, readVectors, vectorSuite, type Vec } from './mp-vectors.js';

export const AUDIT_FORMAT = 'aigenora-mp-audit-vectors/1';

const big = (hex: string) => BigInt(`0x${hex}`);
const mapOf = <T>(o: unknown, f: (v: Vec[string]) => T) => new Map(entriesInOrder(o).map(([k, v]) => [k, f(v)] as const));

function table(v: Vec): OtTable {
  return {
    pub: { e: RSA_E, n: intFromHex(v['rsa_n']) },
    protocolId: v['protocol_id'],
    sessionId: v['session_id'],
    senderRole: v['sender_role'] as SenderRole,
    payloadType: v['payload_type'] as PayloadType,
  };
}

function fullDeck(v: Vec): void {
  eq(v['rsa_e'] ?? RSA_E, RSA_E, 'e');
  const expected = (v['expected_cards'] as string[]).map(fromHex);
  for (const it of v['items'] as Vec[]) eq(auditFullDeck((it['cards'] as string[]).map(fromHex), expected), it['expect'], `${v['id']} ${it['name']}`);
}

function sealedPayload(c: AuditCrypto, v: Vec): void {
  eq(v['rsa_e'], RSA_E, `${v['id']} e`);
  for (const it of v['items'] as Vec[]) {
    const got = auditSealedPayload(c, mapOf(it['tokens'], big), mapOf(it['sealed'], String), mapOf(it['expected_payloads'], fromHex), table(v));
    eq(got, it['expect'], `${v['id']} ${it['name']}`);
  }
}

function idMap(c: AuditCrypto, v: Vec): void {
  for (const it of v['items'] as Vec[]) {
    const got = deriveIdMap(c, mapOf(it['k_outer_by_id_b'], fromHex), mapOf(it['blob_b_by_id_b'], fromHex), mapOf(it['blob_a_by_id_a'], fromHex));
    const want = it['expect'];
    const what = `${v['id']} ${it['name']}`;
    if (want.ok) eq(got.ok ? [...got.map] : got, entriesInOrder(want.map), what);
    else eq(got.ok ? [...got.map] : { error: 'AuditError', message: got.detail }, { error: want.error, message: want.message }, what);
  }
}

function witnesses(c: AuditCrypto, v: Vec): void {
  eq(v['rsa_e'], RSA_E, `${v['id']} e`);
  const labelToIdB = mapOf(v['label_to_id_b'], String);
  const handAtOt = mapOf(v['hand_at_ot'], (ids: string[]) => new Set(ids));
  for (const it of v['items'] as Vec[]) {
    const ws = (it['witnesses'] as Vec[]).map((w) => ({ otId: w['ot_id'], label: w['label'], r: big(w['r']) }));
    const pairs = (it['transcript_ot_pairs'] as [string, string][]).map(([id, z]) => [id, big(z)] as const);
    eq(auditWitnesses(c, ws, pairs, table(v), labelToIdB, handAtOt), it['expect'], `${v['id']} ${it['name']}`);
  }
}

/** The deck universe of the recorded game: the Crazy Eights cards the audit_full_deck case lists. */
function universe(doc: { cases: Vec[] }): [number, number][] {
  const deck = doc.cases.find((x) => x['kind'] === 'audit_full_deck');
  if (!deck) throw new Error('no audit_full_deck case to take the deck universe from');
  return (deck['expected_cards'] as string[]).map((h) => [fromHex(h)[0]!, fromHex(h)[1]!]);
}

function replay(c: Crypto, doc: { cases: Vec[] }, game: Vec, messages: WireMessage[], verifier: Role) {
  const peer = verifier === 'host' ? 'guest' : 'host';
  return replayGame(c, messages, {
    verifier,
    protocolId: game['protocol_id_in_ot_context'],
    sessionId: game['session_id'],
    universe: universe(doc),
    deal: { guest: game['derived'].guest_deal_id_b.length, host: game['derived'].host_deal_id_b.length },
    peerPublicKey: fromHex(game[peer].public_key),
  });
}

function wholeGame(c: Crypto, doc: { cases: Vec[] }, v: Vec): void {
  const d = v['derived'];
  for (const role of ['host', 'guest'] as const) {
    const what = `${v['id']} ${role}`;
    const r = replay(c, doc, v, v['messages'], role);
    eq(r.verdict, { auditPassed: true, auditFailure: null, raised: null }, `${what} verdict`);
    eq(v['expect'][`${role}_result`].audit_passed, true, `${what} expected verdict`);
    eq(r.transcript.rootHex(), v['expect'].transcript_hash, `${what} transcript root`);
    eq(toHex(r.transcript.sign(fromHex(v[role].ed25519_seed))), v['expect'][`${role}_receipt_signature`], `${what} receipt signature`);
    const input = r.input!;
    eq([...input.otIdToIdB], entriesInOrder(d.ot_id_to_id_b[`${role}_view`]), `${what} per-OT records`);
    const idB = input.guest.blobs.map((_, i) => String(i));
    const disclosed = (v['openings'].guest as Vec[]).filter((e) => e['kind'] === 'k_outer');
    const kOuter = new Map(disclosed.map((e) => [String(e['label']).slice(2), fromHex(e['k'])] as const));
    const m = deriveIdMap(c, kOuter, new Map(idB.map((i) => [i, input.guest.blobs[+i]!])), new Map(idB.map((i) => [i, input.host.blobs[+i]!])));
    eq(m.ok && Object.fromEntries(m.map), Object.fromEntries(entriesInOrder(d.id_b_to_id_a)), `${what} id map`);
    eq([input.openings.host.length, input.openings.guest.length], [v['openings'].host.length, v['openings'].guest.length], `${what} openings`);
    eq(
      [...input.witnesses.host, ...input.witnesses.guest].map((w) => [w.otId, w.label, w.r.toString(16).padStart(512, '0')]),
      [...v['witnesses'].host, ...v['witnesses'].guest].map((w: Vec) => [w['ot_id'], w['label'], w['r']]),
      `${what} witnesses`,
    );
  }
}

/** The recorded game with one side's messages altered by `ops`, and the verifier's own as it sent them. */
function alteredMessages(base: Vec, v: Vec): WireMessage[] {
  const apply = (msgs: Vec[], op: Vec) => {
    const m = msgs[op['index']];
    if (!m) throw new Error(`${v['id']}: op on message ${op['index']}, which does not exist`);
    switch (op['op']) {
      case 'set_field':
        m[op['field']] = op['value'];
        break;
      case 'remove_field':
        delete m[op['field']];
        break;
      case 'set_item':
        m[op['field']][op['item']] = op['value'];
        break;
      case 'remove_item':
        m[op['field']].splice(op['item'], 1);
        break;
      case 'append_item':
        m[op['field']].push(op['value']);
        break;
      case 'replace_message':
        msgs[op['index']] = structuredClone(op['message']);
        break;
      default:
        throw new Error(`${v['id']}: unknown op ${String(op['op'])}`);
    }
  };
  const all = base['messages'] as { direction: WireMessage['direction']; message: Vec }[];
  const byDirection = (d: string) => all.filter((x) => x.direction === d).map((x) => structuredClone(x.message));
  const verifierDirection = v['mutated_direction'] === 'host_to_guest' ? 'guest_to_host' : 'host_to_guest';
  const mutated = byDirection(v['mutated_direction']);
  for (const op of v['ops'] as Vec[]) apply(mutated, op);
  const sent = byDirection(verifierDirection);
  for (const ch of v['expect'].verifier_sent_changes as Vec[]) sent[ch['index']] = structuredClone(ch['message']);
  const next = { [v['mutated_direction']]: 0, [verifierDirection]: 0 };
  const lists = { [v['mutated_direction']]: mutated, [verifierDirection]: sent };
  return all.map((x) => ({ direction: x.direction, message: lists[x.direction]![next[x.direction]!++]! }));
}

/** The game rules of the protocols the reference's recorded games use, by spec name. */
const RULES: Record<string, HooksModule<'mental_poker'>> = { 'Crazy Eights': crazyEights as HooksModule<'mental_poker'> };

function rulesOf(game: Vec, role: Role): MentalPokerHooks {
  const module = RULES[String(game['protocol'])];
  if (!module) throw new Error(`no built-in rules for ${JSON.stringify(game['protocol'])}`);
  const options = game['options'] as Record<string, unknown>;
  const h = instantiateHooks(module, { role, options, args: [], stateDir: '', decision: null, random: () => 0 });
  h.proto_init?.(options, role, [], '', null);
  return h;
}

const RULE_REJECTED = 'peer play rule-rejected: ';

function altered(c: Crypto, doc: { cases: Vec[] }, v: Vec): void {
  const base = doc.cases.find((x) => x['id'] === v['base_case']);
  if (!base) throw new Error(`${v['id']}: no base case ${String(v['base_case'])}`);
  eq(base['expect'].transcript_hash, v['base_transcript_hash'], `${v['id']} base`);
  const messages = alteredMessages(base, v);
  const verifier = v['verifier'] as Role;
  const e = v['expect'];
  const raised = e.raised ? `${e.raised.message}` : null;
  const failure = e.audit_failure
    ? 'evidence' in e.audit_failure
      ? { reason: e.audit_failure.reason, evidence: e.audit_failure.evidence }
      : { reason: e.audit_failure.reason }
    : null;
  const d = base['derived'];
  const deal = { guest: d.guest_deal_id_b.length, host: d.host_deal_id_b.length };
  // The engine checks a peer play's cards before its rules: a play the rules refuse decides the game
  // only if the messages up to it pass the card check; otherwise (and when the rules replay cannot
  // follow a play that is not the peer's to make) the card check's verdict stands.
  const rules = replayRules(
    rulesOf(base, verifier),
    messages.map((m) => ({ from: m.direction === 'host_to_guest' ? 'host' : 'guest', msg: m.message as never })),
    verifier,
    deal,
  );
  if (rules.ok === false) {
    const upTo = replay(c, doc, base, messages.slice(0, rules.index + 1), verifier);
    if (upTo.verdict.raised === "the game ended before the peer's terminal receipt") {
      eq(
        { auditPassed: false, auditFailure: null, raised: `${RULE_REJECTED}${rules.reason}` },
        { auditPassed: e.audit_passed, auditFailure: failure, raised },
        `${v['id']} verdict`,
      );
      return;
    }
  }
  const r = replay(c, doc, base, messages, verifier);
  eq(r.verdict, { auditPassed: e.audit_passed, auditFailure: failure, raised }, `${v['id']} verdict`);
}

/** Checks one case of the audit vectors against one backend; throws on the first mismatch. */
export function checkAuditCase(c: Crypto, doc: { cases: Vec[] }, v: Vec): void {
  switch (v['kind']) {
    case 'audit_full_deck':
      fullDeck(v);
      break;
    case 'audit_sealed_payload':
      sealedPayload(c, v);
      break;
    case 'derive_id_map':
      idMap(c, v);
      break;
    case 'audit_witnesses':
      witnesses(c, v);
      break;
    case 'game':
      wholeGame(c, doc, v);
      break;
    case 'mutated_game':
      altered(c, doc, v);
      break;
    default:
      throw new Error(`unknown case kind ${String(v['kind'])}`);
  }
}

/** Every case of the audit vector file (its text): counts per kind. */
export function checkAuditVectors(c: Crypto, fileText: string): Record<string, number> {
  const doc = readVectors(fileText);
  eq(doc.format, AUDIT_FORMAT, 'format');
  const counts: Record<string, number> = {};
  for (const v of doc.cases) {
    checkAuditCase(c, doc, v);
    counts[v['kind']] = (counts[v['kind']] ?? 0) + 1;
  }
  return counts;
}

/** The file (its text) as a conformance suite: one case per vector. */
export function auditSuite(fileText: string): Suite {
  const doc = readVectors(fileText);
  return vectorSuite(AUDIT_FORMAT, doc.cases, (c, v) => checkAuditCase(c, doc, v));
}
