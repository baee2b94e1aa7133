/**
 * The `wasm` backend: the Rust core through the wasm-bindgen bindings. Both the Node build
 * (bindings/node) and the browser build (bindings/web) export the same functions; the loaders in
 * node.ts and browser.ts hand them to `wasmBackend`.
 *
 * The bindings are four WebAssembly modules: the core crypto (aigenora_wasm, every consumer's), and
 * three feature modules that only some consumers use and that would otherwise more than double what
 * every page fetches: `mp` (mental poker's deck and OT, RSA arithmetic), `gojson` (rin's Go JSON) and
 * `pyjson` (protocol_id). The backend asks its loader for a feature module on the first call that
 * needs it: Node's loads it synchronously, the browser's answers it once `loadCryptoFeature` has
 * fetched it and throws WASM_FEATURE_NOT_LOADED before.
 *
 * The core returns errors and never panics, and canonical JSON allocates fallibly (OUT_OF_MEMORY).
 * What is left is an allocation it does not control failing, such as the copy of an argument into
 * WebAssembly memory when the instance's 4 GiB are used up: Rust aborts, which WebAssembly reports as
 * a RuntimeError trap. A trap leaves the instance's stack and allocator in an unknown state, so it
 * becomes WASM_TRAP for that call and for every later one on this backend (all its modules: which
 * one trapped matters less than never calling into an unknown state).
 */
import type { AeadCipher, Crypto, CryptoFeature, SignatureItem } from './backend.js';
import { checkPowCounter, checkPowDifficulty, randomSeal } from './box.js';
import { checkPlayIds, isPlayRejection, type Deck } from './deck.js';
import { badLength, CryptoError, disposed, fromWasmError } from './errors.js';
import { checkWireText, GO_JSON_ERROR_CODES, GoJsonError, type GoJsonErrorCode } from './gojson.js';
import { checkText, stringifyStrict, wellFormed } from './jcs.js';
import { isWellFormed } from './unicode.js';
import {
  checkContextInput,
  checkCounter,
  checkKeyExponent,
  keygenFailed,
  platformKeyParts,
  randomBytes,
  rsaPubText,
  RSA_BYTES,
  RSA_E,
  type Ot,
  type RsaKey,
} from './ot.js';

interface WasmKeypair {
  public_key(): Uint8Array;
  sign(message: Uint8Array): Uint8Array;
  sign_many(messages: Uint8Array, lengths: Uint32Array): Uint8Array;
  free(): void;
}

interface WasmOtRsaKey {
  n(): Uint8Array;
  private_op(x: Uint8Array): Uint8Array;
  token(context: Uint8Array): Uint8Array;
  seal_label(context: Uint8Array, payload: Uint8Array, nonce: Uint8Array): Uint8Array;
  numbers(): Uint8Array;
  free(): void;
}

/** The core module's exports (crates/wasm, the shape of bindings/{node,web}/aigenora_wasm.d.ts). */
export interface WasmExports {
  Ed25519Keypair: new (seed: Uint8Array) => WasmKeypair;
  /** The JSON text as UTF-8 (see utf8In). */
  jcs_canonicalize(utf8: Uint8Array): Uint8Array;
  jcs_sha256(utf8: Uint8Array): Uint8Array;
  sha256(data: Uint8Array): Uint8Array;
  jcs_first_member_sha256(utf8: Uint8Array, name: string): Uint8Array;
  sha256_shared(prefix: Uint8Array, rests: Uint8Array, restLengths: Uint32Array): Uint8Array;
  sha512(data: Uint8Array): Uint8Array;
  ed25519_public_key(seed: Uint8Array): Uint8Array;
  ed25519_sign(seed: Uint8Array, message: Uint8Array): Uint8Array;
  ed25519_verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): void;
  ed25519_is_valid(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
  ed25519_verify_many(publicKeys: Uint8Array, messages: Uint8Array, messageLengths: Uint32Array, signatures: Uint8Array): Uint8Array;
  wasm_memory(): WebAssembly.Memory;
  aead_scratch(len: number): number;
  aead_seal_scratch(xchacha: boolean, keyLen: number, nonceLen: number, aadLen: number, textLen: number): number;
  aead_open_scratch(xchacha: boolean, keyLen: number, nonceLen: number, aadLen: number, sealedLen: number): number;
  x25519_shared_secret(privateKey: Uint8Array, publicKey: Uint8Array): Uint8Array;
  x25519_public_key(privateKey: Uint8Array): Uint8Array;
  ed25519_public_to_x25519(publicKey: Uint8Array): Uint8Array;
  ed25519_seed_to_x25519(seed: Uint8Array): Uint8Array;
  box_seal(recipientPublicKey: Uint8Array, ephemeralPrivate: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array): Uint8Array;
  box_open(recipientSeed: Uint8Array, boxed: Uint8Array): Uint8Array;
  pow_solve(nonce: string, publicKey: string, difficulty: number): number;
  pow_check(nonce: string, publicKey: string, counter: number, difficulty: number): boolean;
  commit_reveal_commit(choice: string, nonce: string): string;
  commit_reveal_verify(commitment: string, choice: string, nonce: string): boolean;
}

/** The mental-poker module's exports (crates/wasm-mp, aigenora_wasm_mp). */
export interface WasmMpExports {
  OtRsaKey: {
    from_parts(
      n: Uint8Array,
      e: number,
      d: Uint8Array,
      p: Uint8Array,
      q: Uint8Array,
      dp: Uint8Array,
      dq: Uint8Array,
      qi: Uint8Array,
      blindSecret: Uint8Array,
    ): WasmOtRsaKey;
  };
  deck_encode_card(rank: number, suit: number): Uint8Array;
  deck_pack_inner(card: Uint8Array, pad: Uint8Array): Uint8Array;
  deck_seal_inner(kInner: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array): Uint8Array;
  deck_seal_outer(kOuter: Uint8Array, nonce: Uint8Array, blobA: Uint8Array): Uint8Array;
  deck_open_layer(key: Uint8Array, blob: Uint8Array): Uint8Array;
  deck_brute_force_open(blob: Uint8Array, candidates: Uint8Array): number | undefined;
  deck_validate_play(
    hand: string[],
    played: string[],
    idB: string,
    declaredCard: Uint8Array,
    kInner: Uint8Array,
    kOuter: Uint8Array,
    blobB: Uint8Array,
  ): string | undefined;
  ot_context(protocolId: string, sessionId: string, senderRole: number, payloadType: number, label: string): Uint8Array;
  ot_fdh(n: Uint8Array, context: Uint8Array): Uint8Array;
  ot_fdh_candidate(context: Uint8Array, counter: number): Uint8Array;
  ot_token_key(token: Uint8Array, context: Uint8Array): Uint8Array;
  ot_seal_payload(key: Uint8Array, nonce: Uint8Array, payload: Uint8Array, context: Uint8Array): Uint8Array;
  ot_open_payload(key: Uint8Array, sealed: Uint8Array, context: Uint8Array): Uint8Array;
  ot_open_sealed(token: Uint8Array, context: Uint8Array, sealed: Uint8Array): Uint8Array;
  ot_is_unit(n: Uint8Array, r: Uint8Array): boolean;
  ot_blind(n: Uint8Array, context: Uint8Array, r: Uint8Array): Uint8Array;
  ot_unblind(n: Uint8Array, y: Uint8Array, r: Uint8Array): Uint8Array;
  ot_check_witness(n: Uint8Array, context: Uint8Array, z: Uint8Array, r: Uint8Array): boolean;
  ot_check_token(n: Uint8Array, context: Uint8Array, token: Uint8Array): boolean;
  ot_encode_rsa_pub(n: Uint8Array): string;
  ot_decode_rsa_pub(text: string): Uint8Array;
}

/** The Go JSON module's exports (crates/wasm-gojson, aigenora_wasm_gojson). */
export interface WasmGoJsonExports {
  gojson_canonicalize(text: Uint8Array): Uint8Array;
  gojson_sha256(text: Uint8Array): Uint8Array;
}

/** The protocol_id module's exports (crates/wasm-pyjson, aigenora_wasm_pyjson). */
export interface WasmPyJsonExports {
  protocol_id(specText: string): string;
}

/** The feature modules, loaded when a call first needs one (see the top of this file). */
export interface WasmFeatureExports {
  mp: WasmMpExports;
  gojson: WasmGoJsonExports;
  pyjson: WasmPyJsonExports;
}

export type WasmFeature = CryptoFeature & keyof WasmFeatureExports;

/**
 * A feature module's exports, or a CryptoError saying how to get them (`method` is the Crypto method
 * that needs it, for the message). Asked again on each call until it answers.
 */
export type WasmFeatureLoader = <F extends WasmFeature>(feature: F, method: string) => WasmFeatureExports[F];

/** The loader of a backend given the core module only. */
const noFeatures: WasmFeatureLoader = (feature, method) => {
  throw new CryptoError('WASM_FEATURE_NOT_LOADED', `${method} needs the '${feature}' WASM module, which this backend was made without`);
};

const EMPTY = new Uint8Array(0);
const encoder = new TextEncoder();

// A JSON text goes into WebAssembly as UTF-8 written by one native encodeInto into this buffer, which
// the bindings then copy at once: half the cost of their own copying of a string, character by
// character up to the first non-ASCII one. Reused, since the bindings copy it before the call.
const SCRATCH_MAX = 1 << 20;
let scratch = new Uint8Array(1 << 12);

/** The UTF-8 of a text already checked to be well formed (checkText), valid until the next call. */
function utf8In(text: string): Uint8Array {
  // A UTF-16 unit is at most three UTF-8 bytes.
  const room = text.length * 3;
  if (room > scratch.length) {
    if (room > SCRATCH_MAX) return encoder.encode(text);
    scratch = new Uint8Array(Math.min(SCRATCH_MAX, Math.max(room, scratch.length * 2)));
  }
  return scratch.subarray(0, encoder.encodeInto(text, scratch).written);
}

/**
 * Runs a gojson export, turning its error (`"CODE: <path as JSON>\n<message>\n<detail>"`, see
 * crates/wasm) into the GoJsonError the js backend throws for the same text.
 */
function goJsonCall<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    const text = e instanceof Error ? e.message : '';
    const m = /^(JSON_[A-Z0-9]+): (\[[^\n]*\])\n([^\n]*)\n([\s\S]*)$/.exec(text);
    if (m && (GO_JSON_ERROR_CODES as readonly string[]).includes(m[1]!)) {
      throw new GoJsonError(m[1] as GoJsonErrorCode, JSON.parse(m[2]!) as Array<string | number>, m[3]!, m[4]!);
    }
    throw e;
  }
}

// Batch calls pack their inputs into views of this buffer, which the bindings copy into WebAssembly
// memory before the call, so it is free again when the call returns: Node pays about 0.8 µs for each
// fresh ArrayBuffer over 64 bytes (see encoding.ts), several a batch. Large batches get their own.
const BATCH_MAX = 1 << 16;
let batch = new Uint8Array(1 << 11);

/** A view of `size` bytes of the batch buffer (or a fresh array when large), valid until the next call. */
function batchBytes(size: number): Uint8Array {
  if (size > BATCH_MAX) return new Uint8Array(size);
  if (size > batch.length) batch = new Uint8Array(Math.min(BATCH_MAX, Math.max(size, batch.length * 2)));
  return batch.subarray(0, size);
}

/**
 * Messages laid end to end, with each one's length, as the core's batch calls take them, after `head`
 * bytes left for the caller in the same view (valid until the next call).
 */
function packMessages(messages: readonly Uint8Array[], head = 0): { head: Uint8Array; messages: Uint8Array; lengths: Uint32Array } {
  const lengths = new Uint32Array(messages.length);
  let total = 0;
  for (let i = 0; i < messages.length; i++) total += lengths[i] = messages[i]!.length;
  const all = batchBytes(head + total);
  for (let i = 0, at = head; i < messages.length; at += lengths[i++]!) all.set(messages[i]!, at);
  return { head: all.subarray(0, head), messages: all.subarray(head), lengths };
}

function packMany(items: readonly SignatureItem[]) {
  const n = items.length;
  const packed = packMessages(
    items.map((it) => it.message),
    n * 96,
  );
  const keys = packed.head.subarray(0, n * 32);
  const sigs = packed.head.subarray(n * 32);
  // Items of the wrong size are answered false here rather than failing the whole batch (their
  // slots are zeroed: the buffer holds an earlier call's bytes).
  const wellSized = new Array<boolean>(n);
  for (let i = 0; i < n; i++) {
    const it = items[i]!;
    wellSized[i] = it.publicKey.length === 32 && it.signature.length === 64;
    if (wellSized[i]) {
      keys.set(it.publicKey, i * 32);
      sigs.set(it.signature, i * 64);
    } else {
      keys.fill(0, i * 32, i * 32 + 32);
      sigs.fill(0, i * 64, i * 64 + 64);
    }
  }
  return { keys, sigs, wellSized, messages: packed.messages, lengths: packed.lengths };
}

/** Where the AEAD scratch of one instance is, as JavaScript last saw it. */
interface Scratch {
  memory: WebAssembly.Memory;
  bytes: Uint8Array;
  at: number;
  size: number;
}

// Per instance (its memory), not per wasmBackend() nor per exports object: two wrappers of one instance
// share its scratch, and one growing it moves it under the other.
const scratches = new WeakMap<WebAssembly.Memory, Scratch>();

/** Each call's region: key, nonce, aad, text, then room for the tag (see SCRATCH in crates/wasm). */
const TAG_LEN = 16;
const MAX_SCRATCH = 0xffff_ffff;

/**
 * Seal and open through the instance's scratch: each input is copied in with one `set`, the call
 * allocates nothing, the output is copied out with one `slice`. A view of the memory is taken again
 * whenever the memory has grown (growth detaches the previous buffer).
 */
function wasmAead(w: WasmExports) {
  let sc: Scratch | undefined;
  const view = (s: Scratch) => (s.bytes.buffer === s.memory.buffer ? s.bytes : (s.bytes = new Uint8Array(s.memory.buffer)));

  /** Writes the inputs in; answers where the text starts. */
  function place(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, text: Uint8Array): number {
    if (!sc) {
      const memory = w.wasm_memory();
      sc = scratches.get(memory);
      if (!sc) scratches.set(memory, (sc = { memory, bytes: new Uint8Array(memory.buffer), at: 0, size: 0 }));
    }
    const need = key.length + nonce.length + aad.length + text.length + TAG_LEN;
    if (need > MAX_SCRATCH) throw new CryptoError('OUT_OF_MEMORY', `an AEAD input of ${text.length} bytes does not fit in WASM memory`);
    if (need > sc.size) {
      sc.at = w.aead_scratch(need);
      sc.size = need;
    }
    const m = view(sc);
    let at = sc.at;
    m.set(key, at);
    m.set(nonce, (at += key.length));
    at += nonce.length;
    if (aad.length > 0) m.set(aad, at);
    m.set(text, (at += aad.length));
    return at;
  }

  return {
    seal(x: boolean, key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Uint8Array {
      const at = place(key, nonce, aad, plaintext);
      const n = w.aead_seal_scratch(x, key.length, nonce.length, aad.length, plaintext.length);
      return view(sc!).slice(at, at + n);
    },
    open(x: boolean, key: Uint8Array, nonce: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Uint8Array {
      const at = place(key, nonce, aad, sealed);
      const n = w.aead_open_scratch(x, key.length, nonce.length, aad.length, sealed.length);
      const m = view(sc!);
      const out = m.slice(at, at + n);
      // The plaintext is the caller's now; the scratch outlives the call and keeps none of it.
      m.fill(0, at, at + n);
      return out;
    },
  };
}

/**
 * The backend over the core module `w`; `features` answers the feature modules (see the top of this
 * file), by default none: a feature call then throws WASM_FEATURE_NOT_LOADED.
 */
export function wasmBackend(w: WasmExports, features: WasmFeatureLoader = noFeatures): Crypto {
  const xchacha = (c: AeadCipher) => c === 'xchacha20-poly1305';
  const aead = wasmAead(w);
  let trap: string | undefined;
  const loaded: Partial<WasmFeatureExports> = {};
  /** The feature module `method` needs, kept once answered; a refusal is not kept (it may be loaded later). */
  function need<F extends WasmFeature>(feature: F, method: string): WasmFeatureExports[F] {
    return (loaded[feature] ??= features(feature, method)) as WasmFeatureExports[F];
  }

  /** Runs `f` on the instance, converting the core's `"CODE: message"` exceptions and traps into CryptoError. */
  function call<T>(f: () => T): T {
    if (trap !== undefined)
      throw new CryptoError('WASM_TRAP', `the WASM instance trapped earlier (${trap}) and is no longer used; restart the process or use the js backend`);
    try {
      return f();
    } catch (e) {
      if (e instanceof CryptoError) throw e;
      if (e instanceof WebAssembly.RuntimeError) {
        trap = e.message;
        throw new CryptoError('WASM_TRAP', `the WASM instance trapped (${trap}; most likely its memory is exhausted); it is no longer used`);
      }
      throw fromWasmError(e);
    }
  }

  return {
    backend: 'wasm',
    sha256: (data) => call(() => w.sha256(data)),
    sha256Shared: (prefix, rests, restLengths) => call(() => w.sha256_shared(prefix, rests, restLengths)),
    sha512: (data) => call(() => w.sha512(data)),
    // Size and well-formedness are checked before the text is copied into WebAssembly memory.
    jcs: (text) => call(() => w.jcs_canonicalize(utf8In(checkText(text)))),
    jcsSha256: (text) => call(() => w.jcs_sha256(utf8In(checkText(text)))),
    jcsFirstMemberSha256(text, name) {
      const h = call(() => w.jcs_first_member_sha256(utf8In(checkText(text)), name));
      return h.length === 0 ? undefined : h;
    },
    // JSON.stringify escapes lone surrogates as \udXXX, which the core then refuses.
    jcsValue: (value) => call(() => w.jcs_canonicalize(utf8In(checkText(stringifyStrict(value))))),
    jcsValueSha256: (value) => call(() => w.jcs_sha256(utf8In(checkText(stringifyStrict(value))))),
    // Size and well-formedness are checked (JSON_SIZE, JSON_UTF8) before the text is copied in as UTF-8.
    goCanonicalJson: (text) => call(() => goJsonCall(() => need('gojson', 'goCanonicalJson').gojson_canonicalize(encoder.encode(checkWireText(text))))),
    goCanonicalJsonSha256: (text) => call(() => goJsonCall(() => need('gojson', 'goCanonicalJsonSha256').gojson_sha256(encoder.encode(checkWireText(text))))),
    // Size and well-formedness are checked (JSON_TOO_LARGE, JSON_LONE_SURROGATE) before the text is copied in.
    protocolId: (specText) => call(() => need('pyjson', 'protocolId').protocol_id(checkText(specText))),

    ed25519PublicKey: (seed) => call(() => w.ed25519_public_key(seed)),
    ed25519Keypair(seed) {
      let kp: WasmKeypair | undefined = call(() => new w.Ed25519Keypair(seed));
      const publicKey = call(() => kp!.public_key());
      return {
        publicKey,
        sign(message) {
          if (!kp) throw disposed();
          return call(() => kp!.sign(message));
        },
        signMany(messages) {
          if (!kp) throw disposed();
          const packed = packMessages(messages);
          const signatures = call(() => kp!.sign_many(packed.messages, packed.lengths));
          return Array.from({ length: messages.length }, (_, i) => signatures.subarray(64 * i, 64 * i + 64));
        },
        dispose() {
          if (kp && trap === undefined) kp.free();
          kp = undefined;
        },
      };
    },
    ed25519Sign: (seed, message) => call(() => w.ed25519_sign(seed, message)),
    ed25519Verify: (publicKey, message, signature) => call(() => w.ed25519_is_valid(publicKey, message, signature)),
    ed25519Check: (publicKey, message, signature) => call(() => w.ed25519_verify(publicKey, message, signature)),
    ed25519VerifyMany(items) {
      // One item has nothing to share: the single call, without packing a batch.
      if (items.length === 1) return [call(() => w.ed25519_is_valid(items[0]!.publicKey, items[0]!.message, items[0]!.signature))];
      const p = packMany(items);
      const ok = call(() => w.ed25519_verify_many(p.keys, p.messages, p.lengths, p.sigs));
      return p.wellSized.map((sized, i) => sized && ok[i] === 1);
    },

    aeadSeal: (cipher, key, nonce, plaintext, aad = EMPTY) => call(() => aead.seal(xchacha(cipher), key, nonce, plaintext, aad)),
    aeadOpen: (cipher, key, nonce, sealed, aad = EMPTY) => call(() => aead.open(xchacha(cipher), key, nonce, sealed, aad)),

    x25519PublicKey: (privateKey) => call(() => w.x25519_public_key(privateKey)),
    x25519SharedSecret: (privateKey, publicKey) => call(() => w.x25519_shared_secret(privateKey, publicKey)),

    ed25519PublicToX25519: (publicKey) => call(() => w.ed25519_public_to_x25519(publicKey)),
    ed25519SeedToX25519: (seed) => call(() => w.ed25519_seed_to_x25519(seed)),
    boxSeal: randomSeal((pk, plaintext, eph, nonce) => call(() => w.box_seal(pk, eph, nonce, plaintext))),
    boxSealWith: (pk, plaintext, eph, nonce) => call(() => w.box_seal(pk, eph, nonce, plaintext)),
    boxOpen: (seed, boxed) => call(() => w.box_open(seed, boxed)),
    // Strings are checked here: the bindings would replace a lone surrogate with U+FFFD silently.
    powSolve: (nonce, publicKey, difficulty) => call(() => w.pow_solve(wellFormed(nonce), wellFormed(publicKey), checkPowDifficulty(difficulty))),
    powCheck: (nonce, publicKey, counter, difficulty) =>
      call(() => w.pow_check(wellFormed(nonce), wellFormed(publicKey), checkPowCounter(counter), checkPowDifficulty(difficulty))),

    commit: (choice, nonce) => call(() => w.commit_reveal_commit(wellFormed(choice), wellFormed(nonce))),
    verifyReveal: (commitment, choice, nonce) => isWellFormed(choice) && isWellFormed(nonce) && call(() => w.commit_reveal_verify(commitment, choice, nonce)),

    deck: wasmDeck(() => need('mp', 'Crypto.deck'), call),
    ot: wasmOt(
      () => need('mp', 'Crypto.ot'),
      call,
      () => trap === undefined,
    ),
  };
}

function wasmDeck(mp: () => WasmMpExports, call: <T>(f: () => T) => T): Deck {
  return {
    encodeCard: (rank, suit) => call(() => mp().deck_encode_card(rank, suit)),
    packInner: (card, pad) => call(() => mp().deck_pack_inner(card, pad)),
    sealInner: (kInner, nonce, plaintext) => call(() => mp().deck_seal_inner(kInner, nonce, plaintext)),
    sealOuter: (kOuter, nonce, blobA) => call(() => mp().deck_seal_outer(kOuter, nonce, blobA)),
    openLayer: (key, blob) => call(() => mp().deck_open_layer(key, blob)),
    bruteForceOpen(blob, candidates) {
      // Each key is checked here: packed back to back, a 31- and a 33-byte key would pass as two of 32.
      for (const k of candidates) if (k.length !== 32) throw badLength('candidate key', 32, k.length);
      const packed = new Uint8Array(candidates.length * 32);
      candidates.forEach((k, i) => packed.set(k, i * 32));
      const index = call(() => mp().deck_brute_force_open(blob, packed));
      return index === undefined ? null : { index, plaintext: call(() => mp().deck_open_layer(candidates[index]!, blob)) };
    },
    validatePlay(c) {
      checkPlayIds(c);
      const reason = call(() => mp().deck_validate_play([...c.hand], [...c.played], c.idB, c.declaredCard, c.kInner, c.kOuter, c.blobB));
      if (reason === undefined) return { ok: true, reason: null };
      if (!isPlayRejection(reason)) throw new Error(`the WASM core answered an unknown play rejection ${JSON.stringify(reason)}`);
      return { ok: false, reason };
    },
  };
}

function wasmOt(mp: () => WasmMpExports, call: <T>(f: () => T) => T, alive: () => boolean): Ot {
  const HALF = RSA_BYTES / 2;
  function wrap(key: WasmOtRsaKey): RsaKey {
    let k: WasmOtRsaKey | undefined = key;
    const live = () => {
      if (!k) throw disposed();
      return k;
    };
    const n = call(() => key.n());
    return {
      n,
      rsaPub: call(() => mp().ot_encode_rsa_pub(n)),
      privateOp: (x) => call(() => live().private_op(x)),
      token: (context) => call(() => live().token(context)),
      sealLabel(context, payload, nonce) {
        const out = call(() => live().seal_label(context, payload, nonce));
        return { token: out.slice(0, RSA_BYTES), sealed: out.slice(RSA_BYTES) };
      },
      exportParts() {
        const b = call(() => live().numbers());
        const at = (i: number) => b.slice(2 * RSA_BYTES + i * HALF, 2 * RSA_BYTES + (i + 1) * HALF);
        return { n: b.slice(0, RSA_BYTES), e: RSA_E, d: b.slice(RSA_BYTES, 2 * RSA_BYTES), p: at(0), q: at(1), dp: at(2), dq: at(3), qi: at(4) };
      },
      dispose() {
        if (k && alive()) k.free();
        k = undefined;
      },
    };
  }
  const importKey: Ot['importKey'] = (p) => {
    checkKeyExponent(p.e);
    return wrap(call(() => mp().OtRsaKey.from_parts(p.n, p.e, p.d, p.p, p.q, p.dp, p.dq, p.qi, randomBytes(32))));
  };
  return {
    context(c) {
      checkContextInput(c);
      return call(() => mp().ot_context(c.protocolId, c.sessionId, c.senderRole, c.payloadType, c.label));
    },
    fdh(n, context) {
      const out = call(() => mp().ot_fdh(n, context));
      return { h: out.slice(0, RSA_BYTES), counter: new DataView(out.buffer, out.byteOffset + RSA_BYTES, 4).getUint32(0) };
    },
    fdhCandidate(context, counter) {
      checkCounter(counter);
      return call(() => mp().ot_fdh_candidate(context, counter));
    },
    async generateKey(options) {
      if (options?.via === 'backend') throw keygenFailed('the wasm backend has no RSA key generator of its own; keys come from the platform');
      return importKey(await platformKeyParts());
    },
    importKey,
    tokenKey: (token, context) => call(() => mp().ot_token_key(token, context)),
    sealPayload: (key, nonce, payload, context) => call(() => mp().ot_seal_payload(key, nonce, payload, context)),
    openPayload: (key, sealed, context) => call(() => mp().ot_open_payload(key, sealed, context)),
    openSealed: (token, context, sealed) => call(() => mp().ot_open_sealed(token, context, sealed)),
    randomUnit(n) {
      for (let i = 0; i < 128; i++) {
        const r = randomBytes(RSA_BYTES);
        if (call(() => mp().ot_is_unit(n, r))) return r;
      }
      throw new CryptoError('OT_NOT_UNIT', 'no unit found in 128 draws');
    },
    blind: (n, context, r) => call(() => mp().ot_blind(n, context, r)),
    unblind: (n, y, r) => call(() => mp().ot_unblind(n, y, r)),
    checkWitness: (n, context, z, r) => call(() => mp().ot_check_witness(n, context, z, r)),
    checkToken: (n, context, token) => call(() => mp().ot_check_token(n, context, token)),
    encodeRsaPub: (n) => call(() => mp().ot_encode_rsa_pub(n)),
    decodeRsaPub: (wire) => ({ e: RSA_E, n: call(() => mp().ot_decode_rsa_pub(rsaPubText(wire))) }),
  };
}
