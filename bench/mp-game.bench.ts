// Mental poker above the OT, side by side in one run on the WASM-only path (`wasm`, what a browser
// runs), the node path (what getCrypto('wasm') gives on Node: the same core with the RSA
// exponentiations in node:crypto, ts/crypto/node-rsa.ts) and the js twin: one side's deck setup for 52 cards
// (the card layers alone, then layers + sealed table; key generation excluded), the offline replay and
// audit of the reference's recorded Crazy Eights game (when the corpus is there), and a whole Crazy
// Eights game in memory through the session engine (both sides in this process, signed frames,
// transcripts on disk with durability `process`: one write per frame, no fsync). Beside the whole
// game, when its source and virtualenv are there (scripts/lib/reference-peer.sh), the reference's
// Python engine plays the same spec in memory (`protocol test`'s loop: both sides on threads over an
// in-memory duplex, key generation included), one game per round in a long-lived process, timed there.
// The floors are medians of interleaved paired samples; the replay and the other whole games are
// figures. Writes bench/results/mp-game.md and mp-game.floors.json.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { getCrypto, toHex, type Crypto } from '../ts/crypto/index.js';
import { fromHex } from '../ts/crypto/encoding.js';
import { loadWasmNode } from '../ts/crypto/node.js';
import { withNodeRsa } from '../ts/crypto/node-rsa.js';
import type { RsaKey } from '../ts/crypto/ot.js';
import { sessionId } from '../ts/engine/frame.js';
import { seeded } from '../ts/engine/local.js';
import { runSession } from '../ts/engine/session.js';
import { memoryPair } from '../ts/engine/transport.js';
import type { HooksModule } from '../ts/hooks/types.js';
import { replayGame, type WireMessage } from '../ts/mp/replay.js';
import { readVectors } from '../ts/conformance/mp-vectors.js';
import { loadSpec } from '../ts/spec/index.js';
import crazyEights from '../ts/protocols/crazy-eights/hooks.js';
import { floorTable, fmt, interleaved, interleavedRuns, median as medianOf, ratioFloor, SAMPLE_MS, SAMPLES, writeFloors } from './measure.js';

const wasmOnly = loadWasmNode();
const BACKENDS = { wasm: wasmOnly, 'node path': withNodeRsa(wasmOnly), js: getCrypto('js') } as const;
type Name = keyof typeof BACKENDS;
const NAMES = Object.keys(BACKENDS) as Name[];
const GAMES = Number(process.env['BENCH_MP_GAMES'] ?? 5);
const AUDITS = new URL('../../shared/conformance/aigenora-reference/aigenora-mp-audit-vectors.json', import.meta.url).pathname;
const REFERENCE_SRC = process.env['AIGENORA_REFERENCE_SRC'] ?? new URL('../../shared/reference/aigenora-src/src', import.meta.url).pathname;
const REFERENCE_PYTHON = process.env['AIGENORA_REFERENCE_PYTHON'] ?? new URL('../.cache/reference-venv/bin/python', import.meta.url).pathname;
/** The reference's Crazy Eights (the spec whose name is "Crazy Eights" in its built-in protocols). */
const REFERENCE_PROTOCOL = join(REFERENCE_SRC, 'aigenora/protocols/3a3c352a/c09a83a3c0877a5585fcd8c03fa4b85b873601f2fe3ba734474a64ae');

// ---------------------------------------------------------------- deck setup, one side
const parts = (await BACKENDS.wasm.ot.generateKey()).exportParts();
const keys = Object.fromEntries(NAMES.map((n) => [n, BACKENDS[n].ot.importKey(parts)])) as Record<Name, RsaKey>;
const rnd = (n: number) => globalThis.crypto.getRandomValues(new Uint8Array(n));
const cardKeys = Array.from({ length: 52 }, () => rnd(32));
const nonces = Array.from({ length: 52 }, () => rnd(12));
const pads = Array.from({ length: 52 }, () => rnd(14));

/** The Host's setup: 52 cards through the inner layer, and (with `sealed`) its table of 52 sealed keys. */
function setup(c: Crypto, key: RsaKey, sealed: boolean): void {
  for (let i = 0; i < 52; i++) {
    const card = c.deck.encodeCard(i >> 2, i & 3);
    c.deck.sealInner(cardKeys[i]!, nonces[i]!, c.deck.packInner(card, pads[i]!));
    if (sealed) {
      const ctx = c.ot.context({ protocolId: 'Crazy Eights', sessionId: 'bench', senderRole: 1, payloadType: 1, label: `h-${i}` });
      key.sealLabel(ctx, cardKeys[i]!, nonces[i]!);
    }
  }
}

const rows: { name: string; unit: string; values: Record<Name, number> }[] = [];
/** A row of every path measured interleaved; its samples, for a floor. */
const row = (name: string, unit: string, f: (n: Name) => () => unknown): Record<Name, number[]> => {
  const s = interleaved(Object.fromEntries(NAMES.map((n) => [n, f(n)])) as Record<Name, () => unknown>);
  rows.push({ name, unit, values: Object.fromEntries(NAMES.map((n) => [n, medianOf(s[n])])) as Record<Name, number> });
  return s;
};

row('deck setup, card layers only (52 × encode + pack + seal inner)', 'setups/s', (n) => () => setup(BACKENDS[n], keys[n], false));
const setupSamples = row(
  'deck setup, layers + sealed table (52 labels: context, FDH, token, seal)',
  'setups/s',
  (n) => () => setup(BACKENDS[n], keys[n], true),
);
for (const k of Object.values(keys)) k.dispose();

// ---------------------------------------------------------------- the audit (offline replay of the reference game)
let auditNote = '';
if (existsSync(AUDITS)) {
  const doc = readVectors(readFileSync(AUDITS, 'utf8'));
  const game = doc.cases.find((c) => c['kind'] === 'game')!;
  const universe = Array.from({ length: 52 }, (_, i) => [i >> 2, i & 3] as const);
  const replay = (c: Crypto) =>
    replayGame(c, game['messages'] as WireMessage[], {
      verifier: 'host',
      protocolId: game['protocol_id_in_ot_context'],
      sessionId: game['session_id'],
      universe,
      deal: { guest: game['derived'].guest_deal_id_b.length, host: game['derived'].host_deal_id_b.length },
      peerPublicKey: fromHex(game['guest'].public_key),
    });
  for (const n of NAMES) {
    const v = replay(BACKENDS[n]).verdict;
    if (!v.auditPassed) throw new Error(`the recorded game does not pass on ${n}: ${JSON.stringify(v)}`);
  }
  row("offline replay + audit of the reference's recorded game (Host's view)", 'games/s', (n) => () => replay(BACKENDS[n]));
} else {
  auditNote = `The audit row is missing: ${AUDITS} is not there.`;
  console.warn(auditNote);
}

// ---------------------------------------------------------------- a whole game in memory
const dir = new URL('../ts/protocols/crazy-eights', import.meta.url).pathname;
async function wholeGame(c: Crypto, out: string): Promise<void> {
  const l = loadSpec(c, dir);
  const hostKey = c.ed25519Keypair(rnd(32));
  const guestKey = c.ed25519Keypair(rnd(32));
  const [hk, gk] = [toHex(hostKey.publicKey), toHex(guestKey.publicKey)];
  const nonce = toHex(rnd(16));
  const sid = sessionId(c, 'local', l.protocolId!, hk, gk, nonce);
  const [ht, gt] = memoryPair();
  const common = {
    crypto: c,
    spec: l.spec,
    specText: l.text,
    protocolId: l.protocolId!,
    hostKey: hk,
    guestKey: gk,
    sid,
    postId: 'local',
    nonce,
    hooks: crazyEights as HooksModule,
    options: {},
    controlMode: 'autonomous' as const,
    timeoutMs: 120_000,
  };
  const [h, g] = await Promise.all([
    runSession({ ...common, role: 'host', transport: ht, key: hostKey, stateDir: join(out, 'host'), random: seeded(3) }),
    runSession({ ...common, role: 'guest', transport: gt, key: guestKey, stateDir: join(out, 'guest'), random: seeded(4) }),
  ]);
  if (h.reason !== 'completed' || g.reason !== 'completed') throw new Error(`the game ended ${h.reason} / ${g.reason}: ${h.detail ?? g.detail ?? ''}`);
}
/**
 * The reference's engine in a long-lived Python process: a warm-up game first (its imports), then one
 * game per line asked for, answering that game's wall-clock ms as it timed it, or an error line.
 */
const REFERENCE_LOOP = String.raw`
import sys, tempfile, time, traceback
from pathlib import Path
from aigenora.engine.p2p import memory_duplex, run_in_threads
from aigenora.proto.engine import run_host, run_guest
proto = Path(sys.argv[1])
with tempfile.TemporaryDirectory() as tmp:
    i = 0
    def game():
        global i
        i += 1
        h, g = memory_duplex()
        base = f"{tmp}/{i}"
        t0 = time.perf_counter()
        rh, rg = run_in_threads(lambda: run_host(proto, h, state_base=base), lambda: run_guest(proto, g, state_base=base), join_timeout=300)
        ms = (time.perf_counter() - t0) * 1000
        for r in (rh, rg):
            if not (isinstance(r, dict) and r.get("completed") and r.get("audit_passed")):
                raise RuntimeError(f"the game did not complete with a passed audit: {r!r}"[:300])
        return ms
    try:
        game()
        print("ready", flush=True)
        for _ in sys.stdin:
            print(game(), flush=True)
    except BaseException:
        print("error " + traceback.format_exc().replace("\n", " | "), flush=True)
`;

interface ReferenceGames {
  game(): Promise<number>;
  close(): void;
}

/** The reference's loop started, its warm-up game played; undefined (and why) when it cannot run here. */
async function startReference(): Promise<ReferenceGames | string> {
  if (!existsSync(join(REFERENCE_PROTOCOL, 'spec.json'))) return `the reference's Crazy Eights is not there (${REFERENCE_PROTOCOL})`;
  if (!existsSync(REFERENCE_PYTHON))
    return `the reference virtualenv is not there (${REFERENCE_PYTHON}; source scripts/lib/reference-peer.sh && ensure_reference_peer)`;
  const child = spawn(REFERENCE_PYTHON, ['-c', REFERENCE_LOOP, REFERENCE_PROTOCOL], {
    env: { ...process.env, PYTHONPATH: REFERENCE_SRC },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => {
    const r = await lines.next();
    if (r.done) throw new Error('the reference engine exited');
    if (r.value.startsWith('error ')) throw new Error(`the reference engine failed: ${r.value.slice(6)}`);
    return r.value;
  };
  try {
    if ((await next()) !== 'ready') throw new Error('the reference engine did not start');
  } catch (e) {
    child.kill();
    return (e as Error).message;
  }
  return {
    async game() {
      child.stdin!.write('go\n');
      return Number(await next());
    },
    close: () => child.stdin!.end(),
  };
}

const tmp = mkdtempSync(join(os.tmpdir(), 'aigenora-mp-bench-'));
let game = 0;
const timedGame = async (n: Name) => {
  const t0 = performance.now();
  await wholeGame(BACKENDS[n], join(tmp, `${n.replace(' ', '-')}-${game++}`));
  return performance.now() - t0;
};
const reference = await startReference();
const notes: string[] = [];
if (typeof reference === 'string') notes.push(`no reference game: ${reference}`);
let gameMs: Partial<Record<Name | 'reference', number[]>>;
try {
  const runs: Partial<Record<Name | 'reference', () => Promise<number>>> = Object.fromEntries(NAMES.map((n) => [n, () => timedGame(n)]));
  if (typeof reference !== 'string') runs.reference = () => reference.game();
  gameMs = await interleavedRuns(runs as Record<Name | 'reference', () => Promise<number>>, GAMES);
} finally {
  if (typeof reference !== 'string') reference.close();
  rmSync(tmp, { recursive: true, force: true });
}
const median = medianOf;

// ---------------------------------------------------------------- report
const floors = [ratioFloor('wasm deck setup (layers + sealed table, 52 cards) ÷ the js twin', setupSamples.wasm, setupSamples.js, 5)];
// The bar for the whole game: at least 3× the reference's speed, on the path Node runs.
if (gameMs.reference)
  floors.push(ratioFloor("node path whole Crazy Eights game ÷ the reference's Python engine (speed)", gameMs.reference, gameMs['node path']!, 3));
writeFloors('mp-game', floors, notes);
const lines: string[] = [];
lines.push('# aigenora mental-poker game benchmarks', '');
lines.push(
  `${new Date().toISOString()} · Node ${process.version} · ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length} · load average ${os.loadavg()[0]!.toFixed(2)} · ${SAMPLES} interleaved samples of ${SAMPLE_MS} ms per cell · the whole games: transcripts on disk, durability \`process\` (one write per frame, no fsync)`,
  '',
  "`wasm` is the WASM-only path (a browser's); `node path` is what getCrypto('wasm') gives on Node, the same core with the RSA exponentiations (the private operation, the token and witness checks) in node:crypto.",
  '',
);
lines.push('| case | unit | wasm | node path | js twin | wasm / js | node path / wasm |', '|---|---|---:|---:|---:|---:|---:|');
const x = (r: number) => `${r.toFixed(2)}×`;
for (const r of rows) {
  const v = r.values;
  lines.push(`| ${r.name} | ${r.unit} | ${fmt(v.wasm)} | ${fmt(v['node path'])} | ${fmt(v.js)} | ${x(v.wasm / v.js)} | ${x(v['node path'] / v.wasm)} |`);
}
const g = Object.fromEntries(Object.entries(gameMs).map(([k, v]) => [k, median(v)])) as Record<Name, number> & { reference?: number };
lines.push(
  `| whole Crazy Eights game in memory through the engine (both sides, key generation included), median of ${GAMES} | ms | ${g.wasm.toFixed(0)} | ${g['node path'].toFixed(0)} | ${g.js.toFixed(0)} | ${x(g.js / g.wasm)} faster | ${x(g.wasm / g['node path'])} faster |`,
);
if (g.reference !== undefined) {
  lines.push(
    '',
    `The reference's Python engine, the same spec in memory (its \`protocol test\` loop: both sides on threads, key generation included), median of ${GAMES}: ${g.reference.toFixed(0)} ms a game; the node path is ${x(g.reference / g['node path'])} faster, the WASM-only path ${x(g.reference / g.wasm)}, the js twin ${x(g.reference / g.js)}. Games are random deals, so their lengths differ from game to game on every side.`,
  );
}
lines.push(
  '',
  '## Floors, from this run',
  '',
  "The deck setup's ratio divides the wasm backend's setups/s by the js twin's; the whole game's divides the reference's ms a game by the node path's, in the same round. The replay and the other whole games are figures with no floor.",
  '',
  ...floorTable(floors),
);
for (const n of notes) lines.push('', n);
if (auditNote) lines.push('', auditNote);
const md = `${lines.join('\n')}\n`;
process.stdout.write(md);
writeFileSync(new URL('./results/mp-game.md', import.meta.url), md);
