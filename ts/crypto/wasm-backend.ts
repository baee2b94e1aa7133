/**
 * The `wasm` backend: the Rust core through the wasm-bindgen bindings. Both the Node build
 * (bindings/node) and the browser build (bindings/web) export the same functions; the loaders in
 * node.ts and browser.ts hand them to `wasmBackend`.
 *
 * The core returns errors and never panics, and canonical JSON allocates fallibly (OUT_OF_MEMORY).
 * What is left is an allocation it does not control failing, such as the copy of an argument into
 * WebAssembly memory when the instance's 4 GiB are used up: Rust aborts, which WebAssembly reports as
 * a RuntimeError trap. A trap leaves the instance's stack and allocator in an unknown state, so it
 * becomes WASM_TRAP for that call and for every later one on this instance.
 */
import type { AeadCipher, Crypto, SignatureItem } from './backend.js';
import { checkPlayIds, isPlayRejection, type Deck } from './deck.js';
import { badLength, CryptoError, disposed, fromWasmError } from './errors.js';
import { checkText, isWellFormed, stringifyStrict, wellFormed } from './jcs.js';

/** The functions crates/wasm exports (the shape of bindings/{node,web}/aigenora_wasm.d.ts). */
interface WasmKeypair {
  public_key(): Uint8Array;
  sign(message: Uint8Array): Uint8Array;
  free(): void;
}

export interface WasmExports {
  Ed25519Keypair: new (seed: Uint8Array) => WasmKeypair;
  jcs_canonicalize(text: string): Uint8Array;
  jcs_sha256(text: string): Uint8Array;
  sha256(data: Uint8Array): Uint8Array;
  sha512(data: Uint8Array): Uint8Array;
  ed25519_public_key(seed: Uint8Array): Uint8Array;
  ed25519_sign(seed: Uint8Array, message: Uint8Array): Uint8Array;
  ed25519_verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): void;
  ed25519_is_valid(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
  ed25519_verify_many(publicKeys: Uint8Array, messages: Uint8Array, messageLengths: Uint32Array, signatures: Uint8Array): Uint8Array;
  aead_seal(xchacha: boolean, key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Uint8Array;
  aead_open(xchacha: boolean, key: Uint8Array, nonce: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Uint8Array;
  x25519_shared_secret(privateKey: Uint8Array, publicKey: Uint8Array): Uint8Array;
  x25519_public_key(privateKey: Uint8Array): Uint8Array;
  commit_reveal_commit(choice: string, nonce: string): string;
  commit_reveal_verify(commitment: string, choice: string, nonce: string): boolean;
  deck_encode_card(rank: number, suit: number): Uint8Array;
  deck_pack_inner(card: Uint8Array, pad: Uint8Array): Uint8Array;
  deck_seal_inner(kInner: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array): Uint8Array;
  deck_seal_outer(kOuter: Uint8Array, nonce: Uint8Array, blobA: Uint8Array): Uint8Array;
  deck_open_layer(key: Uint8Array, blob: Uint8Array): Uint8Array;
  deck_brute_force_open(blob: Uint8Array, candidates: Uint8Array): number | undefined;
  deck_validate_play(hand: string[], played: string[], idB: string, declaredCard: Uint8Array, kInner: Uint8Array, kOuter: Uint8Array, blobB: Uint8Array): string | undefined;
}

const EMPTY = new Uint8Array(0);

function packMany(items: readonly SignatureItem[]) {
  const n = items.length;
  const keys = new Uint8Array(n * 32);
  const sigs = new Uint8Array(n * 64);
  const lengths = new Uint32Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) total += items[i]!.message.length;
  const messages = new Uint8Array(total);
  // Items of the wrong size are answered false here rather than failing the whole batch.
  const wellSized = new Array<boolean>(n);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const it = items[i]!;
    wellSized[i] = it.publicKey.length === 32 && it.signature.length === 64;
    if (wellSized[i]) {
      keys.set(it.publicKey, i * 32);
      sigs.set(it.signature, i * 64);
    }
    messages.set(it.message, at);
    lengths[i] = it.message.length;
    at += it.message.length;
  }
  return { keys, sigs, lengths, messages, wellSized };
}

export function wasmBackend(w: WasmExports): Crypto {
  const xchacha = (c: AeadCipher) => c === 'xchacha20-poly1305';
  let trap: string | undefined;

  /** Runs `f` on the instance, converting the core's `"CODE: message"` exceptions and traps into CryptoError. */
  function call<T>(f: () => T): T {
    if (trap !== undefined) throw new CryptoError('WASM_TRAP', `the WASM instance trapped earlier (${trap}) and is no longer used; restart the process or use the js backend`);
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
    sha512: (data) => call(() => w.sha512(data)),
    // Size and well-formedness are checked before the text is copied into WebAssembly memory.
    jcs: (text) => call(() => w.jcs_canonicalize(checkText(text))),
    jcsSha256: (text) => call(() => w.jcs_sha256(checkText(text))),
    // JSON.stringify escapes lone surrogates as \udXXX, which the core then refuses.
    jcsValue: (value) => call(() => w.jcs_canonicalize(checkText(stringifyStrict(value)))),
    jcsValueSha256: (value) => call(() => w.jcs_sha256(checkText(stringifyStrict(value)))),

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
      const p = packMany(items);
      const ok = call(() => w.ed25519_verify_many(p.keys, p.messages, p.lengths, p.sigs));
      return p.wellSized.map((sized, i) => sized && ok[i] === 1);
    },

    aeadSeal: (cipher, key, nonce, plaintext, aad = EMPTY) => call(() => w.aead_seal(xchacha(cipher), key, nonce, plaintext, aad)),
    aeadOpen: (cipher, key, nonce, sealed, aad = EMPTY) => call(() => w.aead_open(xchacha(cipher), key, nonce, sealed, aad)),

    x25519PublicKey: (privateKey) => call(() => w.x25519_public_key(privateKey)),
    x25519SharedSecret: (privateKey, publicKey) => call(() => w.x25519_shared_secret(privateKey, publicKey)),

    commit: (choice, nonce) => call(() => w.commit_reveal_commit(wellFormed(choice), wellFormed(nonce))),
    verifyReveal: (commitment, choice, nonce) => isWellFormed(choice) && isWellFormed(nonce) && call(() => w.commit_reveal_verify(commitment, choice, nonce)),

    deck: wasmDeck(w, call),
  };
}

function wasmDeck(w: WasmExports, call: <T>(f: () => T) => T): Deck {
  return {
    encodeCard: (rank, suit) => call(() => w.deck_encode_card(rank, suit)),
    packInner: (card, pad) => call(() => w.deck_pack_inner(card, pad)),
    sealInner: (kInner, nonce, plaintext) => call(() => w.deck_seal_inner(kInner, nonce, plaintext)),
    sealOuter: (kOuter, nonce, blobA) => call(() => w.deck_seal_outer(kOuter, nonce, blobA)),
    openLayer: (key, blob) => call(() => w.deck_open_layer(key, blob)),
    bruteForceOpen(blob, candidates) {
      // Each key is checked here: packed back to back, a 31- and a 33-byte key would pass as two of 32.
      for (const k of candidates) if (k.length !== 32) throw badLength('candidate key', 32, k.length);
      const packed = new Uint8Array(candidates.length * 32);
      candidates.forEach((k, i) => packed.set(k, i * 32));
      const index = call(() => w.deck_brute_force_open(blob, packed));
      return index === undefined ? null : { index, plaintext: call(() => w.deck_open_layer(candidates[index]!, blob)) };
    },
    validatePlay(c) {
      checkPlayIds(c);
      const reason = call(() => w.deck_validate_play([...c.hand], [...c.played], c.idB, c.declaredCard, c.kInner, c.kOuter, c.blobB));
      if (reason === undefined) return { ok: true, reason: null };
      if (!isPlayRejection(reason)) throw new Error(`the WASM core answered an unknown play rejection ${JSON.stringify(reason)}`);
      return { ok: false, reason };
    },
  };
}
