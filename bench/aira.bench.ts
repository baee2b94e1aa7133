// `npm run bench`: the Aira runtime. (1) Decisions per second of its pure functions, with no authority:
// admission of one call in each of the 81 matrix cells, and the one-round reduction of realistic batches
// (reads + effects + an irreversible publish; duplicate request ids), each batch's decisions first checked
// against what M38–M40 say, written here by hand. (2) For context, whole `AiraTask.call` throughput of a
// read against the document authority with the memory store, on both crypto backends. (3) MCP round trips
// per second with the official SDK client against `aigenora aira mcp` as an installed package runs it
// (the compiled dist/, built by `npm run bench` first): over stdio, one request in flight and several,
// and over Streamable HTTP; with median and p95 latency and the CPU each side spent per round trip.
// No floors: figures only. Knobs: BENCH_MS and BENCH_ROUNDS (in-process rows, default 400 ms, best of 3),
// BENCH_AIRA_SECONDS (each MCP row, default 4), BENCH_AIRA_LONG_TASK (default 20000). Writes bench/results/aira.md.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { getCrypto } from '../ts/crypto/index.js';
import { admit, reduceBatch, type AdmissionView, type ClassifiedCall, type Reduction } from '../ts/aira/batch.js';
import { defaultContract } from '../ts/aira/contract.js';
import { bracketTask, openDocumentAuthority } from '../ts/aira/doc/index.js';
import { startTask } from '../ts/aira/runtime.js';
import { META_OPS, OP_INPUTS, RUNTIME_STATES, type MetaCall, type MetaOp } from '../ts/aira/schema.js';
import { fmt, median, MS, percentile, rates, table } from './measure.js';

/** Seconds each MCP row runs (after a warm-up of a quarter of it, at least WARM_MS). */
const MCP_SECONDS = Number(process.env['BENCH_AIRA_SECONDS'] ?? 4);
/** Warm-up before a timed async row: the runtime's paths need longer than `rates`' MS / 4 to settle. */
const WARM_MS = Math.max(MS / 4, 500);
/** Big enough that no measured task runs out of calls: every answer is checked to be a scheduled read. */
const BUDGET = { calls: 1_000_000, effects: 50 };
const loads: number[] = [os.loadavg()[0]!];
const wasm = getCrypto('wasm');
const js = getCrypto('js');
const contract = defaultContract(wasm);

// ---------------------------------------------------------------- calls, each a valid MetaCall
const hash = (prefix: string, n: number) => `${prefix}:sha256:${n.toString(16).padStart(64, '0')}`;
const HEAD = 'rev:sha256:' + 'a'.repeat(64);
const CAND = hash('cand', 1);
const TOKEN = hash('vtok', 2);
const CAP = 'cap:doc.setParameter@1';
const plan = {
  baseRevision: HEAD,
  intentFrameHash: hash('intent', 3),
  bindings: { operationCatalog: 'aira.doc.ops/1', discoveryCatalogHash: hash('catalog', 4), runtimeSnapshot: hash('snapshot', 5), grantId: 'grant:local' },
  steps: [{ id: 's1', capability: CAP, mode: 'authoring', args: { name: 'width', value: 45 } }],
  acceptanceAssertions: ['width-45'],
  estimatedEffects: ['parameter width'],
  estimatedRisk: 'low',
};
/** The input members each op needs to be admitted where its cell admits it. */
const inputs: Record<MetaOp, Record<string, unknown>> = {
  'interface.manifest': {},
  'catalog.search': { query: 'parameter', limit: 5 },
  'catalog.describe': { capability: CAP },
  'model.read': { select: ['parameters/width'] },
  'model.proposePatch': { plan },
  'model.preview': { candidateId: CAND },
  'model.validate': { candidateId: CAND },
  'model.commit': { candidateId: CAND, validationToken: TOKEN },
  'model.revert': { toRevision: 'rev:sha256:' + 'b'.repeat(64) },
};
function call(op: MetaOp, requestId: string, extra: Record<string, unknown> = {}): MetaCall {
  // Parsed as the runtime parses a call before it decides anything, so the bench only decides valid calls.
  return { op, input: OP_INPUTS[op].parse({ requestId, ...inputs[op], ...extra }) } as MetaCall;
}
// The effect classes the document authority gives (its own answer, not timed).
const docAuthority = openDocumentAuthority({ crypto: wasm });
const classify = (c: MetaCall): ClassifiedCall => ({ kind: 'call', requestId: c.input.requestId, call: c, effectClass: docAuthority.effectClass(c) });

/** A view of a task in `state` that meets every binding requirement, so the cell alone decides. */
const view = (state: AdmissionView['state']): AdmissionView => ({
  state,
  terminal: false,
  head: HEAD,
  searched: new Set([CAP]),
  candidateId: CAND,
  validationToken: TOKEN,
  verifiedRevision: HEAD,
  discoveryMissing: null,
});

// ---------------------------------------------------------------- (1) pure decisions
const cells = RUNTIME_STATES.flatMap((s) => META_OPS.map((op) => ({ v: view(s), c: classify(call(op, `r-${op}`)) })));
let admitted81 = 0;
for (const { v, c } of cells) if (c.kind === 'call' && admit(contract, v, c.call, c.effectClass).admit) admitted81++;
// M36: contract 1.0.0 admits 49 of the 81 (state, op) pairs for a call that is no variant, counted by hand.
if (admitted81 !== 49) throw new Error(`admission across the 81 cells admitted ${admitted81}, the matrix has 49 admitted cells`);

type Want = Array<'S' | 'E' | 'D' | `R:${string}`>;
interface BatchCase {
  name: string;
  state: AdmissionView['state'];
  calls: ClassifiedCall[];
  used: ReadonlySet<string>;
  /** Per call in input order, by hand from M38–M40: S scheduled read, E the scheduled effect, D deferred, R:code rejected. */
  want: Want;
}
const reads = (p: string) => [
  call('interface.manifest', `${p}1`),
  call('catalog.search', `${p}2`),
  call('catalog.describe', `${p}3`),
  call('model.read', `${p}4`),
];
const publish = call('model.commit', 'p-publish', { target: 'publish' });
const batches: BatchCase[] = [
  {
    name: '4 reads + 2 effects + 1 irreversible (readBack)',
    state: 'readBack',
    calls: [...reads('a'), call('model.proposePatch', 'a5'), call('model.revert', 'a6'), publish].map(classify),
    used: new Set(),
    want: ['S', 'S', 'S', 'S', 'E', 'D', 'D'],
  },
  {
    name: 'the same, the irreversible publish first (readBack)',
    state: 'readBack',
    calls: [publish, ...reads('b'), call('model.proposePatch', 'b5'), call('model.revert', 'b6')].map(classify),
    used: new Set(),
    want: ['E', 'S', 'S', 'S', 'S', 'D', 'D'],
  },
  {
    name: 'duplicates and refusals: 8 calls (describe)',
    state: 'describe',
    calls: [
      call('catalog.search', 'd1'),
      call('model.read', 'd1'), // again in the batch
      call('interface.manifest', 'old'), // used by an earlier round
      call('catalog.describe', 'd2'),
      call('model.preview', 'd3'), // no candidate yet in describe
      call('model.proposePatch', 'd4'),
      call('model.proposePatch', 'd4'), // again, after an admitted one
      call('model.commit', 'd5'), // not validated
    ].map(classify),
    used: new Set(['old']),
    want: ['S', 'R:DUPLICATE_REQUEST_ID', 'R:DUPLICATE_REQUEST_ID', 'S', 'R:CANDIDATE_REQUIRED', 'E', 'R:DUPLICATE_REQUEST_ID', 'R:VALIDATION_REQUIRED'],
  },
  {
    name: '32 reads (observe)',
    state: 'observe',
    calls: Array.from({ length: 32 }, (_, i) => classify(call(i % 2 ? 'model.read' : 'interface.manifest', `q${i}`))),
    used: new Set(),
    want: Array.from({ length: 32 }, () => 'S' as const),
  },
];
const shape = (r: Reduction): Want =>
  r.decisions.map((d) => (d.decision === 'rejected' ? (`R:${d.code}` as const) : d.decision === 'deferred' ? 'D' : d.role === 'read' ? 'S' : 'E'));
for (const b of batches) {
  const got = shape(reduceBatch(contract, view(b.state), b.calls, b.used, 1_000));
  if (JSON.stringify(got) !== JSON.stringify(b.want)) throw new Error(`${b.name}: reduced to ${got.join(' ')}, M40 says ${b.want.join(' ')}`);
}
await docAuthority.close();

type Rate = { wall: number; cpu: number };
const best = (a: Rate | undefined, b: Rate): Rate => (a ? { wall: Math.max(a.wall, b.wall), cpu: Math.max(a.cpu, b.cpu) } : b);
interface Row {
  name: string;
  unit: string;
  note: string;
  run: () => Rate | Promise<Rate>;
  rate?: Rate;
}
const pure: Row[] = [
  {
    name: 'admission, each of the 81 cells',
    unit: 'decision',
    note: `one \`admit\` per cell (${admitted81} admit, ${81 - admitted81} refuse), binding requirements met`,
    run: () =>
      rates(() => {
        for (const { v, c } of cells) if (c.kind === 'call') admit(contract, v, c.call, c.effectClass);
      }, cells.length),
  },
  ...batches.map((b): Row => {
    const v = view(b.state);
    return {
      name: `reduction: ${b.name}`,
      unit: 'decision',
      note: `\`reduceBatch\` of ${b.calls.length} calls: ${b.want.join(' ')}`,
      run: () => rates(() => reduceBatch(contract, v, b.calls, b.used, 1_000), b.calls.length),
    };
  }),
  (() => {
    // For scale: what the runtime does to every call before it decides (not part of a decision).
    const raw = cells.slice(0, 9).map(({ c }) => (c.kind === 'call' ? c.call : null)!);
    return {
      name: 'for scale: input schema check (zod), one call of each op',
      unit: 'call',
      note: '`OP_INPUTS[op].parse`, as the runtime checks each call before admission',
      run: () =>
        rates(() => {
          for (const c of raw) OP_INPUTS[c.op].parse(c.input);
        }, raw.length),
    };
  })(),
];

// ---------------------------------------------------------------- (2) whole calls through AiraTask
/** ops/s of an async `f` run back to back for about MS ms after a warm-up, wall and process CPU. */
async function asyncRates(f: (i: number) => Promise<unknown>): Promise<Rate> {
  let i = 0;
  const warm = performance.now() + WARM_MS;
  while (performance.now() < warm) await f(i++);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < MS) {
    await f(i++);
    n++;
  }
  const cpu = process.cpuUsage(cpu0);
  return { wall: (n * 1000) / (performance.now() - t0), cpu: (n * 1e6) / Math.max(1, cpu.user + cpu.system) };
}
const whole: Row[] = [wasm, js].flatMap((crypto) =>
  (['model.read', 'interface.manifest'] as const).map((op): Row => ({
    name: `AiraTask.call ${op} (${crypto.backend})`,
    unit: 'call',
    note: 'input check, admission, the authority (memory store, records re-hashed on read), envelope, trace event',
    // A fresh task each round, so no round runs on a longer trace than another.
    run: async () => {
      const authority = openDocumentAuthority({ crypto });
      try {
        const task = await startTask({ authority, crypto, task: { ...bracketTask(), budget: BUDGET } });
        return await asyncRates(async (i) => {
          const e = await task.call({ op, input: { requestId: `w${i}`, ...(op === 'model.read' ? { select: ['parameters/width'] } : {}) } });
          if (e.status !== 'success' || e.task.terminal !== null) throw new Error(`${op}: ${e.status}, terminal ${e.task.terminal}`);
        });
      } finally {
        await authority.close();
      }
    },
  })),
);

// Measured once, after the rounds: the same read deep into a long task. The runtime keeps no per-call
// scan over the task's history, so this row should match the fresh one; a gap means one crept back.
const LONG_TASK = Number(process.env['BENCH_AIRA_LONG_TASK'] ?? 20_000);
const long: Row = {
  name: `AiraTask.call model.read (wasm), after ${LONG_TASK} calls in the task`,
  unit: 'call',
  note: `as the first row, on a task that has already answered ${LONG_TASK} reads (untimed)`,
  run: async () => {
    const authority = openDocumentAuthority({ crypto: wasm });
    try {
      const task = await startTask({ authority, crypto: wasm, task: { ...bracketTask(), budget: BUDGET } });
      const read = async (i: number) => {
        const e = await task.call({ op: 'model.read', input: { requestId: `l${i}`, select: ['parameters/width'] } });
        if (e.status !== 'success' || e.task.terminal !== null) throw new Error(`long task: ${e.status}, terminal ${e.task.terminal}`);
      };
      for (let i = 0; i < LONG_TASK; i++) await read(i);
      return await asyncRates((i) => read(LONG_TASK + i));
    } finally {
      await authority.close();
    }
  },
};

// Rounds over all rows in turn, best round of each row kept: on a shared machine a row's one window
// can fall on a burst of other work, and the JIT settles over the first round.
const ROUNDS = Math.max(1, Number(process.env['BENCH_ROUNDS'] ?? 3));
for (let round = 0; round < ROUNDS; round++) {
  for (const r of [...pure, ...whole]) r.rate = best(r.rate, await r.run());
  loads.push(os.loadavg()[0]!);
}

long.rate = await long.run();
whole.push(long);
loads.push(os.loadavg()[0]!);

// ---------------------------------------------------------------- (3) MCP round trips
const distMain = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(distMain) || !existsSync(new URL('../dist/cli/aira.js', import.meta.url))) {
  throw new Error('dist/ has no aira CLI: run `bash scripts/build.sh` first (`npm run bench` does)');
}
const dir = mkdtempSync(join(os.tmpdir(), 'aira-bench-'));
// What bin/aigenora.mjs runs in an installed package (in a checkout it would run ts/ through tsx).
const launcher = join(dir, 'aigenora.mjs');
writeFileSync(
  launcher,
  `const cli = await import(${JSON.stringify(distMain.href)});\ncli.installProcessGuards();\nprocess.exitCode = await cli.main(process.argv.slice(2));\n`,
);
const taskFile = join(dir, 'task.json');
writeFileSync(taskFile, JSON.stringify({ ...bracketTask(), budget: BUDGET }));

const TICK_US = 1e6 / 100; // /proc/<pid>/stat counts in USER_HZ = 100 on Linux
function childCpuUs(pid: number | null | undefined): number {
  if (!pid) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_US;
  } catch {
    return NaN;
  }
}

interface McpRow {
  name: string;
  rate: number;
  median: number;
  p95: number;
  serverUs: number;
  clientUs: number;
  n: number;
}
let seq = 0;
const readArgs = (op: 'model.read' | 'interface.manifest') => ({ requestId: `m${seq++}`, ...(op === 'model.read' ? { select: ['parameters/width'] } : {}) });

/** The bytes of one read's tools/call result (as JSON), for the plain-HTTP baseline to answer as many. */
let answerBytes = 0;
function mcpSend(name: string, client: Client, op: 'model.read' | 'interface.manifest'): () => Promise<void> {
  return async () => {
    const r = await client.callTool({ name: op, arguments: readArgs(op) });
    const e = r.structuredContent as { status?: string; task?: { terminal?: unknown } } | undefined;
    if (r.isError || e?.status !== 'success' || e.task?.terminal !== null) throw new Error(`${name}: ${JSON.stringify(r).slice(0, 300)}`);
    if (op === 'model.read' && answerBytes === 0) answerBytes = Buffer.byteLength(JSON.stringify(r));
  };
}

/**
 * A fresh server compiles its paths on the first few hundred calls: run `count` round trips, `inflight`
 * at a time, before its first timed row, so that row does not pay for it.
 */
async function warmSession(send: () => Promise<void>, count: number, inflight: number): Promise<void> {
  let left = count;
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      while (left-- > 0) await send();
    }),
  );
}

/** Closed loop: `inflight` workers, each sending the next request as soon as its answer arrives. */
async function roundTrips(name: string, send: () => Promise<void>, inflight: number, serverPid: number | null | undefined): Promise<McpRow> {
  const one = async (lat?: number[]) => {
    const t0 = performance.now();
    await send();
    if (lat) lat.push(performance.now() - t0);
  };
  const loop = async (ms: number, lat?: number[]) => {
    const end = performance.now() + ms;
    let n = 0;
    await Promise.all(
      Array.from({ length: inflight }, async () => {
        while (performance.now() < end) {
          await one(lat);
          n++;
        }
      }),
    );
    return n;
  };
  await loop(Math.max(MCP_SECONDS * 250, WARM_MS));
  const lat: number[] = [];
  const s0 = childCpuUs(serverPid);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const n = await loop(MCP_SECONDS * 1000, lat);
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return {
    name,
    rate: (n * 1000) / wall,
    median: median(lat),
    p95: percentile(lat, 0.95),
    serverUs: (childCpuUs(serverPid) - s0) / n,
    clientUs: (c.user + c.system) / n,
    n,
  };
}

const mcp: McpRow[] = [];
const client = () => new Client({ name: 'aira-bench', version: '1.0.0' });
try {
  // A fresh server (one process, one task) for each row: a task's per-call cost grows with its length
  // (see the last AiraTask row), so every row starts from the same few thousand calls.
  for (const [op, inflight] of [
    ['model.read', 1],
    ['model.read', 4],
    ['model.read', 16],
    ['interface.manifest', 1],
  ] as const) {
    const transport = new StdioClientTransport({ command: process.execPath, args: [launcher, 'aira', 'mcp', '--task', taskFile], stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const c = client();
    try {
      await c.connect(transport);
    } catch (e) {
      throw new Error(`aigenora aira mcp (stdio) did not start: ${e instanceof Error ? e.message : String(e)}; stderr: ${stderr}`);
    }
    try {
      await warmSession(mcpSend('stdio', c, op), 2000, 8);
      mcp.push(await roundTrips(`stdio, ${op}, ${inflight} in flight`, mcpSend('stdio', c, op), inflight, transport.pid));
      loads.push(os.loadavg()[0]!);
    } finally {
      // Closing stdin ends the server's session (and its process).
      await c.close();
    }
  }
  {
    const child = spawn(process.execPath, [launcher, 'aira', 'mcp', '--task', taskFile, '--http', '127.0.0.1:0', '--json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        let err = '';
        const timer = setTimeout(() => reject(new Error(`aigenora aira mcp --http gave no URL in 60 s; stderr: ${err}`)), 60_000);
        child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          const line = out.split('\n').find((l) => l.startsWith('{'));
          if (line) {
            clearTimeout(timer);
            resolve((JSON.parse(line) as { url: string }).url);
          }
        });
        child.once('exit', (code) => reject(new Error(`aigenora aira mcp --http exited ${code}; stderr: ${err}`)));
      });
      // One client session (one task) per row, on the one server.
      for (const inflight of [1, 4]) {
        const c = client();
        await c.connect(new StreamableHTTPClientTransport(new URL(url)));
        try {
          await warmSession(mcpSend('http', c, 'model.read'), 400, 4);
          mcp.push(await roundTrips(`Streamable HTTP, model.read, ${inflight} in flight`, mcpSend('http', c, 'model.read'), inflight, child.pid));
          loads.push(os.loadavg()[0]!);
        } finally {
          await c.close();
        }
      }
    } finally {
      child.kill('SIGTERM');
    }
  }
  {
    // Baseline for the HTTP rows: the same client stack (Node fetch) posting a tools/call-sized request to a
    // bare node:http server in another process that answers as many bytes as a read's result, no MCP at all.
    const server = `import http from 'node:http';
const pad = 'x'.repeat(${Math.max(0, answerBytes - 64)});
const s = http.createServer((req, res) => { let n = 0; req.on('data', (d) => (n += d.length)); req.on('end', () => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ jsonrpc: '2.0', id: n, result: { pad } })); }); });
s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', server], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const port = await new Promise<string>((resolve, reject) => {
        child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()));
        child.once('exit', (code) => reject(new Error(`the baseline HTTP server exited ${code}`)));
      });
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'model.read', arguments: readArgs('model.read') } });
      const send = async () => {
        const r = await fetch(`http://127.0.0.1:${port}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body,
        });
        if (r.status !== 200) throw new Error(`baseline HTTP server answered ${r.status}`);
        await r.json();
      };
      await warmSession(send, 400, 4);
      mcp.push(await roundTrips(`baseline: plain HTTP POST, no MCP, 1 in flight`, send, 1, child.pid));
      loads.push(os.loadavg()[0]!);
    } finally {
      child.kill('SIGTERM');
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

// ---------------------------------------------------------------- report
const rowTable = (rows: Row[]) =>
  table(
    ['case', 'per second (wall)', 'per CPU second', 'what one is'],
    rows.map((r) => [r.name, `${fmt(r.rate!.wall)} ${r.unit}s`, `${fmt(r.rate!.cpu)} ${r.unit}s`, r.note]),
    'lrrl',
  );
const ms = (x: number) => (x >= 10 ? x.toFixed(1) : x.toFixed(2));
const us = (x: number) => (Number.isNaN(x) ? '—' : x.toFixed(0));
const lines = [
  '# Aira runtime: decisions and MCP round trips',
  '',
  `${new Date().toISOString()} · Node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length} · contract ${contract.contractVersion}.`,
  `1-minute load average through the run: ${loads.map((l) => l.toFixed(2)).join(', ')} (a shared machine: other work competes for the same 2 cores, so the wall-time rates say how much CPU the bench was given; the per-CPU-second rates and CPU µs are the steadier figures).`,
  'No floors: figures only, from one run. Durability: the document authority keeps its memory store; nothing is written to disk.',
  '',
  '## Decisions per second (pure functions, no authority)',
  '',
  `\`admit\` and \`reduceBatch\` from ts/aira/batch.ts on contract 1.0.0, ${MS} ms a row after a warm-up, best of ${ROUNDS} rounds. Rates count decisions (one per call). Each batch's`,
  'decisions were first checked against the expected ones written here by hand from M38–M40 (S scheduled read, E the one scheduled effect,',
  'D deferred, R rejected with its code); the admission row checks that 49 of the 81 cells admit.',
  '',
  ...rowTable(pure),
  '',
  '## Whole calls through AiraTask (for context)',
  '',
  `\`task.call\` on a task started with the bracket demo task (budget ${BUDGET.calls} calls) against the document authority with the memory store, one call after another, ${MS} ms a row after ${WARM_MS} ms of warm-up, a fresh task each round, best of ${ROUNDS} rounds (taken in turn with the rows above); each answer checked to be a successful read with the task still open.`,
  '',
  ...rowTable(whole),
  '',
  '## MCP round trips per second',
  '',
  "The official SDK client (`@modelcontextprotocol/sdk` Client, `callTool`, which also checks the answer against the tool's output schema)",
  'against `aigenora aira mcp --task FILE` (document authority, memory store, wasm crypto) run from the compiled dist/ as an installed package',
  "runs it (a checkout's bin/aigenora.mjs would run ts/ through tsx instead). Client and server are separate processes on the same 2 cores.",
  `Each row has a fresh stdio server (over HTTP: a fresh session, i.e. task, on one server) that first answers 2000 (HTTP: 400) of the row's reads 8 (4) at a time, untimed; then a closed loop for ${MCP_SECONDS} s after a ${Math.max(MCP_SECONDS * 250, WARM_MS) / 1000} s warm-up; each answer checked to be a successful read with the task open.`,
  'Reads are `model.read {select: ["parameters/width"]}` or `interface.manifest {}`. One stdio process is one session and one task.',
  'CPU µs per round trip: the server process (from /proc, 10 ms ticks) and the client process.',
  `The baseline row is the HTTP rows' client stack (Node fetch) against a bare node:http server answering as many bytes as one read's result (${answerBytes} B): no MCP, no runtime.`,
  '',
  ...table(
    ['transport, op, requests in flight', 'round trips/s', 'median ms', 'p95 ms', 'server CPU µs', 'client CPU µs', 'round trips'],
    mcp.map((r) => [r.name, fmt(r.rate), ms(r.median), ms(r.p95), us(r.serverUs), us(r.clientUs), r.n]),
  ),
  '',
];
console.log(lines.join('\n'));
writeFileSync(new URL('./results/aira.md', import.meta.url), lines.join('\n'));
