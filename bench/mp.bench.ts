// Mental poker's Blind-RSA token OT side by side in one run: RSA-2048 key generation (the platform's
// WebCrypto, imported into each backend, and the js twin's own BigInt generator), the RSA-2048 private operation (wasm, the js twin,
// and node:crypto's raw privateDecrypt with no padding as the native limit), one OT round trip, and a
// 52-label sealed table. `wasm` is the WASM-only path a browser runs; `node path` is what
// getCrypto('wasm') gives on Node, the same core with the RSA exponentiations in node:crypto
// (ts/crypto/node-rsa.ts). The implementations of each case are measured interleaved (SAMPLES rounds,
// the order rotating) and the floors are medians of the paired ratios. Key generation is a figure
// (random time, no floor). In memory, nothing written. Writes bench/results/mp-ot.md and mp.floors.json.
import * as nodeCrypto from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { getCrypto, type Crypto } from '../ts/crypto/index.js';
import { loadWasmNode } from '../ts/crypto/node.js';
import { withNodeRsa } from '../ts/crypto/node-rsa.js';
import type { RsaKey } from '../ts/crypto/ot.js';
import { floorTable, interleaved, medians, ratioFloor, SAMPLE_MS, SAMPLES, versusWasmTable, writeFloors } from './measure.js';

const wasm = loadWasmNode();
const nodePath = withNodeRsa(wasm);
const js = getCrypto('js');
const KEYGEN_RUNS = Number(process.env['BENCH_KEYGEN_RUNS'] ?? 9);

/** Median and spread of `runs` timed calls of an async `f`, in ms: key generation time is random. */
async function timed(runs: number, f: () => Promise<unknown>): Promise<{ median: number; min: number; max: number }> {
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await f();
    t.push(performance.now() - t0);
  }
  t.sort((a, b) => a - b);
  return { median: t[Math.floor(runs / 2)]!, min: t[0]!, max: t[runs - 1]! };
}

// ---------------------------------------------------------------- key generation
const dispose = (k: RsaKey) => k.dispose();
const keygen = {
  'platform WebCrypto, imported into wasm': await timed(KEYGEN_RUNS, () => wasm.ot.generateKey({ via: 'platform' }).then(dispose)),
  'platform WebCrypto, imported into the node path': await timed(KEYGEN_RUNS, () => nodePath.ot.generateKey({ via: 'platform' }).then(dispose)),
  'platform WebCrypto, imported into js': await timed(KEYGEN_RUNS, () => js.ot.generateKey({ via: 'platform' }).then(dispose)),
  'js twin (BigInt Miller–Rabin)': await timed(Math.min(3, KEYGEN_RUNS), () => js.ot.generateKey({ via: 'backend' }).then(dispose)),
};

// ---------------------------------------------------------------- one key, every implementation
const made = await wasm.ot.generateKey();
const parts = made.exportParts();
const keys: Record<'wasm' | 'node path' | 'js', RsaKey> = {
  wasm: wasm.ot.importKey(parts),
  'node path': nodePath.ot.importKey(parts),
  js: js.ot.importKey(parts),
};
const b64u = (b: Uint8Array) => Buffer.from(b).toString('base64url');
const nodeKey = nodeCrypto.createPrivateKey({
  key: {
    kty: 'RSA',
    n: b64u(parts.n),
    e: 'AQAB',
    d: b64u(parts.d),
    p: b64u(parts.p),
    q: b64u(parts.q),
    dp: b64u(parts.dp),
    dq: b64u(parts.dq),
    qi: b64u(parts.qi),
  },
  format: 'jwk',
});
const n = made.n;
const ctxOf = (c: Crypto, i: number) => c.ot.context({ protocolId: 'Crazy Eights', sessionId: 'mp-session', senderRole: 1, payloadType: 1, label: `h-${i}` });
const z = wasm.ot.blind(n, ctxOf(wasm, 0), wasm.ot.randomUnit(n));
const nodeY = nodeCrypto.privateDecrypt({ key: nodeKey, padding: nodeCrypto.constants.RSA_NO_PADDING }, z);
if ([keys.wasm, keys['node path'], keys.js].some((k) => Buffer.compare(nodeY, k.privateOp(z)) !== 0)) {
  throw new Error('the implementations disagree on z^d mod n');
}

type Impl = 'wasm' | 'node path' | 'js' | 'node:crypto';
const IMPLS: Impl[] = ['wasm', 'node path', 'js', 'node:crypto'];
const payload = new Uint8Array(32).fill(5);
const nonce = new Uint8Array(12).fill(9);

/** The Receiver's and the Sender's whole work for one label: request, answer, unblind, open. */
function roundTrip(c: Crypto, key: RsaKey, ctx: Uint8Array, sealed: Uint8Array): void {
  const r = c.ot.randomUnit(n);
  const y = key.privateOp(c.ot.blind(n, ctx, r));
  c.ot.openSealed(c.ot.unblind(n, y, r), ctx, sealed);
}

/** The same case on the two backends and the node path, each with the key imported into it. */
function each(make: (c: Crypto, key: RsaKey) => () => unknown): Partial<Record<Impl, () => unknown>> {
  return { wasm: make(wasm, keys.wasm), 'node path': make(nodePath, keys['node path']), js: make(js, keys.js) };
}

const cases: { name: string; per?: number; impls: Partial<Record<Impl, () => unknown>> }[] = [
  {
    name: 'RSA-2048 private operation z^d mod n',
    impls: {
      wasm: () => keys.wasm.privateOp(z),
      'node path': () => keys['node path'].privateOp(z),
      js: () => keys.js.privateOp(z),
      'node:crypto': () => nodeCrypto.privateDecrypt({ key: nodeKey, padding: nodeCrypto.constants.RSA_NO_PADDING }, z),
    },
  },
  {
    name: 'one OT round trip (r, blind, answer, unblind, open)',
    impls: each((c, key) => {
      const ctx = ctxOf(c, 7);
      const { sealed } = key.sealLabel(ctx, payload, nonce);
      return () => roundTrip(c, key, ctx, sealed);
    }),
  },
  {
    name: 'sealed table of 52 labels (context, FDH, token, seal)',
    impls: each((c, key) => () => {
      for (let i = 0; i < 52; i++) key.sealLabel(ctxOf(c, i), payload, nonce);
    }),
  },
  {
    name: 'token check (token^e == FDH)',
    impls: each((c, key) => {
      const ctx = ctxOf(c, 3);
      const token = key.token(ctx);
      return () => c.ot.checkToken(n, ctx, token);
    }),
  },
];

const samples = new Map<string, Partial<Record<Impl, number[]>>>();
for (const b of cases) samples.set(b.name, interleaved(b.impls as Record<string, () => unknown>, b.per) as Partial<Record<Impl, number[]>>);
const results = medians(samples);
for (const k of [made, ...Object.values(keys)]) k.dispose();

// ---------------------------------------------------------------- report
const priv = samples.get('RSA-2048 private operation z^d mod n')!;
const sealedTable = samples.get('sealed table of 52 labels (context, FDH, token, seal)')!;
const table = results.get('sealed table of 52 labels (context, FDH, token, seal)')!;
const floors = [
  // Issue 36 gave the WASM-only path (browsers) its own floor of 0.5× node:crypto, raised from the 0.3×
  // of round 1 when node:crypto became the Node path.
  ratioFloor('wasm RSA-2048 private operation ÷ node:crypto privateDecrypt (no padding)', priv.wasm!, priv['node:crypto']!, 0.5),
  ratioFloor("wasm sealed table of 52 labels (the deck setup's RSA part) ÷ the js twin", sealedTable.wasm!, sealedTable.js!, 5),
  // What the node path adds around OpenSSL's operation (the core's checks of the operand, a copy out).
  ratioFloor('node path RSA-2048 private operation ÷ node:crypto privateDecrypt (no padding)', priv['node path']!, priv['node:crypto']!, 0.9),
];
writeFloors('mp', floors);
const lines: string[] = [];
lines.push('# aigenora mental-poker OT benchmarks', '');
lines.push(
  `${new Date().toISOString()} · Node ${process.version} · ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length} · load average ${os.loadavg()[0]!.toFixed(2)} · ${SAMPLES} interleaved samples of ${SAMPLE_MS} ms per cell · in memory, nothing written`,
  '',
);
lines.push(`## RSA-2048 key generation (e = 65537), ms per key over ${KEYGEN_RUNS} keys (the js twin over ${Math.min(3, KEYGEN_RUNS)})`, '');
lines.push('| generator | median | min | max |', '|---|---:|---:|---:|');
for (const [name, t] of Object.entries(keygen)) lines.push(`| ${name} | ${t.median.toFixed(0)} | ${t.min.toFixed(0)} | ${t.max.toFixed(0)} |`);
lines.push(
  '',
  'Key generation is a figure with no floor: its time is a random draw, and the platform generator is the anchor beside it.',
  '',
  '## Operations',
  '',
  'ops/s, the median of the samples (higher is better); in brackets, the ratio of the wasm backend to that column.',
  '',
);
lines.push(...versusWasmTable(IMPLS, results));
lines.push(
  '',
  '## Floors, from this run',
  '',
  "Each ratio divides the wasm backend's ops/s by the anchor's, measured in the same round.",
  '',
  ...floorTable(floors),
);
lines.push(
  '',
  `sealed table of 52 labels: wasm ${(1000 / table.wasm!).toFixed(1)} ms, node path ${(1000 / table['node path']!).toFixed(1)} ms, js ${(1000 / table.js!).toFixed(1)} ms.`,
);
const report = `${lines.join('\n')}\n`;
process.stdout.write(report);
writeFileSync(new URL('results/mp-ot.md', import.meta.url), report);
