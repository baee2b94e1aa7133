// Protocol contracts, side by side in one run: message validation through the compiled validator
// (an RPS reveal), compiling the largest built-in spec, and protocol_id of the largest spec — with
// the floors. Prints a table and writes bench/results/spec.md.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getCrypto } from '../ts/crypto/index.js';
import { builtinDir, BUILTINS } from '../ts/protocols/index.js';
import { MessageValidator, protocolId, type Spec } from '../ts/spec/index.js';
import { fmt, measure, MS } from './measure.js';

const builtinTexts = BUILTINS.map((b) => readFileSync(join(builtinDir(b), 'spec.json'), 'utf8'));
const refDir = new URL('../../shared/reference/aigenora/src/aigenora/protocols/', import.meta.url).pathname;
const refTexts = existsSync(refDir)
  ? readdirSync(refDir)
      .filter((d) => /^[0-9a-f]{8}$/.test(d))
      .flatMap((a) => readdirSync(join(refDir, a)).map((b) => readFileSync(join(refDir, a, b, 'spec.json'), 'utf8')))
  : [];
const largest = (texts: string[]) => texts.reduce((a, b) => (b.length > a.length ? b : a));
const largestBuiltin = largest(builtinTexts);
const largestAny = largest([...builtinTexts, ...refTexts]);
const rps = JSON.parse(readFileSync(join(builtinDir(BUILTINS[0]!), 'spec.json'), 'utf8')) as Spec;
const validator = new MessageValidator(rps);
const reveal = { action: 'reveal', round: 3, choice: 'paper', nonce: '0123456789abcdef' };

const rows: [string, number, string, boolean][] = [];
const perSec = (name: string, f: () => unknown, floor: number) => {
  const v = measure(f);
  rows.push([name, v, `≥ ${fmt(floor)}/s`, v >= floor]);
};
perSec('validate an RPS reveal (compiled validator), msgs/s', () => validator.check(reveal, 'guest_to_host'), 500_000);
for (const name of ['wasm', 'js'] as const) {
  const c = getCrypto(name);
  perSec(`protocol_id of the largest spec (${largestAny.length} B), ${name} backend, ids/s`, () => protocolId(c, largestAny), 5_000);
}
// Compiling is a one-off per protocol: report the median of fresh compilations in milliseconds.
const largestSpec = JSON.parse(largestBuiltin) as Spec;
const times: number[] = [];
for (let i = 0; i < 25; i++) {
  const t0 = performance.now();
  new MessageValidator(largestSpec);
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
const compileMs = times[12]!;

const lines = ['# Protocol contracts', '', `${new Date().toISOString()} · Node ${process.version} · ${MS} ms per cell`, '', '| case | measured | floor | |', '|---|---:|---:|---|'];
for (const [name, v, floor, ok] of rows) lines.push(`| ${name} | ${fmt(v)}/s | ${floor} | ${ok ? 'met' : 'MISSED'} |`);
lines.push(`| compile the largest built-in spec (${largestSpec.name}, ${largestSpec.messages.length} messages), median of 25 | ${compileMs.toFixed(2)} ms | ≤ 10 ms | ${compileMs <= 10 ? 'met' : 'MISSED'} |`);
const report = `${lines.join('\n')}\n`;
process.stdout.write(report);
writeFileSync(new URL('results/spec.md', import.meta.url), report);
