/**
 * Verification in the mandatory order of agent-trade/0.2 §3 (NOTES B2), returning the first failure
 * with the reference's code. Skipping step 1 and checking only signatures would accept a body edited
 * after signing (the reference's deal-tampered-body-keep-hash vector); the order is the defence.
 *
 * Untrusted text (seed 003 §5) passes a gate first: a size limit, then strict JSON (duplicate keys,
 * lone surrogates and out-of-range numbers refused). A text that fails the gate is
 * `fail:malformed_input`, an extension of the reference's seven codes for input it never parses.
 */
import type { Crypto, SignatureItem } from '../crypto/backend.js';
import { toHex, utf8 } from '../crypto/encoding.js';
import { CryptoError } from '../crypto/errors.js';
import { bodyHash, isObjectType, objectIdOf, PROTOCOL, signingInput, type Envelope } from './envelope.js';
import { decodeOrEmpty, publicKeyBytes } from './decode.js';
import { schemaError } from './schema.js';

export const VERIFY_RESULTS = [
  'valid',
  'fail:protocol_version',
  'fail:body_hash_mismatch',
  'fail:object_id_mismatch',
  'fail:schema_invalid',
  'fail:unknown_signer',
  'fail:signature_invalid',
  'fail:malformed_input',
] as const;
export type VerifyResult = (typeof VERIFY_RESULTS)[number];

/** Signer id → public key (32 bytes, or base64url as in the vectors' `identities`). */
export type KeyMap = ReadonlyMap<string, Uint8Array> | Readonly<Record<string, { public_key: string }>>;

export interface Verdict {
  result: VerifyResult;
  /** The recomputed object_id, once the body_hash has checked out. */
  objectId?: string;
  /** What failed, for people: a pointer and message, or the signer. */
  detail?: string;
}

export interface VerifyOptions {
  /** A declared object_id (step 2), e.g. from the reference that named this file. */
  objectId?: string;
  /** Largest text accepted, in UTF-8 bytes (default 1 MiB). */
  maxBytes?: number;
}

export const DEFAULT_MAX_BYTES = 1 << 20;

function lookup(keys: KeyMap, signer: string): Uint8Array | undefined {
  if (keys instanceof Map) return keys.get(signer);
  const rec = keys as Readonly<Record<string, { public_key: string }>>;
  if (!Object.prototype.hasOwnProperty.call(rec, signer)) return undefined;
  return publicKeyBytes((rec[signer] as { public_key?: unknown } | null | undefined)?.public_key);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

export type Parsed = { ok: true; value: unknown } | { ok: false; verdict: Verdict };

/** A parse that passed the gate keeps the body_hash the strict check made, when it could. */
type Gated = { ok: true; value: unknown; bodyHash: string | undefined } | { ok: false; verdict: Verdict };

const malformed = (detail: string): Gated => ({ ok: false, verdict: { result: 'fail:malformed_input', detail } });

/** Parses untrusted text through the gate: size first, then strict I-JSON, then JSON.parse. */
export function parseUntrusted(crypto: Crypto, text: string | Uint8Array, maxBytes = DEFAULT_MAX_BYTES): Parsed {
  const g = gate(crypto, text, maxBytes);
  return g.ok ? { ok: true, value: g.value } : g;
}

function gate(crypto: Crypto, text: string | Uint8Array, maxBytes = DEFAULT_MAX_BYTES): Gated {
  // A UTF-16 unit is at most 3 UTF-8 bytes, so most texts need no count.
  const size = typeof text !== 'string' ? text.length : text.length * 3 > maxBytes ? utf8(text).length : 0;
  if (size > maxBytes) return malformed(`input is ${size} bytes, over the ${maxBytes}-byte limit`);
  let s: string;
  try {
    s = typeof text === 'string' ? text : strictUtf8.decode(text);
  } catch {
    return malformed('input is not UTF-8');
  }
  let body: Uint8Array | undefined;
  try {
    // The strict I-JSON check of the whole file, which hashes JCS(body) on the way: RFC 8785 writes
    // each member's value as its own canonical form, and "body" sorts before every key the schemas
    // allow (an envelope with a key that sorts first has its body hashed from the parsed value).
    body = crypto.jcsFirstMemberSha256(s, 'body');
  } catch (e) {
    if (e instanceof CryptoError) return malformed(e.message);
    throw e;
  }
  return { ok: true, value: JSON.parse(s) as unknown, bodyHash: body && `sha256:${toHex(body)}` };
}

/**
 * Verifies a parsed envelope (an object) or untrusted text/bytes, in the reference's order: the first
 * failure is the verdict (`fail:protocol_version` … `fail:signature_invalid`), else `valid` with the
 * recomputed object_id. Never throws for bad input.
 *
 * @param crypto - either backend
 * @param input - an envelope object, or text/bytes that first pass the size limit and strict JSON (`fail:malformed_input`)
 * @param keys - signer id to public key: a Map of 32-byte keys, or `{ id: { public_key: base64url } }` as in keys.json
 * @param opts - a declared object_id to match, and the size limit (DEFAULT_MAX_BYTES)
 * @example
 * ```ts
 * verifyEnvelope(c, deal, new Map([['agent_alice', c.ed25519PublicKey(seed)]])); // { result: 'valid', objectId: 'sha256:…' }
 * verifyEnvelope(c, readFileSync('deal.json', 'utf8'), JSON.parse(readFileSync('keys.json', 'utf8'))).result;
 * ```
 */
export function verifyEnvelope(crypto: Crypto, input: unknown, keys: KeyMap, opts: VerifyOptions = {}): Verdict {
  let env = input;
  let gatedBodyHash: string | undefined;
  if (typeof input === 'string' || input instanceof Uint8Array) {
    const parsed = gate(crypto, input, opts.maxBytes);
    if (!parsed.ok) return parsed.verdict;
    env = parsed.value;
    gatedBodyHash = parsed.bodyHash;
  }
  const e = (typeof env === 'object' && env !== null && !Array.isArray(env) ? env : {}) as Partial<Envelope> & Record<string, unknown>;

  // 0. exact protocol string, no migration
  if (e.protocol !== PROTOCOL) return { result: 'fail:protocol_version', detail: `protocol is ${JSON.stringify(e.protocol)}, not ${PROTOCOL}` };

  // 1. recompute body_hash from the body itself
  let actual: string;
  try {
    actual = gatedBodyHash ?? bodyHash(crypto, e.body);
  } catch (err) {
    if (!(err instanceof CryptoError)) throw err;
    return { result: 'fail:body_hash_mismatch', detail: `body cannot be canonicalized: ${err.message}` };
  }
  if (actual !== e.body_hash) return { result: 'fail:body_hash_mismatch', detail: `body hashes to ${actual}, file says ${String(e.body_hash)}` };

  // 2. object_id from the verified hash, against a declared one; its signing input is the one step 4 checks
  const input4 = signingInput(PROTOCOL, String(e.object_type), actual);
  const id = objectIdOf(crypto, input4);
  if (opts.objectId !== undefined && opts.objectId !== id) return { result: 'fail:object_id_mismatch', objectId: id, detail: `declared ${opts.objectId}` };

  // 3. the whole envelope against its object_type's schema
  if (!isObjectType(e.object_type))
    return { result: 'fail:schema_invalid', objectId: id, detail: `/object_type is not one of LISTING_REF, DEAL, TRADE_EVENT, TRADE_RECEIPT` };
  const schema = schemaError(e.object_type, env);
  if (schema) return { result: 'fail:schema_invalid', objectId: id, detail: schema };

  // 4. every signature, in order, strictly, over the signing_input built from the verified hash: the
  // first unknown signer or bad signature is the verdict. The signatures before the first unknown
  // signer are checked in one call, which answers each as alone (their last steps share a field
  // inversion in the wasm backend).
  const signatures = e.signatures ?? [];
  const items: SignatureItem[] = [];
  let unknown = -1;
  for (let i = 0; i < signatures.length && unknown < 0; i++) {
    const pk = lookup(keys, signatures[i]!.signer);
    if (pk) items.push({ publicKey: pk, message: input4, signature: decodeOrEmpty(signatures[i]!.signature) });
    else unknown = i;
  }
  const bad = crypto.ed25519VerifyMany(items).indexOf(false);
  if (bad >= 0)
    return { result: 'fail:signature_invalid', objectId: id, detail: `signatures[${bad}] by ${JSON.stringify(signatures[bad]!.signer)} does not verify` };
  if (unknown >= 0)
    return {
      result: 'fail:unknown_signer',
      objectId: id,
      detail: `signatures[${unknown}]: ${JSON.stringify(signatures[unknown]!.signer)} is not in the key map`,
    };
  return { result: 'valid', objectId: id };
}
