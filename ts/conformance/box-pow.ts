/**
 * The reference's AGBX1 box and registration proof-of-work vectors (../shared/conformance/
 * aigenora-reference/aigenora-{box,pow}-vectors.json, formats in that folder's README) against one
 * backend: the test suite and `aigenora conformance` both run them through here.
 */
import type { Crypto } from '../crypto/backend.js';
import { CryptoError } from '../crypto/errors.js';
import { fromHex, toHex, utf8 } from '../crypto/encoding.js';
import { BOX_MIN_LEN } from '../crypto/box.js';
import { registrationBody, registrationProofString, restHeaders, restSignedBytes, signRegistration } from '../registry/auth.js';
import type { Suite } from './formats.js';
import { eq, vectorSuite, type Vec } from './mp-vectors.js';

export const BOX_FORMAT = 'aigenora-box-vectors/1';
export const POW_FORMAT = 'aigenora-pow-vectors/1';

function base64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/**
 * Our code for the reference's refusal: its ValueError is our layout check (too short, or the magic)
 * unless it is the X25519 step's, and its InvalidTag is the AEAD's.
 */
function expectedCode(boxed: Uint8Array, expect: Vec): string {
  if (expect['ok'] !== false) throw new Error(`expected a refusal, the vector says ${JSON.stringify(expect)}`);
  if (expect['error'] === 'InvalidTag') return 'AEAD_OPEN_FAILED';
  if (expect['error'] === 'ValueError' && String(expect['message']).startsWith('invalid inbox ciphertext')) {
    return boxed.length < BOX_MIN_LEN ? 'BOX_TOO_SHORT' : 'BOX_BAD_MAGIC';
  }
  if (expect['error'] === 'ValueError' && expect['message'] === 'Error computing shared key.') return 'X25519_LOW_ORDER';
  throw new Error(`unknown refusal ${JSON.stringify(expect)}`);
}

function refusal(c: Crypto, seed: string, ciphertext: string, expect: Vec, what: string): void {
  const boxed = fromHex(ciphertext);
  let got = 'opened';
  try {
    c.boxOpen(fromHex(seed), boxed);
  } catch (e) {
    if (!(e instanceof CryptoError)) throw e;
    got = e.code;
  }
  eq(got, expectedCode(boxed, expect), what);
}

export function checkBoxCase(c: Crypto, v: Vec): void {
  const id = String(v['id']);
  switch (v['kind']) {
    case 'convert': {
      const xsk = c.ed25519SeedToX25519(fromHex(v['ed25519_seed']));
      eq(toHex(c.ed25519PublicKey(fromHex(v['ed25519_seed']))), v['ed25519_public'], `${id} ed25519 public`);
      eq(toHex(xsk), v['x25519_private'], `${id} x25519 private`);
      eq(toHex(c.ed25519PublicToX25519(fromHex(v['ed25519_public']))), v['x25519_public'], `${id} x25519 public`);
      eq(toHex(c.x25519PublicKey(xsk)), v['x25519_public'], `${id} the converted keys are a pair`);
      break;
    }
    case 'seal': {
      const eph = fromHex(v['ephemeral_x25519_private']);
      eq(toHex(c.x25519PublicKey(eph)), v['ephemeral_x25519_public'], `${id} ephemeral public`);
      const recipientSk = c.ed25519SeedToX25519(fromHex(v['recipient_seed']));
      eq(toHex(c.x25519SharedSecret(recipientSk, fromHex(v['ephemeral_x25519_public']))), v['shared_secret'], `${id} shared secret`);
      const boxed = c.boxSealWith(fromHex(v['recipient_public_key']), fromHex(v['plaintext']), eph, fromHex(v['nonce']));
      eq(toHex(boxed), v['ciphertext'], `${id} ciphertext`);
      eq(base64(boxed), v['ciphertext_base64'], `${id} ciphertext_base64`);
      eq(toHex(c.boxOpen(fromHex(v['recipient_seed']), boxed)), v['plaintext'], `${id} open`);
      const tampered = v['tampered'] as Vec[];
      if (!Array.isArray(tampered) || tampered.length === 0) throw new Error(`${id}: no tampered copies`);
      for (const t of tampered) refusal(c, t['recipient_seed'], t['ciphertext'], t['expect'], `${id} ${String(t['name'])}`);
      break;
    }
    case 'decrypt_only':
      refusal(c, v['recipient_seed'], v['ciphertext'], v['expect'], id);
      break;
    default:
      throw new Error(`unknown case kind ${String(v['kind'])}`);
  }
}

export function checkPowCase(c: Crypto, v: Vec): void {
  const id = String(v['id']);
  if (v['kind'] !== 'pow') throw new Error(`unknown case kind ${String(v['kind'])}`);
  const { nonce, public_key: pk, difficulty } = v as { nonce: string; public_key: string; difficulty: number };
  const sol = v['solution'] as Vec;
  const counter = c.powSolve(nonce, pk, difficulty);
  eq(counter, sol['counter'], `${id} counter`);
  eq(`${nonce}${pk}${counter}`, v['preimage'], `${id} preimage`);
  eq(toHex(c.sha256(utf8(v['preimage']))), sol['digest'], `${id} digest`);
  eq(c.powCheck(nonce, pk, counter, difficulty), sol['valid'], `${id} valid`);
  for (const bad of v['invalid_solutions'] as Vec[]) {
    eq(toHex(c.sha256(utf8(`${nonce}${pk}${bad['counter']}`))), bad['digest'], `${id} digest of ${bad['counter']}`);
    eq(c.powCheck(nonce, pk, bad['counter'], difficulty), bad['valid'], `${id} counter ${bad['counter']}`);
  }
  const seed = fromHex(v['seed']);
  const reg = v['register'] as Vec;
  const r = signRegistration(c, seed, nonce, reg['nickname'], counter);
  eq(r.publicKey, pk, `${id} public key`);
  eq(registrationProofString(nonce, pk, reg['nickname']), reg['proof_string'], `${id} proof string`);
  eq(r.signature, reg['signature'], `${id} registration signature`);
  eq(registrationBody(r), reg['body'], `${id} registration body`);
  const ra = v['rest_auth'] as Vec;
  const body = utf8(registrationBody(r));
  const request = { timestamp: ra['timestamp'], method: ra['method'], path: ra['path'], requestId: ra['request_id'], body };
  eq(toHex(restSignedBytes(request.timestamp, request.method, request.path, request.requestId, body)), ra['signed_bytes'], `${id} signed bytes`);
  eq(restHeaders(c, seed, request), ra['headers'], `${id} headers`);
}

function checkAll(c: Crypto, doc: { format: string; cases: Vec[] }, format: string, check: (c: Crypto, v: Vec) => void): Record<string, number> {
  eq(doc.format, format, 'format');
  const counts: Record<string, number> = {};
  for (const v of doc.cases) {
    check(c, v);
    counts[v['kind']] = (counts[v['kind']] ?? 0) + 1;
  }
  return counts;
}

/** Every case of a box vector file; answers how many cases of each kind it checked. */
export const checkBoxVectors = (c: Crypto, doc: { format: string; cases: Vec[] }) => checkAll(c, doc, BOX_FORMAT, checkBoxCase);
/** Every case of a proof-of-work vector file; answers how many cases of each kind it checked. */
export const checkPowVectors = (c: Crypto, doc: { format: string; cases: Vec[] }) => checkAll(c, doc, POW_FORMAT, checkPowCase);

export const boxSuite = (doc: { cases: Vec[] }): Suite => vectorSuite(BOX_FORMAT, doc.cases, checkBoxCase);
export const powSuite = (doc: { cases: Vec[] }): Suite => vectorSuite(POW_FORMAT, doc.cases, checkPowCase);
