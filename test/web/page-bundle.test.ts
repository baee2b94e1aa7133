// What the agent page is bundled from (scripts/build-web.mjs): the precompiled validators of the
// built-ins it plays and no JSON Schema compiler, so its CSP allows no eval; none of the flow modes
// those built-ins lack, and not the pure-JS crypto backend; libp2p's keys for Ed25519 only and Noise's
// crypto without the ChaCha20-Poly1305 the WASM core does, each giving what the full module gives.
import { build, type Metafile } from 'esbuild';
import * as fullKeys from '@libp2p/crypto/keys';
import { defaultCrypto } from '@chainsafe/libp2p-noise/crypto';
import { peerIdFromString } from '@libp2p/peer-id';
import { describe, expect, it } from 'vitest';
import { CSP } from '../../ts/cli/web.js';
import { PAGE_HOOKS } from '../../ts/web/page-protocols.js';
import { PAGE_VALIDATORS } from '../../ts/web/page-validators.js';
// @ts-expect-error -- a plain .mjs build script without types
import { pageBuild } from '../../scripts/build-web.mjs';

describe('the agent page bundle', () => {
  it("is served under a CSP with 'wasm-unsafe-eval' and without 'unsafe-eval'", () => {
    const scripts = /script-src ([^;]*)/.exec(CSP)?.[1]?.split(' ');
    expect(scripts).toContain("'wasm-unsafe-eval'");
    expect(scripts).not.toContain("'unsafe-eval'");
  });

  it('carries the precompiled validators of exactly the built-ins the page plays', () => {
    expect(Object.keys(PAGE_VALIDATORS).sort()).toEqual(Object.keys(PAGE_HOOKS).sort());
  });

  it('holds no ajv, no eval, no mental-poker or realtime engine and no pure-JS crypto backend', async () => {
    const r = await build({ ...(pageBuild as object), write: false, metafile: true, sourcemap: false, outfile: 'agent.js' });
    const inputs = Object.keys((r.metafile as Metafile).inputs);
    expect(inputs.filter((f) => /node_modules\/(ajv|fast-uri|ajv-formats)\//.test(f))).toEqual([]);
    expect(
      inputs.filter((f) => /ts\/(spec\/compile|spec\/precompiled-validators|mp\/|realtime\/|engine\/modes\/(mental-poker|realtime)|crypto\/js-)/.test(f)),
    ).toEqual([]);
    expect(inputs.some((f) => f.endsWith('ts/web/no-compile.ts'))).toBe(true);
    expect(
      inputs.filter((f) =>
        /node_modules\/(@noble\/ciphers\/|@noble\/curves\/(secp256k1|nist|abstract\/weierstrass)|@libp2p\/crypto\/dist\/src\/keys\/(secp256k1|rsa|ecdsa)\/)/.test(
          f,
        ),
      ),
    ).toEqual([]);
    expect(inputs.filter((f) => f.startsWith('trimmed-libp2p:')).length).toBe(2);
    const text = r.outputFiles!.find((f) => f.path.endsWith('agent.js'))!.text;
    expect(text).not.toMatch(/new Function\b|\beval\(/);
  }, 60_000);

  it("bundles libp2p's keys and Noise's crypto trimmed, answering as the full modules do", async () => {
    const entry = `export * as keys from '@libp2p/crypto/keys';
export { defaultCrypto } from '@chainsafe/libp2p-noise/crypto';`;
    const p = pageBuild as { plugins: unknown[]; alias: Record<string, string> };
    const r = await build({
      stdin: { contents: entry, resolveDir: new URL('../../ts/web/', import.meta.url).pathname, loader: 'js' },
      bundle: true,
      format: 'esm',
      platform: 'browser',
      write: false,
      metafile: true,
      logLevel: 'silent',
      plugins: p.plugins as never,
      alias: p.alias,
    });
    expect(Object.keys((r.metafile as Metafile).inputs).filter((f) => f.startsWith('trimmed-libp2p:')).length).toBe(2);
    const page = (await import(`data:text/javascript;base64,${Buffer.from(r.outputFiles![0]!.text).toString('base64')}`)) as {
      keys: typeof fullKeys;
      defaultCrypto: typeof defaultCrypto;
    };
    const seed = new Uint8Array(32).map((_, i) => i * 7);
    const [mine, full] = await Promise.all([page.keys.generateKeyPairFromSeed('Ed25519', seed), fullKeys.generateKeyPairFromSeed('Ed25519', seed)]);
    expect(mine.raw).toEqual(full.raw);
    const pb = fullKeys.publicKeyToProtobuf(full.publicKey);
    expect(page.keys.publicKeyToProtobuf(mine.publicKey)).toEqual(pb);
    expect(page.keys.publicKeyFromProtobuf(pb).raw).toEqual(full.publicKey.raw);
    const peer = peerIdFromString('12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN');
    expect(page.keys.publicKeyFromMultihash(peer.toMultihash() as never).raw).toEqual(peer.publicKey!.raw);
    const msg = new Uint8Array([1, 2, 3]);
    expect(await page.keys.publicKeyFromProtobuf(pb).verify(msg, await full.sign(msg))).toBe(true);
    // Another key type (secp256k1, its protobuf) is refused with libp2p's error for a type it lacks.
    const secp = await fullKeys.generateKeyPair('secp256k1');
    expect(() => page.keys.publicKeyFromProtobuf(fullKeys.publicKeyToProtobuf(secp.publicKey))).toThrow(
      expect.objectContaining({ name: 'UnsupportedKeyTypeError' }),
    );
    await expect(page.keys.generateKeyPair('secp256k1')).rejects.toMatchObject({ name: 'UnsupportedKeyTypeError' });

    const js = page.defaultCrypto;
    // Node's Noise crypto answers in Buffers, the page's in Uint8Arrays: the bytes are compared.
    const bytes = (v: Uint8Array | Uint8Array[]) => (Array.isArray(v) ? v.map((x) => [...x]) : [...v]);
    const data = new Uint8Array(100).map((_, i) => i);
    expect(bytes(js.hashSHA256(data))).toEqual(bytes(defaultCrypto.hashSHA256(data)));
    const [ck, ikm] = [data.subarray(0, 32), data.subarray(32, 64)];
    expect(bytes(js.getHKDF(ck, ikm))).toEqual(bytes(defaultCrypto.getHKDF(ck, ikm)));
    const a = js.generateX25519KeyPairFromSeed(seed);
    expect(bytes(a.publicKey)).toEqual(bytes(defaultCrypto.generateX25519KeyPairFromSeed(seed).publicKey));
    const b = js.generateX25519KeyPair();
    expect(bytes(js.generateX25519SharedKey(a.privateKey, b.publicKey))).toEqual(bytes(js.generateX25519SharedKey(b.privateKey, a.publicKey)));
    expect(() => js.chaCha20Poly1305Encrypt(data, new Uint8Array(12), new Uint8Array(0), new Uint8Array(32))).toThrow(/WASM core/);
  }, 60_000);
});
