// `npm run bench`: rin.host/v2 canonical JSON and digests — the wasm backend, the js backend and the
// Go reference (bench/rin-go, built once against ../shared/reference/rin-src) on the same inputs,
// taken from the reference conformance corpus. Go's outputs are checked against ours before any rate
// is reported. The machine is shared, so the two sides take turns: BENCH_ROUNDS rounds (default
// SAMPLES, at least 3) of ours then Go's, and each side's median round is reported, as ops per second of
// wall time and as ops per second of the process's CPU time (which other load disturbs less). Floors:
// ours ÷ Go ≥ 1.0× on the three digest rows, per backend, on the median of the rounds' paired CPU-time
// ratios. In memory, nothing written. Writes bench/results/rin.md and rin.floors.json.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getCrypto, type Crypto } from '../ts/crypto/index.js';
import { canonicalGoJson, parseWireJson, type WireNode } from '../ts/crypto/gojson.js';
import { actionRequestDigest, decodeActionRequest, decodeCapabilitySpec, decodeEffects, effectPreviewDigest, sealCapabilitySpec } from '../ts/rin/index.js';
import { floorTable, fmt, median, MS, ratioFloor, rates, SAMPLES, table, writeFloors, type Floor } from './measure.js';

const wasm = getCrypto('wasm');
const js = getCrypto('js');
const decoder = new TextDecoder();

// ---------------------------------------------------------------- inputs from the reference corpus
const corpusDir = new URL('../../shared/conformance/rin-reference/', import.meta.url);
if (!existsSync(corpusDir)) {
  console.warn(`\n*** rin bench SKIPPED: the conformance corpus ${fileURLToPath(corpusDir)} is absent (its documents are the inputs) ***\n`);
  process.exit(0);
}
type Case = { id: string; expect: Record<string, unknown>; [k: string]: unknown };
const corpus = (name: string): Case[] => JSON.parse(readFileSync(new URL(name, corpusDir), 'utf8')).cases;

function member(node: WireNode, name: string): WireNode {
  const m = node.kind === 'object' ? node.members.find(([n]) => n === name) : undefined;
  if (!m) throw new Error(`no member ${name}`);
  return m[1];
}

const spec = corpus('capability-digest.json').find((c) => c.id === 'capdigest-01')!;
// The largest accepted request: the most target refs and arguments.
const request = corpus('action-request-digest.json').reduce((a, b) => ((b['request_json'] as string).length > (a['request_json'] as string).length ? b : a));
const requestText = request['request_json'] as string;
const argumentsOf = (text: string) => {
  const n = member(parseWireJson(text).root, 'arguments');
  return text.slice(n.start, n.end);
};
// The largest arguments object of the corpus.
const args = corpus('action-request-digest.json')
  .map((c) => argumentsOf(c['request_json'] as string))
  .reduce((a, b) => (b.length > a.length ? b : a));
// 64 effects: the first normalized effect of effects-01, under 64 effect ids in sorted order.
const effects = (() => {
  const text = corpus('effect-digest.json').find((c) => c.id === 'effects-01')!.expect['canonical'] as string;
  const { root } = parseWireJson(text);
  if (root.kind !== 'array' || root.items.length === 0) throw new Error('effects-01 has no effects');
  const first = text.slice(root.items[0]!.start, root.items[0]!.end);
  const id = /"effect_id":"[^"]*"/;
  if (!id.test(first)) throw new Error('effects-01: no effect_id');
  return `[${Array.from({ length: 64 }, (_, i) => first.replace(id, `"effect_id":"effect.e${String(i).padStart(2, '0')}"`)).join(',')}]`;
})();
// A larger document: schema-like, about 64 KiB, with escapes, non-ASCII names and number lexemes.
const bigDoc = (() => {
  const props: string[] = [];
  for (let i = 0; props.join(',').length < 64 << 10; i++) {
    props.push(`"p${(i * 7919) % 100000}\u00e9${i}":{"type":"number","maximum":1.50E+${i % 9},"description":"a<b & \\u00e9 \\n ${i}","enum":[1.0,-0,${i}]}`);
  }
  return `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{${props.join(',')}}}`;
})();
const documents = [
  { name: `arguments (${args.length} B)`, text: args },
  { name: `document (${(bigDoc.length / 1024).toFixed(0)} KiB)`, text: bigDoc },
];

// ---------------------------------------------------------------- our side
type Rate = { wall: number; cpu: number };

interface Row {
  name: string;
  /** What one operation is, on each side. */
  measures: string;
  f?: (c: Crypto) => unknown;
  /** One rate per round. */
  wasm: Rate[];
  js: Rate[];
  go: Rate[];
}
const rows: Row[] = [];
for (const d of documents) {
  const want = canonicalGoJson(d.text);
  for (const c of [wasm, js]) {
    if (decoder.decode(c.goCanonicalJson(d.text)) !== want) throw new Error(`${c.backend}: canonical ${d.name} differs from gojson.ts`);
  }
  rows.push({
    name: `canonical ${d.name}`,
    measures: 'strict parse + canonical text; Go: Decoder.UseNumber + Marshal',
    f: (c) => c.goCanonicalJson(d.text),
    wasm: [],
    js: [],
    go: [],
  });
  rows.push({
    name: `canonical ${d.name} + SHA-256`,
    measures: 'the same, hashed (ours only)',
    f: (c) => c.goCanonicalJsonSha256(d.text),
    wasm: [],
    js: [],
    go: [],
  });
}

// The digests of ts/rin on each backend, from values decoded once as Go decodes once (the decoding is
// not timed on either side); each must match the corpus.
const specValue = decodeCapabilitySpec(spec['spec_json'] as string);
const requestValue = decodeActionRequest(requestText);
const effectsValue = decodeEffects(effects);
const digestCases: Array<{ name: string; measures: string; f: (c: Crypto) => string; want?: string }> = [
  {
    name: 'capability spec seal',
    measures:
      'SealCapabilitySpec: copy, sort scopes, 3 schemas canonicalized + hashed + compiled (ours keeps compiled schemas in a cache by digest; Go compiles anew), field checks, digest',
    f: (c) => sealCapabilitySpec(specValue, c).digest ?? '',
    want: spec.expect['digest'] as string,
  },
  {
    name: 'action request digest',
    measures: 'ActionRequestDigest: full request validation, arguments checked + canonicalized, payload encoded, SHA-256',
    f: (c) => actionRequestDigest(requestValue, c),
    want: request.expect['digest'] as string,
  },
  {
    name: 'effect digest (64 effects)',
    measures: 'EffectPreviewDigest: count check, payload encoded (attributes compacted), SHA-256; Go also re-validates the encoded text',
    f: (c) => effectPreviewDigest(effectsValue, c),
  },
];
const ourDigests = new Map<string, string>();
for (const d of digestCases) {
  const [a, b] = [d.f(wasm), d.f(js)];
  if (a !== b || (d.want !== undefined && a !== d.want)) throw new Error(`${d.name}: wasm ${a}, js ${b}, corpus ${d.want}`);
  ourDigests.set(d.name, a);
  rows.push({ name: d.name, measures: d.measures, f: d.f, wasm: [], js: [], go: [] });
}
const ROUNDS = Math.max(3, Number(process.env['BENCH_ROUNDS'] ?? SAMPLES));
function ourRound(): void {
  for (const r of rows) {
    r.wasm.push(rates(() => r.f!(wasm)));
    r.js.push(rates(() => r.f!(js)));
  }
}

// ---------------------------------------------------------------- the Go reference
const notes: string[] = [];
const goDir = fileURLToPath(new URL('./rin-go/', import.meta.url));
const goVersion = spawnSync('go', ['version'], { encoding: 'utf8' });
let goLine = '';
/** One run of the Go bench: undefined when Go cannot run here (said loudly in the notes). */
let goRound: (() => void) | undefined;
const dir = mkdtempSync(join(os.tmpdir(), 'rin-bench-'));
if (goVersion.status !== 0) {
  const note = '*** Go reference SKIPPED: `go` is not on PATH, so bench/rin-go cannot run ***';
  console.warn(`\n${note}\n`);
  notes.push(note);
} else if (!existsSync(new URL('../../shared/reference/rin-src/go.mod', import.meta.url))) {
  const note = '*** Go reference SKIPPED: ../shared/reference/rin-src is absent ***';
  console.warn(`\n${note}\n`);
  notes.push(note);
} else {
  const input = join(dir, 'inputs.json');
  writeFileSync(
    input,
    // Texts as strings, so that number lexemes reach Go as written.
    JSON.stringify({ spec_json: spec['spec_json'], request_json: requestText, effects_json: effects, documents }),
  );
  // Built once, so that every round times the same binary and no round pays for compiling.
  const binary = join(dir, 'rin-bench');
  const build = spawnSync('go', ['build', '-o', binary, '.'], { cwd: goDir, encoding: 'utf8', timeout: 600_000 });
  if (build.status !== 0) throw new Error(`bench/rin-go does not build: ${build.stderr || build.error}`);
  goRound = () => {
    // Go's testing.Benchmark picks its own duration (about 1 s a case).
    const run = spawnSync(binary, [input], { encoding: 'utf8', timeout: 600_000 });
    if (run.status !== 0) throw new Error(`bench/rin-go failed: ${run.stderr || run.error}`);
    const go = JSON.parse(run.stdout) as {
      go: string;
      gomaxprocs: number;
      results: Array<{ name: string; output: string; ops_per_sec: number; ops_per_cpu_sec: number }>;
    };
    goLine = `Go reference: ${go.go}, GOMAXPROCS ${go.gomaxprocs}`;
    const byName = new Map(go.results.map((r) => [r.name, r]));
    if (byName.get('capability spec seal')?.output !== spec.expect['digest']) throw new Error('Go sealed capdigest-01 to another digest than the corpus says');
    if (byName.get('action request digest')?.output !== request.expect['digest']) throw new Error(`Go digested ${request.id} differently from the corpus`);
    for (const d of documents) {
      const r = byName.get(`canonical ${d.name}`);
      if (!r) throw new Error(`Go gave no result for ${d.name}`);
      if (r.output !== canonicalGoJson(d.text)) throw new Error(`Go's canonical ${d.name} differs from ours`);
    }
    for (const r of go.results) {
      const row = rows.find((x) => x.name === r.name);
      if (!row) throw new Error(`Go gave a result for ${r.name}, which the TypeScript side does not measure`);
      if (!r.name.startsWith('canonical ') && r.output !== ourDigests.get(r.name)) throw new Error(`${r.name}: Go ${r.output}, ours ${ourDigests.get(r.name)}`);
      row.go.push({ wall: r.ops_per_sec, cpu: r.ops_per_cpu_sec });
    }
  };
}

const loads: number[] = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    loads.push(os.loadavg()[0]!);
    ourRound();
    goRound?.();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

// ---------------------------------------------------------------- report
const med = (xs: Rate[], k: keyof Rate) => (xs.length === 0 ? undefined : median(xs.map((x) => x[k])));
const cell = (n: number | undefined) => (n === undefined ? '—' : fmt(n));
/** The median of the rounds' paired ratios. */
const ratio = (a: Rate[], b: Rate[], k: keyof Rate) =>
  a.length === 0 || a.length !== b.length
    ? '—'
    : `${ratioFloor(
        '',
        a.map((x) => x[k]),
        b.map((x) => x[k]),
        0,
      ).median.toFixed(2)}×`;
const rateTable = (k: keyof Rate) =>
  table(
    ['case', 'wasm', 'js', 'Go reference', 'wasm / Go', 'js / Go', 'wasm / js'],
    rows.map((r) => [
      r.name,
      cell(med(r.wasm, k)),
      cell(med(r.js, k)),
      cell(med(r.go, k)),
      ratio(r.wasm, r.go, k),
      ratio(r.js, r.go, k),
      ratio(r.wasm, r.js, k),
    ]),
  );
const floors: Floor[] = [];
const floorNotes: string[] = [];
for (const d of digestCases) {
  const r = rows.find((x) => x.name === d.name)!;
  if (r.go.length !== ROUNDS) {
    floorNotes.push(`floors on ${d.name} (ours ÷ Go) NOT MEASURED: the Go reference did not run`);
    continue;
  }
  for (const b of ['wasm', 'js'] as const)
    floors.push(
      ratioFloor(
        `${d.name}, ${b} ÷ Go reference (ops per CPU second)`,
        r[b].map((x) => x.cpu),
        r.go.map((x) => x.cpu),
        1.0,
      ),
    );
}
writeFloors('rin', floors, floorNotes);
const lines = [
  `# rin.host/v2 canonical JSON and digests (ops/s)`,
  '',
  `Node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}${goLine ? `; ${goLine}` : ''}.`,
  `${ROUNDS} rounds (ours ${MS} ms a case, then Go's), the median round of each side, ratios the median of the rounds' paired ratios; 1-minute load average at each round: ${loads.map((l) => l.toFixed(2)).join(', ')}. In memory, nothing written.`,
  `Inputs from ../shared/conformance/rin-reference: capdigest-01, ${request.id} (${requestText.length} B request), 64 effects from effects-01.`,
  'The floors are ours ÷ Go ≥ 1.0× on the three digest rows, each backend, judged on ops per CPU second: on a loaded machine the wall-time rates mostly say how much CPU each',
  "process was given (Go's several threads get more of it than Node's one), so the CPU-time table is the steadier comparison.",
  '',
  '## Operations per second of wall time',
  '',
  ...rateTable('wall'),
  '',
  '## Operations per second of CPU time (the process, all threads)',
  '',
  ...rateTable('cpu'),
  '',
  '## What one operation is',
  '',
  ...table(
    ['case', 'measures'],
    rows.map((r) => [r.name, r.measures]),
    'll',
  ),
  '',
  '## Floors, from this run',
  '',
  ...floorTable(floors),
  '',
  ...notes,
  ...floorNotes,
];
console.log(lines.join('\n'));
writeFileSync(new URL('./results/rin.md', import.meta.url), lines.join('\n') + '\n');
