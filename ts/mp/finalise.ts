/**
 * The end of a game: both sides open their tables (`mp_opening`: tokens and card keys), publish their
 * OT witnesses (`mp_witness`), audit the whole game (`auditGame`) and exchange Ed25519 receipts over
 * the mental-poker transcript (`mp_terminal_receipt`). A peer that sends anything else where one of
 * these is due has refused the audit.
 */
import { fromHex, toHex } from '../crypto/encoding.js';
import { CryptoError } from '../crypto/errors.js';
import { intToHex } from '../crypto/ot.js';
import { compareCodePoints } from '../crypto/unicode.js';
import type { Message } from '../hooks/types.js';
import { auditGame, type AuditInput, type SetupTables } from './audit.js';
import type { JsonObject, JsonValue } from './canonical.js';
import { MpError } from './errors.js';
import { Stop, type Game, type Table } from './game.js';
import type { MpEnd } from './mode-types.js';
import { bad, list, object, parse } from './peer-fields.js';
import { openingPayload, verifyPeerReceipt, witnessPayloads } from './transcript.js';
import type { OpeningEntry, Witness } from './types.js';

export class Finalisation {
  /** This side's opening entries and the peer's (as parsed), and the peer's witnesses. */
  private mine: JsonObject[] = [];
  private theirs: JsonValue[] = [];
  /** The receipt this side signed. */
  private hash = '';
  private signature = '';

  constructor(private readonly g: Game) {}

  /** Opens this side's tables. */
  open(): void {
    this.mine = this.openingEntries();
    this.g.send({ action: 'mp_opening', openings: this.mine.map((e) => JSON.stringify(e)) });
    this.g.emit('mp_opening_sent', { entry_count: this.mine.length });
  }

  /** The peer's opening; this side's witnesses go out. */
  takeOpening(msg: Message): void {
    const g = this.g;
    if (msg.action !== 'mp_opening') this.refused('mp_opening', msg.action);
    this.theirs = list(msg, 'openings').map((s, i) => parse(s, `opening ${i}`));
    const [hostEntries, guestEntries] = g.role === 'host' ? [this.mine, this.theirs] : [this.theirs, this.mine];
    g.transcript.append('mp_opening', openingPayload('host', hostEntries));
    g.transcript.append('mp_opening', openingPayload('guest', guestEntries));
    g.emit('mp_opening_received', { entry_count: this.theirs.length });
    const sorted = [...g.ownWitnesses].sort((a, b) => compareCodePoints(a.otId, b.otId));
    g.send({ action: 'mp_witness', witnesses: sorted.map((w) => JSON.stringify({ ot_id: w.otId, label: w.label, r: intToHex(bigintTo256(w.r)) })) });
    g.emit('mp_witness_sent', { witness_count: sorted.length });
  }

  /** The peer's witnesses complete the evidence: the audit, then this side's receipt if it passes. */
  async takeWitnesses(msg: Message, index: number): Promise<void> {
    const g = this.g;
    const { crypto, hooks } = g.cfg;
    if (msg.action !== 'mp_witness') this.refused('mp_witness', msg.action);
    const theirWitnesses = list(msg, 'witnesses').map((s, i) => toWitness(parse(s, `witness ${i}`), i));
    const [hw, gw] = witnessPayloads([...g.ownWitnesses, ...theirWitnesses]);
    g.transcript.append('mp_witness', hw);
    g.transcript.append('mp_witness', gw);
    g.emit('mp_witness_received', { witness_count: theirWitnesses.length });

    g.emit('audit_started');
    const tables = (t: Table): SetupTables => ({ rsaPub: t.pub, blobs: t.blobs, sealed: t.sealed });
    const theirs = this.theirs.map(toOpening);
    const host = g.role === 'host';
    const input: AuditInput = {
      verifier: g.role,
      protocolId: g.cfg.otProtocolId,
      sessionId: g.cfg.sessionId,
      universe: await g.hook('proto_mp_deck_universe', () => hooks.proto_mp_deck_universe()),
      host: tables(g.table('host')),
      guest: tables(g.table('guest')),
      openings: host ? { host: this.mine.map(toOpening), guest: theirs } : { host: theirs, guest: this.mine.map(toOpening) },
      witnesses: host ? { host: g.ownWitnesses, guest: theirWitnesses } : { host: theirWitnesses, guest: g.ownWitnesses },
      otRecords: g.otRecords,
      otIdToIdB: g.otIdToIdB,
    };
    let verdict;
    try {
      verdict = auditGame(crypto, input);
    } catch (e) {
      if (e instanceof MpError) throw new Stop('bad_peer_material', `the audit cannot be run: ${e.detail}`, { result: g.result(false) });
      if (e instanceof CryptoError) throw new Stop('bad_peer_material', `the audit cannot be run: ${e.message}`, { result: g.result(false) });
      throw e;
    }
    if (!verdict.ok) {
      g.emit('audit_failed', { reason: verdict.reason, evidence: verdict.evidence });
      throw new Stop('audit_failed', `audit failed: ${verdict.reason}`, {
        result: g.result(false),
        audit: { reason: verdict.reason, evidence: verdict.evidence },
        proof: { kind: 'mp_audit_failed', offender: g.peer, message: index, reason: verdict.reason, evidence: verdict.evidence },
      });
    }
    g.emit('audit_passed');

    this.hash = g.transcript.rootHex();
    this.signature = toHex(g.transcript.sign(g.cfg.signer));
    g.send({ action: 'mp_terminal_receipt', transcript_hash: this.hash, signature: this.signature, audit_status: 'passed', public_key: g.cfg.publicKey });
    g.emit('mp_terminal_receipt_signed', { transcript_hash: this.hash });
  }

  /** The peer's receipt: the game completes when it verifies. */
  takeReceipt(msg: Message, index: number): MpEnd {
    const g = this.g;
    const hash = this.hash;
    if (msg.action !== 'mp_terminal_receipt') this.refused('mp_terminal_receipt', msg.action);
    const peerSig = msg['signature'];
    const ok = verifyPeerReceipt(g.transcript, msg, fromHex(g.cfg.peerPublicKey));
    g.emit('mp_terminal_receipt_verified', { transcript_hash: hash, peer_signature_ok: ok });
    if (!ok) {
      g.emit('audit_failed', { reason: 'peer_receipt_signature_invalid' });
      throw new Stop('audit_failed', "the peer's terminal receipt does not verify", {
        result: g.result(false),
        audit: { reason: 'peer_receipt_signature_invalid', evidence: null },
        proof: { kind: 'mp_audit_failed', offender: g.peer, message: index, reason: 'peer_receipt_signature_invalid', evidence: null },
      });
    }
    g.emit('game_over', { outcome: g.outcome, audit_status: 'passed' });
    return {
      reason: 'completed',
      detail: 'audit passed, receipts exchanged',
      result: g.result(true),
      audit: null,
      proof: null,
      receipt: { transcript_hash: hash, signature: this.signature, peer_signature: peerSig as string, audit_status: 'passed' },
      transcriptHash: hash,
      deal: g.deal,
    };
  }

  private refused(what: string, got: string): never {
    const g = this.g;
    g.emit('audit_refused', { peer_role: g.peer });
    throw new Stop('audit_refused', `the ${g.peer} sent ${got} where its ${what} was due`, { result: g.result(false) });
  }

  private openingEntries(): JsonObject[] {
    const g = this.g;
    const entries: JsonObject[] = [];
    for (const label of [...g.ownTokens.keys()].sort(compareCodePoints)) entries.push({ kind: 'token', label, token: intToHex(g.ownTokens.get(label)!) });
    const [kind, prefix] = g.role === 'host' ? ['k_inner', 'h-'] : ['k_outer', 'g-'];
    g.cardKeys.forEach((k, i) => entries.push({ kind, label: `${prefix}${i}`, k: toHex(k) }));
    return entries;
  }
}

function toOpening(v: JsonValue, i: number): OpeningEntry {
  const o = object(v, `opening ${i}`);
  if (typeof o['kind'] !== 'string' || typeof o['label'] !== 'string') throw bad(`opening ${i} has no kind and label`);
  const e: { kind: string; label: string; token?: string; k?: string } = { kind: o['kind'], label: o['label'] };
  if (typeof o['token'] === 'string') e.token = o['token'];
  if (typeof o['k'] === 'string') e.k = o['k'];
  return e;
}

function toWitness(v: JsonValue, i: number): Witness {
  const o = object(v, `witness ${i}`);
  const [otId, label, r] = [o['ot_id'], o['label'], o['r']];
  if (typeof otId !== 'string' || typeof label !== 'string' || typeof r !== 'string' || !/^[0-9a-fA-F]+$/.test(r))
    throw bad(`witness ${i} is not {ot_id, label, r: hex}`);
  return { otId, label, r: BigInt(`0x${r}`) };
}

/** A witness r back in the wire's 256-byte form. */
function bigintTo256(x: bigint): Uint8Array {
  return fromHex(x.toString(16).padStart(512, '0'));
}
