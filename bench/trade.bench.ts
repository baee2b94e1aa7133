// agent-trade/0.2 verification throughput: envelopes verified per second (a DEAL with two signatures)
// on each backend, beside the raw strict-verify rate measured in the same run. The floor:
// envelopes/s >= 0.8 x (raw verify rate / signatures per envelope), i.e. JCS, hashing and the schema
// cost little beside the signatures. Prints a table and writes bench/results/trade.md.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fromBase64Url, getCrypto, utf8 } from '../ts/crypto/index.js';
import { signingInput, verifyEnvelope, type Envelope } from '../ts/trade/index.js';
import { fmt, measure, MS } from './measure.js';

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

const lines = ['# agent-trade/0.2 verification', '', `${new Date().toISOString()} · Node ${process.version} · ${MS} ms per cell · ${source.pathname.includes('shared') ? "the reference's deal-valid" : 'test-vectors deal-cosigned-alice-then-bob'} (${sigs} signatures, ${utf8(text).length} bytes)`, ''];
lines.push('| backend | strict verify/s | envelopes/s (object) | ratio to verify/s ÷ ' + sigs + ' | envelopes/s (text) | ratio | floor 0.8× |', '|---|---:|---:|---:|---:|---:|---|');
for (const name of ['wasm', 'js'] as const) {
  const c = getCrypto(name);
  if (verifyEnvelope(c, deal, keys).result !== 'valid') throw new Error(`${name}: the bench envelope does not verify`);
  const verify = measure(() => c.ed25519Verify(raw[0]!.pk, input, raw[0]!.sig));
  const fromObject = measure(() => verifyEnvelope(c, deal, keys));
  const fromText = measure(() => verifyEnvelope(c, text, keys));
  const r1 = fromObject / (verify / sigs);
  const r2 = fromText / (verify / sigs);
  lines.push(`| ${name} | ${fmt(verify)} | ${fmt(fromObject)} | ${r1.toFixed(2)}× | ${fmt(fromText)} | ${r2.toFixed(2)}× | ${Math.min(r1, r2) >= 0.8 ? 'met' : 'MISSED'} |`);
}
const report = `${lines.join('\n')}\n`;
process.stdout.write(report);
writeFileSync(new URL('results/trade.md', import.meta.url), report);
