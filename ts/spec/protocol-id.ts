/**
 * protocol_id, byte-compatible with the reference implementation (NOTES A2): SHA-256 of the contract
 * subset of spec.json, serialised as Python's `json.dumps(sort_keys=True, ensure_ascii=False,
 * separators=(",", ":"))` would. Each crypto backend computes it in one call (`Crypto.protocolId`: the
 * Rust core's crates/core/src/pyjson.rs, or its TypeScript twin ts/crypto/pyjson.ts); the serialiser
 * (ts/crypto/python-json.ts) and its policy for protocol_id are re-exported here.
 */
import type { Crypto } from '../crypto/backend.js';

export { contractOf, contractText, PROTOCOL_ID_JSON } from '../crypto/pyjson.js';
export { pythonFloatRepr, pythonJson, type PythonJsonFault, type PythonJsonPolicy } from '../crypto/python-json.js';

/**
 * protocol_id: 64 lowercase hex. Throws CryptoError for text that is not strict JSON.
 *
 * @param crypto - either backend; both give the same id and refuse the same texts
 * @param specText - the spec.json text as written: the id depends on its number literals, not only on the parsed value
 * @example
 * ```ts
 * protocolId(getCrypto(), readFileSync('rps/spec.json', 'utf8')); // '43a806481a8e8cd0…'
 * ```
 */
export function protocolId(crypto: Crypto, specText: string): string {
  return crypto.protocolId(specText);
}
