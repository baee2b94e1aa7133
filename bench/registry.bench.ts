// The registry server over loopback HTTP, embedded (PGlite) vs PostgreSQL: (1) registrations/s (challenge,
// proof of work at difficulty 1, registration) and (2) signed requests/s (GET /api/v1/inbox, each one a
// signature check, a request-id insert and a query), both from 8 concurrent clients; (3) browse latency,
// median and p95, with 10,000 active invitations (inserted by SQL: posting is not what is measured);
// (4) proof-of-work solve time per difficulty on the wasm and js backends. PostgreSQL is
// AIGENORA_TEST_PG_URL, or a throwaway cluster started by scripts/lib/postgres.sh as the test suite
// does; without PostgreSQL its rows say SKIPPED. No floors: figures only. Writes bench/results/registry.md.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Crypto } from '../ts/crypto/backend.js';
import { toHex } from '../ts/crypto/encoding.js';
import { getCrypto } from '../ts/crypto/index.js';
import { registrationBody, restHeaders, signRegistration } from '../ts/registry/auth.js';
import { createServer, listen } from '../ts/server/app.js';
import { silentLog } from '../ts/server/log.js';
import { fmt, median, percentile, table } from './measure.js';
import { freshDatabase, postgresUrl } from './postgres.js';

const SECONDS = Number(process.env['BENCH_REGISTRY_SECONDS'] ?? 4);
const CONCURRENCY = 8;
const INVITATIONS = 10_000;
const BROWSE_SAMPLES = Number(process.env['BENCH_REGISTRY_BROWSE'] ?? 150);
/** Solves per difficulty and backend: difficulty 3 needs about 2^24 hashes each, minutes on the js backend. */
const POW_SOLVES: Record<string, Record<number, number>> = {
  wasm: { 1: 200, 2: 20, 3: Number(process.env['BENCH_REGISTRY_POW3_WASM'] ?? 3) },
  js: { 1: 100, 2: 10, 3: Number(process.env['BENCH_REGISTRY_POW3_JS'] ?? 1) },
};
const load0 = loadavg();
const c = getCrypto('wasm');
const hex = (n: number) => randomBytes(n).toString('hex');

/** A signed request exactly as the reference's RestClient sends it. */
async function signed(base: string, seed: Uint8Array, method: string, path: string, body = ''): Promise<Response> {
  const bytes = new TextEncoder().encode(body);
  const headers = restHeaders(c, seed, { timestamp: Math.floor(Date.now() / 1000), method, path, requestId: hex(16), body: bytes });
  return fetch(base + path, { method, headers, body: bytes.length > 0 ? bytes : undefined });
}

async function registerOne(base: string): Promise<Uint8Array> {
  const seed = randomBytes(32);
  const ch = (await (await signed(base, seed, 'GET', '/api/v1/auth/challenge')).json()) as { nonce: string; difficulty: number };
  const counter = c.powSolve(ch.nonce, toHex(c.ed25519PublicKey(seed)), ch.difficulty);
  const res = await signed(base, seed, 'POST', '/api/v1/auth/register', registrationBody(signRegistration(c, seed, ch.nonce, `bench${hex(3)}`, counter)));
  if (res.status !== 201) throw new Error(`registration answered ${res.status}: ${await res.text()}`);
  return seed;
}

/** Operations/s from CONCURRENCY clients looping `op` for SECONDS. */
async function throughput(op: () => Promise<unknown>): Promise<number> {
  const end = performance.now() + SECONDS * 1000;
  let n = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        await op();
        n++;
      }
    }),
  );
  return (n * 1000) / (performance.now() - t0);
}

async function seedInvitations(db: { query(sql: string, params?: readonly unknown[]): Promise<unknown[]> }, now: number): Promise<void> {
  await db.query(
    `INSERT INTO agents (public_key, agent_id, nickname, bio, registered_at)
     SELECT lpad(to_hex(g), 64, '0'), 'agt_bench_' || g, 'bench' || g, '', $1::bigint FROM generate_series(1, 100) g`,
    [now],
  );
  await db.query(
    `INSERT INTO invitations (post_id, public_key, type, message, tags, protocol_id, host_control_mode, transport, iroh_ticket,
       transport_info, transport_binding_signature, options, status, created_at, expires_at)
     SELECT md5('p' || g), lpad(to_hex(1 + g % 100), 64, '0'), (ARRAY['supply','demand','chat'])[1 + g % 3], 'bench invitation ' || g,
       jsonb_build_array('bench', 'tag' || (g % 10)), lpad(to_hex(1 + g % 20), 64, 'a'), 'hybrid', 'iroh', 'ticket' || g,
       '{"version":1}'::jsonb, repeat('0', 128), NULL, 'active', $1::bigint - g * 1000, $1::bigint + 3600000
     FROM generate_series(1, ${INVITATIONS}) g`,
    [now],
  );
}

interface DbResult {
  kind: string;
  registrations: number;
  requests: number;
  browse: { label: string; ms: number[] }[];
}

async function runOn(kind: 'pglite' | 'postgres', dbUrl?: string): Promise<DbResult> {
  const dir = mkdtempSync(join(tmpdir(), 'aigenora-regbench-'));
  const unlimited = { burst: 1e9, perSecond: 1e9 };
  const server = await createServer({
    ...(dbUrl ? { dbUrl } : { dataDir: dir }),
    log: silentLog,
    config: { powDifficulty: 1, ratePerKey: unlimited, ratePerIp: unlimited },
  });
  const http = await listen(server);
  try {
    const registrations = await throughput(() => registerOne(http.url));
    const me = await registerOne(http.url);
    const requests = await throughput(async () => {
      const r = await signed(http.url, me, 'GET', '/api/v1/inbox');
      if (r.status !== 200) throw new Error(`signed GET answered ${r.status}`);
      await r.arrayBuffer();
    });
    await seedInvitations(server.ctx.db, Date.now());
    const pid = 'a'.repeat(63) + '5';
    const queries: [string, string][] = [
      ['newest 20', '/api/v1/invitations'],
      ['by protocol_id (1 in 20)', `/api/v1/invitations?protocol_id=${pid}`],
      ['by tag (1 in 10)', '/api/v1/invitations?tags=tag3'],
      ['by type + tag', '/api/v1/invitations?type=demand&tags=bench,tag7'],
      ['100 per page', '/api/v1/invitations?limit=100'],
    ];
    const browse: DbResult['browse'] = [];
    for (const [label, path] of queries) {
      const ms: number[] = [];
      for (let i = 0; i < BROWSE_SAMPLES + 10; i++) {
        const t0 = performance.now();
        const r = await signed(http.url, me, 'GET', path);
        const body = (await r.json()) as { results?: unknown[] };
        if (r.status !== 200 || !Array.isArray(body.results) || body.results.length === 0) throw new Error(`${path} answered ${r.status}`);
        if (i >= 10) ms.push(performance.now() - t0);
      }
      browse.push({ label, ms });
    }
    return { kind, registrations, requests, browse };
  } finally {
    await http.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function powTimes(crypto: Crypto, difficulty: number, n: number): { ms: number[]; hashesPerSecond: number } {
  const ms: number[] = [];
  let hashes = 0;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const nonce = hex(16);
    const t0 = performance.now();
    const counter = crypto.powSolve(nonce, hex(32), difficulty);
    const t = performance.now() - t0;
    ms.push(t);
    total += t;
    hashes += counter + 1;
  }
  return { ms, hashesPerSecond: (hashes * 1000) / total };
}

const results: DbResult[] = [await runOn('pglite')];
const pgServer = await postgresUrl();
if (pgServer) {
  const db = await freshDatabase(pgServer.url);
  try {
    results.push(await runOn('postgres', db.url));
  } finally {
    await db.drop();
    pgServer.stop();
  }
}

const pow: { backend: string; difficulty: number; ms: number[]; hashesPerSecond: number }[] = [];
for (const backend of ['wasm', 'js'] as const)
  for (const d of [1, 2, 3])
    if (POW_SOLVES[backend]![d]! > 0) pow.push({ backend, difficulty: d, ...powTimes(getCrypto(backend), d, POW_SOLVES[backend]![d]!) });

const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const load1 = loadavg();
const lines = [
  '# Registry server (loopback HTTP)',
  '',
  `${new Date().toISOString()} · Node ${process.version} · load average ${load0[0]!.toFixed(2)} at the start, ${load1[0]!.toFixed(2)} at the end, on a shared 2-core machine`,
  '',
  `No floors: figures only (each database is its own anchor in the table; nothing else here does the same work). Durability: PGlite on disk in a temporary directory, with PGlite's own settings (not tuned here); PostgreSQL a throwaway local cluster with fsync off${process.env['AIGENORA_TEST_PG_URL'] ? ' unless AIGENORA_TEST_PG_URL points elsewhere' : ''}.`,
  '',
  `Client and server in one process over 127.0.0.1 (Node fetch → @hono/node-server), ${CONCURRENCY} concurrent clients for ${SECONDS} s each. A registration is GET challenge + proof of work at difficulty 1 (client side, wasm) + POST register; a signed request is GET /api/v1/inbox (signature check, request-id insert, one query).${pgServer ? '' : ' PostgreSQL: SKIPPED (no AIGENORA_TEST_PG_URL and no cluster could be started).'}`,
  '',
  ...table(
    ['database', 'registrations/s', 'signed requests/s'],
    results.map((r) => [r.kind, fmt(r.registrations), fmt(r.requests)]),
  ),
  '',
  `## Browse with ${fmt(INVITATIONS)} active invitations`,
  '',
  `Sequential signed GET /api/v1/invitations, ${BROWSE_SAMPLES} samples after 10 warm-up requests; each answer also counts its filter's matches (\`total\`).`,
  '',
  ...table(
    ['database', 'query', 'median ms', 'p95 ms'],
    results.flatMap((r) => r.browse.map((b) => [r.kind, b.label, ms(median(b.ms)), ms(percentile(b.ms, 0.95))])),
    'llrr',
  ),
  '',
  '## Proof of work (solve time per difficulty)',
  '',
  'Difficulty d = d leading zero bytes of SHA-256(nonce + public_key + counter), about 256^d hashes per solve (a geometric draw: few solves spread widely); random nonces. Expected time at the measured rate = 256^d ÷ hashes/s.',
  '',
  ...table(
    ['backend', 'difficulty', 'solves', 'median ms', 'p95 ms', 'hashes/s', 'expected ms'],
    pow.map((p) => [
      p.backend,
      p.difficulty,
      p.ms.length,
      ms(median(p.ms)),
      ms(percentile(p.ms, 0.95)),
      fmt(p.hashesPerSecond),
      ms((256 ** p.difficulty * 1000) / p.hashesPerSecond),
    ]),
  ),
];
const report = `${lines.join('\n')}\n`;
process.stdout.write(report);
writeFileSync(new URL('results/registry.md', import.meta.url), report);
