// agent-trade/0.2 verification throughput: envelopes verified per second (a DEAL with two signatures)
// on each backend, beside the raw strict-verify rate of the same backend, the three interleaved
// (FLOOR_SAMPLES rounds, the order rotating: these floors sit close to their line, as strict verify's
// own does in crypto.bench.ts). Floor: envelopes/s ≥ 0.8 × (verify/s ÷ signatures per envelope), i.e.
// JCS, hashing and the schema cost little beside the signatures; judged on the median of the paired
// ratios. In memory, nothing written. Writes bench/results/trade.md and trade.floors.json.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fromBase64Url, getCrypto, utf8 } from '../ts/crypto/index.js';
import { signingInput, verifyEnvelope, type Envelope } from '../ts/trade/index.js';
import { FLOOR_SAMPLES, floorTable, fmt, interleaved, median, ratioFloor, SAMPLE_MS, writeFloors, type Floor } from './measure.js';

const ref = new URL('../../shared/reference/agent-native-trade/protocol/test-vectors/vectors.json', import.meta.url);
const own = new URL('../test-vectors/agent-trade/envelopes.json', import.meta.url);
const source = existsSync(ref) ? ref : own;
const doc = JSON.parse(readFileSync(source, 'utf8'));
const deal = (doc.cases as { name: string; file: Envelope }[]).find((c) => c.name === 'deal-valid' || c.name === 'deal-cosigned-alice-then-bob')!.file;
const keys = doc.identities as Record<string, { public_key: string }>;
const text = JSON.stringify(deal);
const sigs = deal.signatures.length;
const input = signingInput(deal.protocol, deal.object_type, deal.body_hash);
const raw = deal.signatures.map((s) => ({ pk: fromBase64Url(keys[s.signer]!.public_key), sig: fromBase64Url(s.signature) }));

const floors: Floor[] = [];
const rows: string[][] = [];
for (const name of ['wasm', 'js'] as const) {
  const c = getCrypto(name);
  if (verifyEnvelope(c, deal, keys).result !== 'valid') throw new Error(`${name}: the bench envelope does not verify`);
  const s = interleaved(
    {
      verify: () => c.ed25519Verify(raw[0]!.pk, input, raw[0]!.sig),
      object: () => verifyEnvelope(c, deal, keys),
      text: () => verifyEnvelope(c, text, keys),
    },
    1,
    SAMPLE_MS,
    FLOOR_SAMPLES,
  );
  const perEnvelope = s.verify.map((v) => v / sigs);
  const fo = ratioFloor(`${name}: envelopes/s from the object ÷ (strict verify/s ÷ ${sigs})`, s.object, perEnvelope, 0.8);
  const ft = ratioFloor(`${name}: envelopes/s from the text ÷ (strict verify/s ÷ ${sigs})`, s.text, perEnvelope, 0.8);
  floors.push(fo, ft);
  rows.push([name, fmt(median(s.verify)), fmt(median(s.object)), `${fo.median.toFixed(2)}×`, fmt(median(s.text)), `${ft.median.toFixed(2)}×`]);
}
writeFloors('trade', floors);

const lines = [
  '# agent-trade/0.2 verification',
  '',
  `${new Date().toISOString()} · Node ${process.version} · ${FLOOR_SAMPLES} interleaved samples of ${SAMPLE_MS} ms per case · in memory, nothing written · ${source.pathname.includes('shared') ? "the reference's deal-valid" : 'test-vectors deal-cosigned-alice-then-bob'} (${sigs} signatures, ${utf8(text).length} bytes)`,
  '',
  `Medians. The ratio divides envelopes/s by the same backend's strict verify/s ÷ ${sigs} (the rate if an envelope cost only its signatures), both measured in the same round.`,
  '',
  `| backend | strict verify/s | envelopes/s (object) | ratio | envelopes/s (text) | ratio |`,
  '|---|---:|---:|---:|---:|---:|',
  ...rows.map((r) => `| ${r.join(' | ')} |`),
  '',
  '## Floors, from this run',
  '',
  ...floorTable(floors),
];
const report = `${lines.join('\n')}\n`;
process.stdout.write(report);
writeFileSync(new URL('results/trade.md', import.meta.url), report);
