// The session engine end to end over the in-memory transport, for both backends: sign, frame, strict
// parse, envelope and chain checks, spec validation, hooks, transcript append. An RPS game of 99 fixed
// rounds (about 500 frames) per session; frames/s counts every frame either side sent. Transcripts are
// written as `runLocal` records them: durability `process`, one write(2) per frame, no fsync.
//
// The anchor is what the frames' signatures alone cost with the same backend, measured in the same
// rounds: every frame is signed once by its sender and strictly verified once by its receiver, so
// (sign + verify per second of a frame-sized message) bounds frames/s from above. The floor is on
// wasm session frames/s ÷ that bound: how much of a session's time is the signature work, the rest
// being everything else the engine does. Sessions and bound samples interleaved, SAMPLES rounds, the
// order rotating. Writes bench/results/engine.md and engine.floors.json.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { getCrypto, type Crypto } from '../ts/crypto/index.js';
import { runLocal } from '../ts/engine/local.js';
import type { HooksModule } from '../ts/hooks/types.js';
import { builtinDir, BUILTINS } from '../ts/protocols/index.js';
import { loadSpec } from '../ts/spec/index.js';
import { floorTable, fmt, interleavedRuns, median, ratioFloor, sample, SAMPLES, table, writeFloors } from './measure.js';

const rps = BUILTINS.find((b) => b.alias === 'rps-v1')!;
const hooks = (await import('../ts/protocols/rps/hooks.js')).default as HooksModule;
const load0 = loadavg()[0]!;
const backends = { wasm: getCrypto('wasm'), js: getCrypto('js') } as const;
type Name = keyof typeof backends;

/** A frame line's size, for the bound's message (a signed RPS frame line is about 470 bytes). */
const FRAME_BYTES = 470;
let seed = 0;
const frameCounts = new Set<number>();

async function session(c: Crypto): Promise<number> {
  const l = loadSpec(c, builtinDir(rps));
  const out = mkdtempSync(join(tmpdir(), 'aigenora-bench-'));
  try {
    let frames = 0;
    const t0 = performance.now();
    const r = await runLocal({
      crypto: c,
      spec: l.spec,
      specText: l.text,
      protocolId: l.protocolId!,
      hooks,
      options: { best_of: 99, termination: 'fixed_rounds' },
      seed: ++seed,
      outDir: out,
      onMessage: () => frames++,
    });
    const ms = performance.now() - t0;
    if (!r.host.completed || !r.guest.completed) throw new Error(`bench session failed: ${r.host.reason} ${r.guest.reason}`);
    frameCounts.add(frames);
    return (frames * 1000) / ms;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Frames/s if a frame cost only its sign and its strict verify (one of each per frame). */
function bound(c: Crypto): number {
  const kp = c.ed25519Keypair(new Uint8Array(32).fill(3));
  const msg = new Uint8Array(FRAME_BYTES).fill(0x61);
  const sig = kp.sign(msg);
  try {
    return sample(() => {
      kp.sign(msg);
      c.ed25519Verify(kp.publicKey, msg, sig);
    });
  } finally {
    kp.dispose();
  }
}

// A warm-up session each, not counted.
for (const c of Object.values(backends)) await session(c);
const s = await interleavedRuns({
  wasm: () => session(backends.wasm),
  js: () => session(backends.js),
  wasmBound: () => bound(backends.wasm),
  jsBound: () => bound(backends.js),
});

const floors = [ratioFloor('wasm session frames/s ÷ wasm (sign + strict verify)/s, in-memory transport', s.wasm, s.wasmBound, 0.25)];
writeFloors('engine', floors);
const figure = (name: string, num: number[], den: number[]) => {
  const f = ratioFloor(name, num, den, 0);
  return [name, `${f.median.toFixed(2)}×`, `${f.min.toFixed(2)}–${f.max.toFixed(2)}×`];
};

const lines = [
  '# Session engine',
  '',
  `${new Date().toISOString()} · Node ${process.version} · load average ${load0.toFixed(2)} at the start, ${loadavg()[0]!.toFixed(2)} at the end, on a shared 2-core machine`,
  '',
  `RPS, 99 fixed rounds (${[...frameCounts].join(', ')} frames a session), both sides in one process over the in-memory transport (\`runLocal\`). Transcripts: durability \`process\` (one write(2) per frame, no fsync), what \`runLocal\` records with. ${SAMPLES} sessions per backend after one warm-up, interleaved with samples of the signature bound.`,
  '',
  ...table(
    ['backend', 'session frames/s (median)', 'per session', '(sign + verify)/s of a frame-sized message (median)', 'frames/s ÷ bound (median)'],
    (['wasm', 'js'] as Name[]).map((n) => [
      n,
      fmt(median(s[n])),
      s[n].map((x) => fmt(x)).join(' / '),
      fmt(median(s[`${n}Bound`])),
      `${ratioFloor('', s[n], s[`${n}Bound`], 0).median.toFixed(2)}×`,
    ]),
    'lrrrr',
  ),
  '',
  ...table(
    ['figure (no floor)', 'median', 'spread (min–max)'],
    [
      figure('wasm session frames/s ÷ js twin session frames/s', s.wasm, s.js),
      figure('js twin session frames/s ÷ js (sign + strict verify)/s', s.js, s.jsBound),
    ],
    'lrr',
  ),
  '',
  '## Floor, from this run',
  '',
  `The ratio divides a session's frames/s by the bound measured in the same round with the same backend: frames/s if a frame cost only its signature work, one Ed25519 sign and one strict verify of a ${FRAME_BYTES}-byte message under one key (as a session has its peer's). It is the share of the session's wall time that the signatures take; the floor (≥ 0.25×) says the engine's own work per frame (framing, parsing, chain and spec checks, hooks, the transcript write) costs at most three times its signatures. wasm ÷ js twin is reported, not floored: it measures the backends more than the engine.`,
  '',
  ...floorTable(floors),
];
const report = `${lines.join('\n')}\n`;
process.stdout.write(report);
writeFileSync(new URL('results/engine.md', import.meta.url), report);
