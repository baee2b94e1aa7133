/**
 * The reference's Blind-RSA token OT vectors (../shared/conformance/aigenora-reference/
 * aigenora-mp-ot-vectors.json, format in that folder's README) against one backend: the test suite
 * and `aigenora conformance` both run them through here.
 */
import type { Crypto } from '../crypto/backend.js';
import { CryptoError } from '../crypto/errors.js';
import { fromHex, toHex } from '../crypto/encoding.js';
import { intToHex, RSA_E, wideIntFromHex, type OtContextInput, type PayloadType, type RsaKey, type SenderRole } from '../crypto/ot.js';
import type { Suite } from './formats.js';
import { vectorSuite, type Vec } from './mp-vectors.js';

type Case = Vec;

export const OT_FORMAT = 'aigenora-mp-ot-vectors/1';

function eq(got: unknown, want: unknown, what: string): void {
  const [g, w] = [JSON.stringify(got), JSON.stringify(want)];
  if (g !== w) throw new Error(`${what}: got ${g?.slice(0, 160)}, want ${w?.slice(0, 160)}`);
}

const wide = wideIntFromHex;
/** An unpadded hex integer as the 512 characters of the wire. */
const pad = (h: string) => h.padStart(512, '0');

/** The vectors' key numbers (Python's names) under their JWK names. */
function importSet(c: Crypto, set: Case): RsaKey {
  eq(set['e'], RSA_E, 'rsa set e');
  return c.ot.importKey({
    n: wide(set['n']),
    e: RSA_E,
    d: wide(set['d']),
    p: wide(set['p']),
    q: wide(set['q']),
    dp: wide(set['dmp1']),
    dq: wide(set['dmq1']),
    qi: wide(set['iqmp']),
  });
}

function contextInput(v: Case, over: Case = {}): OtContextInput {
  return {
    protocolId: v['protocol_id'],
    sessionId: over['session_id'] ?? v['session_id'],
    senderRole: (over['sender_role'] ?? v['sender_role']) as SenderRole,
    payloadType: (over['payload_type'] ?? v['payload_type']) as PayloadType,
    label: over['label'] ?? v['label'],
  };
}

/** The reference's exception class for our code, where the vectors name one. */
function failure(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (!(e instanceof CryptoError)) throw e;
    return e.code === 'AEAD_OPEN_FAILED' ? 'InvalidTag' : `unexpected ${e.code}`;
  }
  return 'no error';
}

function label(c: Crypto, v: Case, key: RsaKey): void {
  const ot = c.ot;
  const id = v['id'] as string;
  const n = key.n;
  eq(key.rsaPub, v['rsa_pub_wire'], `${id} rsa_pub`);
  eq(toHex(ot.decodeRsaPub(v['rsa_pub_wire']).n), toHex(n), `${id} rsa_pub decoded`);
  eq(ot.encodeRsaPub(n), v['rsa_pub_wire'], `${id} encodeRsaPub`);
  const context = ot.context(contextInput(v));
  eq(toHex(context), v['context'], `${id} context`);

  const { h, counter } = ot.fdh(n, context);
  eq(intToHex(h), pad(v['h']), `${id} h`);
  eq(counter, v['fdh_counter'], `${id} fdh counter`);
  const rejected = Array.from({ length: counter }, (_, i) => toHex(ot.fdhCandidate(context, i)));
  eq(rejected, (v['fdh_rejected_candidates'] as string[]).map(pad), `${id} rejected candidates`);

  const token = key.token(context);
  eq(intToHex(token), pad(v['token']), `${id} token`);
  eq(toHex(token), v['token_i2osp'], `${id} token_i2osp`);
  eq(toHex(key.privateOp(h)), toHex(token), `${id} h^d`);
  const tk = ot.tokenKey(token, context);
  eq(toHex(tk), v['token_key'], `${id} token key`);
  const [payload, nonce, sealed] = [fromHex(v['payload']), fromHex(v['sealed_nonce']), fromHex(v['sealed'])];
  eq(toHex(ot.sealPayload(tk, nonce, payload, context)), v['sealed'], `${id} sealed`);
  const entry = key.sealLabel(context, payload, nonce);
  eq([toHex(entry.token), toHex(entry.sealed)], [toHex(token), v['sealed']], `${id} sealLabel`);
  eq(toHex(ot.openPayload(tk, sealed, context)), v['payload'], `${id} openPayload`);

  const o = v['ot'] as Case;
  const r = fromHex(pad(o['r']));
  const z = ot.blind(n, context, r);
  eq(intToHex(z), pad(o['z']), `${id} z`);
  const y = key.privateOp(z);
  eq(intToHex(y), pad(o['y']), `${id} y`);
  const t = ot.unblind(n, y, r);
  eq(intToHex(t), pad(o['unblinded_token']), `${id} unblinded token`);
  eq(toHex(ot.openSealed(t, context, sealed)), o['recovered_payload'], `${id} recovered payload`);
  eq(ot.checkWitness(n, context, z, r), true, `${id} own witness`);

  eq((v['witness_checks'] as Case[]).length, 10, `${id} witness check count`);
  for (const w of v['witness_checks'] as Case[]) {
    const got = ot.checkWitness(n, ot.context(contextInput(v, w)), wide(w['z']), wide(w['r']));
    eq(got, w['expect'], `${id} witness ${w['name']}`);
  }
  eq((v['token_checks'] as Case[]).length, 5, `${id} token check count`);
  for (const k of v['token_checks'] as Case[]) {
    eq(ot.checkToken(n, ot.context(contextInput(v, k)), wide(k['token'])), k['expect'], `${id} token ${k['name']}`);
  }
  eq((v['open_sealed_checks'] as Case[]).length, 5, `${id} open check count`);
  for (const k of v['open_sealed_checks'] as Case[]) {
    const what = `${id} open ${k['name']}`;
    const args = [fromHex(pad(k['token'])), ot.context(contextInput(v, k)), fromHex(k['sealed'])] as const;
    if (k['expect'].ok === true) eq(toHex(ot.openSealed(...args)), k['expect'].payload, what);
    else
      eq(
        failure(() => ot.openSealed(...args)),
        k['expect'].error,
        what,
      );
  }
}

function rsaPubDecode(c: Crypto, v: Case): void {
  eq((v['checks'] as Case[]).length, 8, `${v['id']} check count`);
  for (const k of v['checks'] as Case[]) {
    const what = `${v['id']} ${k['name']}`;
    const e = k['expect'] as Case;
    let got: unknown;
    try {
      const pub = c.ot.decodeRsaPub(k['input']);
      got = { e: pub.e, n: toHex(pub.n), ok: true };
    } catch (err) {
      if (!(err instanceof CryptoError)) throw err;
      // The message is the reference's; the code says which check refused.
      const known = err.code === 'OT_RSA_PUB_EXPONENT' || err.code === 'OT_MODULUS_INVALID';
      got = { error: known ? 'ValueError' : err.code, message: err.message.slice(err.code.length + 2), ok: false };
    }
    eq(got, e['ok'] === true ? { e: e['e'], n: pad(e['n']), ok: true } : { error: e['error'], message: e['message'], ok: false }, what);
  }
}

/** Checks one case of the OT vectors against one backend; throws on the first mismatch. */
export function checkOtCase(c: Crypto, v: Case, rsaSets: readonly Case[]): void {
  switch (v['kind']) {
    case 'label': {
      const set = rsaSets[v['rsa_set']];
      if (!set) throw new Error(`${v['id']}: no rsa set ${String(v['rsa_set'])}`);
      const key = importSet(c, set);
      try {
        label(c, v, key);
      } finally {
        key.dispose();
      }
      break;
    }
    case 'rsa_pub_decode':
      rsaPubDecode(c, v);
      break;
    default:
      throw new Error(`unknown case kind ${String(v['kind'])}`);
  }
}

/** Every case of an OT vector file; answers how many cases of each kind it checked. */
export function checkOtVectors(c: Crypto, doc: { format: string; rsa_sets: Case[]; cases: Case[] }): Record<string, number> {
  eq(doc.format, OT_FORMAT, 'format');
  const counts: Record<string, number> = {};
  for (const v of doc.cases) {
    checkOtCase(c, v, doc.rsa_sets);
    counts[v['kind']] = (counts[v['kind']] ?? 0) + 1;
  }
  return counts;
}

/** The file as a conformance suite: one case per vector, counted once whatever the backends. */
export function otSuite(doc: { rsa_sets: Case[]; cases: Case[] }): Suite {
  // The key numbers a case uses are part of what it checks.
  return vectorSuite(
    OT_FORMAT,
    doc.cases,
    (c, v) => checkOtCase(c, v, doc.rsa_sets),
    (v) => `${OT_FORMAT} ${JSON.stringify(v)} ${JSON.stringify(doc.rsa_sets[v['rsa_set']] ?? null)}`,
  );
}
