/**
 * The one interface both crypto backends implement. `wasm` runs the Rust core (crates/core) compiled
 * to WebAssembly; `js` is its pure-JS twin on @noble/*. They must give byte-identical results and the
 * same error codes for every input: the shared vectors in test-vectors/ run against both.
 *
 * All binary inputs and outputs are Uint8Array. Functions that can fail throw CryptoError with a
 * stable code (errors.ts); `ed25519Verify` and `verifyReveal` answer false instead of throwing.
 */
import type { Deck } from './deck.js';
import type { Ot } from './ot.js';

export type BackendName = 'wasm' | 'js';
export type AeadCipher = 'chacha20-poly1305' | 'xchacha20-poly1305';

/**
 * The parts of the wasm backend that are WebAssembly modules of their own, beside the core crypto every
 * consumer loads: `mp` runs `Crypto.deck` and `Crypto.ot`, `gojson` runs goCanonicalJson and
 * goCanonicalJsonSha256, `pyjson` runs protocolId. Node loads each on first use; a browser loads one
 * with `loadCryptoFeature` (before, its calls throw WASM_FEATURE_NOT_LOADED). The js backend has them all.
 */
export type CryptoFeature = 'mp' | 'gojson' | 'pyjson';

export interface SignatureItem {
  publicKey: Uint8Array;
  message: Uint8Array;
  signature: Uint8Array;
}

/** A key pair expanded once from its seed: signing many messages skips re-deriving the public key. */
export interface Ed25519Keypair {
  readonly publicKey: Uint8Array;
  sign(message: Uint8Array): Uint8Array;
  /** sign() of each message, the same signatures; the wasm backend signs a batch for less than its parts. */
  signMany(messages: readonly Uint8Array[]): Uint8Array[];
  /** Wipes the secret (in WASM memory, or the JS copy); later calls throw KEY_DISPOSED. */
  dispose(): void;
}

/**
 * A wasm backend whose instance trapped (WebAssembly memory exhausted by an allocation the core does
 * not control) throws WASM_TRAP from then on, from every method, ed25519Verify and verifyReveal included.
 */
export interface Crypto {
  readonly backend: BackendName;

  sha256(data: Uint8Array): Uint8Array;
  /**
   * SHA-256 of `prefix ‖ rest` for each rest, the rests laid one after the other in `rests` with
   * their lengths in `restLengths`; the digests one after the other (32 bytes each). The prefix is
   * hashed once: texts that share most of their bytes cost their own rests only. Lengths that do not
   * add up to `rests` are BAD_LENGTH.
   */
  sha256Shared(prefix: Uint8Array, rests: Uint8Array, restLengths: Uint32Array): Uint8Array;
  sha512(data: Uint8Array): Uint8Array;

  /**
   * RFC 8785 canonical UTF-8 bytes of JSON text, refusing what I-JSON forbids (duplicate keys, lone
   * surrogates, non-finite numbers), nesting deeper than 127 and texts over 64 MiB of UTF-8. Memory is
   * bounded by the text's size (ts/crypto/jcs.ts, crates/core/src/jcs.rs); the order in which faults
   * are reported is the same on both backends.
   */
  jcs(text: string): Uint8Array;
  /** SHA-256 of `jcs(text)`. */
  jcsSha256(text: string): Uint8Array;
  /**
   * SHA-256 of the canonical form of the value of the text's first member when that member is `name`
   * (the whole text checked as `jcs` checks it, with the same errors); undefined when the text is not
   * an object whose first member in canonical order is `name` (written as it is). agent-trade's
   * body_hash from an envelope's text: "body" sorts before every other key the schemas allow.
   */
  jcsFirstMemberSha256(text: string, name: string): Uint8Array | undefined;
  /** RFC 8785 bytes of a JS value, serialized as JSON.stringify would (toJSON, undefined members dropped), but NaN/±Infinity and bigint are refused. */
  jcsValue(value: unknown): Uint8Array;
  /** SHA-256 of `jcsValue(value)`. */
  jcsValueSha256(value: unknown): Uint8Array;

  /**
   * Go encoding/json canonical UTF-8 bytes of a strict wire JSON text, as rin.host/v2 digests hash
   * them (ts/crypto/gojson.ts, crates/core/src/gojson.rs): members sorted by UTF-8 bytes, number
   * lexemes verbatim, Go's HTML-safe escaping. Throws GoJsonError (not CryptoError) with the same
   * code, path and message on both backends; texts over 8 MiB of UTF-8 are JSON_SIZE.
   */
  goCanonicalJson(text: string): Uint8Array;
  /** SHA-256 of `goCanonicalJson(text)`. */
  goCanonicalJsonSha256(text: string): Uint8Array;

  /**
   * protocol_id of a spec text (NOTES A2): 64 lowercase hex digits of the SHA-256 of its contract
   * subset, serialised as Python's json.dumps(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
   * (ts/crypto/pyjson.ts, crates/core/src/pyjson.rs). The text is parsed as strictly as `jcs` parses
   * (JSON_SYNTAX for a text that is not a JSON object), but integers are exact at any size; both
   * backends throw the same CryptoError code and message for every text.
   */
  protocolId(specText: string): string;

  /** Public key of the Ed25519 key pair with this 32-byte seed. */
  ed25519PublicKey(seed: Uint8Array): Uint8Array;
  /** The key pair for this 32-byte seed; prefer it to ed25519Sign when signing more than once. */
  ed25519Keypair(seed: Uint8Array): Ed25519Keypair;
  /** Deterministic RFC 8032 signature (64 bytes). */
  ed25519Sign(seed: Uint8Array, message: Uint8Array): Uint8Array;
  /** Strict verification (policy in crates/core/src/ed25519.rs); false for anything that does not verify. */
  ed25519Verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
  /** Like ed25519Verify, but throws the reason: BAD_LENGTH, PUBLIC_KEY_INVALID or SIGNATURE_INVALID. */
  ed25519Check(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): void;
  /** Strict verification of each item on its own, in one call; one boolean per item. */
  ed25519VerifyMany(items: readonly SignatureItem[]): boolean[];

  /** ciphertext || 16-byte tag. Nonce: 12 bytes (chacha20-poly1305) or 24 (xchacha20-poly1305). */
  aeadSeal(cipher: AeadCipher, key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): Uint8Array;
  /** The plaintext, or CryptoError AEAD_OPEN_FAILED. */
  aeadOpen(cipher: AeadCipher, key: Uint8Array, nonce: Uint8Array, sealed: Uint8Array, aad?: Uint8Array): Uint8Array;

  x25519PublicKey(privateKey: Uint8Array): Uint8Array;
  /** Refuses (X25519_LOW_ORDER) the all-zero secret a small-order peer key yields. */
  x25519SharedSecret(privateKey: Uint8Array, publicKey: Uint8Array): Uint8Array;

  /** The X25519 public key of an Ed25519 public key, u = (1 + y) / (1 - y); PUBLIC_KEY_INVALID unless a canonical point. */
  ed25519PublicToX25519(publicKey: Uint8Array): Uint8Array;
  /** The X25519 private key of an Ed25519 seed: SHA-512(seed)[0..32], clamped. */
  ed25519SeedToX25519(seed: Uint8Array): Uint8Array;
  /**
   * The reference's AGBX1 sealed box to an Ed25519 identity (sender anonymous): "AGBX1" ‖ ephemeral
   * X25519 key ‖ 12-byte nonce ‖ ChaCha20-Poly1305 under HKDF-SHA256(shared, info aigenora-inbox-v1).
   * A fresh ephemeral key and nonce from the platform's CSPRNG each time.
   */
  boxSeal(recipientPublicKey: Uint8Array, plaintext: Uint8Array): Uint8Array;
  /** boxSeal with the caller's ephemeral X25519 private key and nonce (vectors; never reuse either). */
  boxSealWith(recipientPublicKey: Uint8Array, plaintext: Uint8Array, ephemeralPrivate: Uint8Array, nonce: Uint8Array): Uint8Array;
  /**
   * The plaintext of a box, with the recipient's Ed25519 seed. Refuses BOX_TOO_SHORT (under 65 bytes)
   * and BOX_BAD_MAGIC before any cryptography, then X25519_LOW_ORDER (ephemeral key of small order)
   * and AEAD_OPEN_FAILED (tampered, or sealed to another key).
   */
  boxOpen(recipientSeed: Uint8Array, boxed: Uint8Array): Uint8Array;
  /**
   * The registration proof of work: the smallest counter >= 0 whose SHA-256 of
   * utf8(nonce + publicKey + decimal(counter)) starts with `difficulty` zero bytes (0..4, else
   * POW_DIFFICULTY_RANGE).
   */
  powSolve(nonce: string, publicKey: string, difficulty: number): number;
  /** Whether `counter` meets the difficulty (POW_COUNTER_INVALID unless a safe integer >= 0). */
  powCheck(nonce: string, publicKey: string, counter: number, difficulty: number): boolean;

  /** lowerhex(SHA-256(utf8(choice + ":" + nonce))). */
  commit(choice: string, nonce: string): string;
  /** Constant-time check that (choice, nonce) opens `commitment`. */
  verifyReveal(commitment: string, choice: string, nonce: string): boolean;

  /** The mental-poker deck layers and play check (deck.ts). */
  readonly deck: Deck;
  /** The Blind-RSA token oblivious transfer of mental poker (ot.ts). */
  readonly ot: Ot;
}
