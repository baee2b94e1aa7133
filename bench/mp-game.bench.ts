// Mental poker above the OT, side by side in one run on the wasm backend and the js twin: one side's
// deck setup for 52 cards (the card layers alone, then layers + sealed table; key generation excluded),
// the offline replay and audit of the reference's recorded Crazy Eights game (when the corpus is
// there), and a whole Crazy Eights game in memory through the session engine (both sides in this
// process, signed frames, transcripts on disk with durability `process`: one write per frame, no
// fsync). The deck setup's floor (wasm ÷ js twin) is the median of interleaved paired samples; the
// replay and the whole game are figures. Writes bench/results/mp-game.md and mp-game.floors.json.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { getCrypto, toHex, type Crypto } from '../ts/crypto/index.js';
import { fromHex } from '../ts/crypto/encoding.js';
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

const BACKENDS = { wasm: getCrypto('wasm'), js: getCrypto('js') } as const;
type Name = keyof typeof BACKENDS;
const GAMES = Number(process.env['BENCH_MP_GAMES'] ?? 3);
const AUDITS = new URL('../../shared/conformance/aigenora-reference/aigenora-mp-audit-vectors.json', import.meta.url).pathname;

// ---------------------------------------------------------------- deck setup, one side
const parts = (await BACKENDS.wasm.ot.generateKey()).exportParts();
const keys: Record<Name, RsaKey> = { wasm: BACKENDS.wasm.ot.importKey(parts), js: BACKENDS.js.ot.importKey(parts) };
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
/** A row of both backends measured interleaved; its samples, for a floor. */
const row = (name: string, unit: string, f: (n: Name) => () => unknown): Record<Name, number[]> => {
  const s = interleaved({ wasm: f('wasm'), js: f('js') });
  rows.push({ name, unit, values: { wasm: medianOf(s.wasm), js: medianOf(s.js) } });
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
  for (const n of ['wasm', 'js'] as const) {
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
const tmp = mkdtempSync(join(os.tmpdir(), 'aigenora-mp-bench-'));
let game = 0;
const timedGame = async (n: Name) => {
  const t0 = performance.now();
  await wholeGame(BACKENDS[n], join(tmp, `${n}-${game++}`));
  return performance.now() - t0;
};
let gameMs: Record<Name, number[]>;
try {
  gameMs = await interleavedRuns({ wasm: () => timedGame('wasm'), js: () => timedGame('js') }, GAMES);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
const median = medianOf;

// ---------------------------------------------------------------- report
const floors = [ratioFloor('wasm deck setup (layers + sealed table, 52 cards) ÷ the js twin', setupSamples.wasm, setupSamples.js, 5)];
writeFloors('mp-game', floors);
const lines: string[] = [];
lines.push('# aigenora mental-poker game benchmarks', '');
lines.push(
  `${new Date().toISOString()} · Node ${process.version} · ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length} · load average ${os.loadavg()[0]!.toFixed(2)} · ${SAMPLES} interleaved samples of ${SAMPLE_MS} ms per cell · the whole games: transcripts on disk, durability \`process\` (one write per frame, no fsync)`,
  '',
);
lines.push('| case | unit | wasm | js twin | wasm / js |', '|---|---|---:|---:|---:|');
for (const r of rows) lines.push(`| ${r.name} | ${r.unit} | ${fmt(r.values.wasm)} | ${fmt(r.values.js)} | ${(r.values.wasm / r.values.js).toFixed(2)}× |`);
lines.push(
  `| whole Crazy Eights game in memory through the engine (both sides, key generation included), median of ${GAMES} | ms | ${median(gameMs.wasm).toFixed(0)} | ${median(gameMs.js).toFixed(0)} | ${(median(gameMs.js) / median(gameMs.wasm)).toFixed(2)}× faster |`,
);
lines.push(
  '',
  '## Floor, from this run',
  '',
  "The ratio divides the wasm backend's setups/s by the js twin's, measured in the same round. The replay and the whole game are figures with no floor.",
  '',
  ...floorTable(floors),
);
if (auditNote) lines.push('', auditNote);
const md = `${lines.join('\n')}\n`;
process.stdout.write(md);
writeFileSync(new URL('./results/mp-game.md', import.meta.url), md);
