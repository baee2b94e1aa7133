// Noise's transport messages sealed by our backends (ts/net/node.ts noiseCrypto): the same bytes as
// Noise's own AEAD for every size either side of its 1,200-byte switch to node:crypto, a tampered
// message refused, and real connections between a node on our AEAD and a node on Noise's default.
import { defaultCrypto } from '@chainsafe/libp2p-noise/crypto';
import { multiaddr } from '@multiformats/multiaddr';
import { randomBytes } from 'node:crypto';
import { Uint8ArrayList } from 'uint8arraylist';
import { afterAll, describe, expect, it } from 'vitest';
import type { Crypto } from '../../ts/crypto/backend.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { SocketGuard } from '../../ts/net/guard.js';
import { LineTransport, type ByteStream } from '../../ts/net/line-transport.js';
import { createNode, noiseCrypto } from '../../ts/net/node.js';

const backends: [string, Crypto][] = [
  ['wasm', getCrypto('wasm')],
  ['js', getCrypto('js')],
];
const hex = (b: Uint8Array | Uint8ArrayList) => Buffer.from(b.subarray()).toString('hex');

describe.each(backends)('noiseCrypto on the %s backend', (_name, c) => {
  const ours = noiseCrypto(c);
  const key = randomBytes(32);
  const ad = randomBytes(32);
  // Noise's nonce: four zero bytes, then the message counter little-endian.
  const nonce = new Uint8Array(12);
  new DataView(nonce.buffer).setBigUint64(4, 0x0102030405n, true);

  it.each([0, 1, 17, 369, 1199, 1200, 1201, 65519])('seals %i bytes exactly as Noise does, and opens them', (n) => {
    const pt = randomBytes(n);
    const theirs = defaultCrypto.chaCha20Poly1305Encrypt(pt, nonce, ad, key);
    const sealed = ours.chaCha20Poly1305Encrypt(pt, nonce, ad, key);
    expect(hex(sealed)).toBe(hex(theirs));
    expect(hex(ours.chaCha20Poly1305Decrypt(theirs.subarray(), nonce, ad, key))).toBe(hex(pt));
  });

  it('takes a Uint8ArrayList (a Yamux header and its data) as one message', () => {
    const list = new Uint8ArrayList(randomBytes(12), randomBytes(300));
    const sealed = ours.chaCha20Poly1305Encrypt(list, nonce, ad, key);
    expect(hex(sealed)).toBe(hex(defaultCrypto.chaCha20Poly1305Encrypt(list.subarray(), nonce, ad, key)));
    const cut = sealed.subarray();
    const back = ours.chaCha20Poly1305Decrypt(new Uint8ArrayList(cut.subarray(0, 100), cut.subarray(100)), nonce, ad, key);
    expect(hex(back)).toBe(hex(list));
  });

  it('refuses a message with one bit changed, under another nonce or another ad', () => {
    const pt = randomBytes(369);
    const sealed = ours.chaCha20Poly1305Encrypt(pt, nonce, ad, key).subarray();
    for (const i of [0, 200, sealed.length - 1]) {
      const bad = Uint8Array.from(sealed);
      bad[i]! ^= 1;
      expect(() => ours.chaCha20Poly1305Decrypt(bad, nonce, ad, key)).toThrow();
    }
    const other = Uint8Array.from(nonce);
    other[4]! ^= 1;
    expect(() => ours.chaCha20Poly1305Decrypt(sealed, other, ad, key)).toThrow();
    expect(() => ours.chaCha20Poly1305Decrypt(sealed, nonce, randomBytes(32), key)).toThrow();
  });
});

describe('connections between a node on our AEAD and a node on Noise default', () => {
  const PROTOCOL = '/aigenora/test-noise/1';
  const stops: (() => unknown)[] = [];
  afterAll(async () => {
    for (const s of stops) await s();
  });

  /** A listener that answers every line with the line reversed. */
  async function listener(crypto: Crypto | undefined, seed: number) {
    const node = await createNode(new Uint8Array(32).fill(seed), {
      listen: ['/ip4/127.0.0.1/tcp/0'],
      guard: new SocketGuard({ deadlineMs: 5_000 }),
      ...(crypto && { crypto }),
    });
    stops.push(() => node.stop());
    await node.handle(PROTOCOL, async (stream: unknown) => {
      const t = new LineTransport(stream as ByteStream, { heartbeatIntervalMs: 0 });
      for (;;) {
        const r = await t.recv(5_000);
        if (r.line === null) return;
        t.send([...r.line].reverse().join(''));
      }
    });
    return node.getMultiaddrs()[0]!;
  }

  it.each([
    ['wasm', 'default'],
    ['default', 'js'],
    ['js', 'wasm'],
  ])('a %s dialer and a %s listener exchange lines of every size both ways', async (dialer, listening) => {
    // Counted, to prove the connection's messages went through the backend and not Noise's default.
    const calls = { seal: 0, open: 0 };
    const pick = (n: string): Crypto | undefined => {
      if (n === 'default') return undefined;
      const c = getCrypto(n);
      return { ...c, aeadSeal: (...a) => (calls.seal++, c.aeadSeal(...a)), aeadOpen: (...a) => (calls.open++, c.aeadOpen(...a)) };
    };
    const addr = await listener(pick(listening), 7);
    const crypto = pick(dialer);
    const node = await createNode(new Uint8Array(32).fill(8), crypto ? { crypto } : {});
    stops.push(() => node.stop());
    const t = new LineTransport((await node.dialProtocol(multiaddr(addr.toString()), PROTOCOL)) as unknown as ByteStream, { heartbeatIntervalMs: 0 });
    for (const n of [1, 300, 1500, 70_000, 200_000]) {
      const line = randomBytes(Math.ceil(n / 2))
        .toString('hex')
        .slice(0, n);
      t.send(line);
      const r = await t.recv(5_000);
      expect(r.line).toBe([...line].reverse().join(''));
    }
    t.close();
    expect(calls.seal).toBeGreaterThanOrEqual(5);
    expect(calls.open).toBeGreaterThanOrEqual(5);
  });
});
