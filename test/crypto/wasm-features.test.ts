// The wasm backend's feature modules (mp, gojson, pyjson) as a browser loads them: the browser entry
// (ts/crypto/browser.ts) runs here on the web build of the bindings, with `fetch` answering the package's
// .wasm files from disk. Before loadCryptoFeature a feature call throws WASM_FEATURE_NOT_LOADED, naming
// the call to make; the instance keeps working meanwhile; after it, the feature answers as the js backend.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CryptoError, createCrypto, getCrypto, loadCryptoFeature, type Crypto } from '../../ts/crypto/browser.js';
import { jsBackend } from '../../ts/crypto/js-backend.js';
import { loadWasmNode } from '../../ts/crypto/node.js';
import { utf8 } from '../../ts/crypto/encoding.js';

const root = new URL('../../', import.meta.url);
const SPEC = readFileSync(new URL('ts/protocols/rps/spec.json', root), 'utf8');
const WIRE = '{"b":[1,2.50,"<&>"],"a":{"z":null,"y":true}}';
const OT_INPUT = { protocolId: 'a'.repeat(64), sessionId: 's1', senderRole: 1, payloadType: 1, label: 'card-3' } as const;

/** The URLs fetched, and the ones made to fail once. */
const fetched: string[] = [];
const failOnce = new Set<string>();

beforeAll(() => {
  vi.stubGlobal('fetch', async (input: URL | string) => {
    const url = String(input);
    fetched.push(url);
    if (failOnce.delete(url)) throw new TypeError(`network error for ${url}`);
    return new Response(readFileSync(fileURLToPath(url)), { headers: { 'content-type': 'application/wasm' } });
  });
});
afterAll(() => {
  vi.unstubAllGlobals();
});

function failure(f: () => unknown): CryptoError {
  try {
    f();
  } catch (e) {
    if (e instanceof CryptoError) return e;
    throw e;
  }
  throw new Error('expected a CryptoError, but the call returned');
}

const wasmName = (f: string) => new URL(`bindings/web/aigenora_wasm_${f}_bg.wasm`, root).href;

describe('the browser entry, before a feature module is loaded', () => {
  let c: Crypto;
  beforeAll(async () => {
    c = await createCrypto('wasm');
  });

  it('fetches the core module only', () => {
    expect(fetched).toEqual([new URL('bindings/web/aigenora_wasm_bg.wasm', root).href]);
  });

  it.each([
    ['pyjson', 'protocolId', () => c.protocolId(SPEC)],
    ['gojson', 'goCanonicalJson', () => c.goCanonicalJson(WIRE)],
    ['gojson', 'goCanonicalJsonSha256', () => c.goCanonicalJsonSha256(WIRE)],
    ['mp', 'Crypto.ot', () => c.ot.context(OT_INPUT)],
    ['mp', 'Crypto.ot', () => c.ot.decodeRsaPub({ e: 65537, n: 'AQAB' })],
    ['mp', 'Crypto.deck', () => c.deck.encodeCard(3, 1)],
  ] as const)("refuses a '%s' call (%s) with WASM_FEATURE_NOT_LOADED naming the call to make", (feature, method, call) => {
    const e = failure(call);
    expect(e.code).toBe('WASM_FEATURE_NOT_LOADED');
    expect(e.message).toContain(method);
    expect(e.message).toContain(`await loadCryptoFeature('${feature}')`);
  });

  it('refuses an async feature call the same way, as a rejection', async () => {
    await expect(c.ot.generateKey()).rejects.toMatchObject({ code: 'WASM_FEATURE_NOT_LOADED' });
  });

  it('keeps the instance working after those refusals', () => {
    expect(c.sha256(utf8('abc'))).toEqual(jsBackend.sha256(utf8('abc')));
    expect(c.jcs(WIRE)).toEqual(jsBackend.jcs(WIRE));
    const seed = new Uint8Array(32).fill(7);
    const sig = c.ed25519Sign(seed, utf8('m'));
    expect(c.ed25519Verify(c.ed25519PublicKey(seed), utf8('m'), sig)).toBe(true);
    expect(getCrypto('wasm')).toBe(c);
  });

  it('refuses an unknown feature name with WASM_UNAVAILABLE', async () => {
    await expect(loadCryptoFeature('rsa' as 'mp')).rejects.toMatchObject({ code: 'WASM_UNAVAILABLE' });
  });
});

describe('the browser entry, loading feature modules', () => {
  it('turns a failed fetch into WASM_UNAVAILABLE, and a later load succeeds', async () => {
    failOnce.add(wasmName('gojson'));
    await expect(loadCryptoFeature('gojson')).rejects.toMatchObject({ code: 'WASM_UNAVAILABLE' });
    expect(failure(() => getCrypto('wasm').goCanonicalJson(WIRE)).code).toBe('WASM_FEATURE_NOT_LOADED');
    const c = await loadCryptoFeature('gojson');
    expect(c).toBe(getCrypto('wasm'));
    expect(c.goCanonicalJson(WIRE)).toEqual(jsBackend.goCanonicalJson(WIRE));
    expect(c.goCanonicalJsonSha256(WIRE)).toEqual(jsBackend.goCanonicalJsonSha256(WIRE));
  });

  it('answers protocolId once pyjson is loaded, as the js backend does, and fetches it once', async () => {
    const c = await loadCryptoFeature('pyjson');
    await loadCryptoFeature('pyjson');
    expect(fetched.filter((u) => u === wasmName('pyjson'))).toHaveLength(1);
    expect(c.protocolId(SPEC)).toBe(jsBackend.protocolId(SPEC));
    expect(failure(() => c.protocolId('[')).code).toBe(failure(() => jsBackend.protocolId('[')).code);
  });

  it('runs the deck and OT once mp is loaded, as the js backend does', async () => {
    const c = await loadCryptoFeature('mp');
    expect(c.deck.encodeCard(3, 1)).toEqual(jsBackend.deck.encodeCard(3, 1));
    expect(c.ot.context(OT_INPUT)).toEqual(jsBackend.ot.context(OT_INPUT));
    expect(failure(() => c.deck.encodeCard(-1, 1)).code).toBe(failure(() => jsBackend.deck.encodeCard(-1, 1)).code);
    expect(c.sha256(utf8('abc'))).toEqual(jsBackend.sha256(utf8('abc')));
  });
});

describe('the Node loader', () => {
  it('loads each feature module on first use, with no call to make', () => {
    const c = loadWasmNode();
    expect(c.protocolId(SPEC)).toBe(jsBackend.protocolId(SPEC));
    expect(c.goCanonicalJson(WIRE)).toEqual(jsBackend.goCanonicalJson(WIRE));
    expect(c.deck.encodeCard(3, 1)).toEqual(jsBackend.deck.encodeCard(3, 1));
  });
});
