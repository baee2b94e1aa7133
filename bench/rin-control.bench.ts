// The rin.control/v2 control plane end to end on loopback: our daemon on PGlite (on disk, the default
// embedded database) and on PostgreSQL, and the reference Go daemon (.cache/rin-control or
// $AIGENORA_RIN_CONTROL) as a third column, in one run with the same workload. Each daemon gets the
// built-in harbor attached through our host agent over HTTP, and N controllers (one controller lease
// per boat) submit `harbor.inspect` through RinControlClient: an immediate, read-only, low-risk action
// the guarded policy allows (told the harbor's effect vocabulary), so every operation goes submit →
// gateway bind through the host's long poll → policy → delivery → ack → run → outcome.
//
// Two phases per daemon: (1) back-to-back submits (each controller submits again as soon as the last
// submit is accepted; the operations are then waited for), (2) a closed loop (each controller waits
// for an operation's outcome before the next submit), which gives the submit → outcome latency.
// Both are bounded by time and by an operation count that stays under the reference's fixed limit of
// 1,024 operations per daemon. Each daemon runs in a process of its own (ours is this file forked with
// DAEMON_FLAG); the host agent and the controllers share the bench's process. Our daemon's database is
// opened beside it and handed over, to count the transactions and statements an operation costs. No
// floors: figures only. Writes bench/results/rin-control.md.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RawJson } from '../ts/crypto/gojson.js';
import { RinControlClient } from '../ts/rin/client.js';
import { serveRinControl } from '../ts/rin/control/service.js';
import type { RinError } from '../ts/rin/errors.js';
import { startHostAgent, type HostAgent } from '../ts/rin/host-agent.js';
import { SerialDispatcher } from '../ts/rin/hostkit/authority.js';
import { AdapterCoordinator } from '../ts/rin/hostkit/coordinator.js';
import type { ActionRequest, CapabilityRef, Epoch } from '../ts/rin/types.js';
import { CAPABILITY, EFFECT_KINDS, EFFECT_SCOPES } from '../ts/rin/world/catalog.js';
import { HarborWorld } from '../ts/rin/world/harbor.js';
import { openDb, type Db } from '../ts/server/db.js';
import { silentLog } from '../ts/server/log.js';
import { fmt, median, percentile, table } from './measure.js';
import { freshDatabase, postgresUrl } from './postgres.js';

const SECONDS = Number(process.env['BENCH_RIN_CONTROL_SECONDS'] ?? 5);
/** Controllers, one boat each (the harbor allows at most 8 concurrent actors). */
const ACTORS = Math.min(8, Math.max(1, Number(process.env['BENCH_RIN_CONTROL_ACTORS'] ?? 3)));
const WARMUP = 3;
/** Operations per phase across all controllers: two phases and the warm-up stay under the Go daemon's 1,024. */
const PHASE_CAP = 480;
const BIN = process.env['AIGENORA_RIN_CONTROL'] ?? new URL('../.cache/rin-control', import.meta.url).pathname;
/** The daemon child gets the token from its parent by environment, never by argument (it would show in `ps`). */
const TOKEN = process.env['BENCH_RIN_CONTROL_TOKEN'] ?? randomBytes(24).toString('hex');
const DAEMON_FLAG = '--rin-control-daemon';
const PRINCIPAL = 'bench.player';
const SCOPES = ['actor.read', 'actor.control', 'actor.execute', 'operation.cancel', 'rin.policy.confirm'];
const HOST = 'harbor.bench';
const WORLD = 'harbor';
/** The reference's guarded profile told the harbor's effect kinds and scopes (it denies unknown effects). */
const POLICY = JSON.stringify({
  revision: 1,
  profile: 'guarded',
  known_effect_kinds: EFFECT_KINDS,
  known_scopes: EFFECT_SCOPES,
  confirmation_ttl: { event: 16, step: 600, realtime: 30_000 },
  confirmation_scopes: ['rin.policy.confirm'],
});

const loadText = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');

interface Phase {
  ops: number;
  seconds: number;
  /** Submit accepted, ms. */
  submit: number[];
  /** Submit sent → terminal outcome seen, ms. */
  outcome: number[];
  /** Back-to-back phase: first submit → last outcome, s. */
  drainSeconds?: number;
}

interface DbCounts {
  transactions: number;
  statements: number;
  ms: number;
}

interface Column {
  name: string;
  skipped?: string;
  burst?: Phase;
  closed?: Phase;
  agent?: string;
  /** Our daemon: database transactions and statements over the measured operations. */
  db?: DbCounts;
}

/** Counts what the daemon asks of its database (transactions, statements, time inside transactions). */
class CountingDb implements Db {
  transactions = 0;
  statements = 0;
  ms = 0;
  constructor(
    private readonly inner: Db,
    private readonly top = inner,
    private readonly root?: CountingDb,
  ) {}
  get kind(): Db['kind'] {
    return this.inner.kind;
  }
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]> {
    (this.root ?? this).statements++;
    return this.inner.query<R>(sql, params);
  }
  exec(sql: string): Promise<void> {
    return this.inner.exec(sql);
  }
  async transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
    if (this.root) return fn(this);
    this.transactions++;
    const t = performance.now();
    try {
      return await this.top.transaction((tx) => fn(new CountingDb(tx, tx, this)));
    } finally {
      this.ms += performance.now() - t;
    }
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  reset(): void {
    this.transactions = this.statements = this.ms = 0;
  }
}

/** One controller: a lease on its boat and what a submit needs, taken from the boat's observation. */
interface Controller {
  client: RinControlClient;
  actorId: string;
  capability: CapabilityRef;
  specDigest: string;
  epoch: Epoch;
  sequence: number;
  submitted: number;
}

const runId = randomBytes(4).toString('hex');

async function controller(url: string, actorId: string): Promise<Controller> {
  const client = new RinControlClient({ baseUrl: url, token: TOKEN });
  const target = { host_id: HOST, world_id: WORLD, actor_id: actorId };
  await client.acquireController({ ...target, controller_id: `controller.${actorId}`, lease_ttl_millis: 300_000 });
  const observation = await client.observe(target);
  const spec = (await client.listCapabilities(target)).specs.find((s) => s.capability.id === CAPABILITY.inspect);
  if (spec === undefined) throw new Error(`${CAPABILITY.inspect} is not offered to ${actorId}`);
  return { client, actorId, capability: spec.capability, specDigest: spec.digest, epoch: observation.epoch, sequence: observation.sequence, submitted: 0 };
}

/** Submits one inspect; resolves with the operation's id and cursor once the submit is accepted. */
async function submit(c: Controller): Promise<{ id: string; cursor: string }> {
  c.submitted += 1;
  const n = `${runId}.${c.actorId}.${c.submitted}`;
  const request: ActionRequest = {
    request_id: `request.${n}`,
    controller_id: `controller.${c.actorId}`,
    actor_id: c.actorId,
    capability: c.capability,
    spec_digest: c.specDigest,
    arguments: new RawJson('{}'),
    expected_epoch: c.epoch,
    observation_sequence: c.sequence,
    idempotency_key: `key.${n}`,
  };
  const view = await c.client.submitAction({ host_id: HOST, world_id: WORLD, action_request: request });
  if (view.policy_decision?.result !== 'allow' || view.terminal) {
    throw new Error(`submit of ${CAPABILITY.inspect} was not allowed and queued: ${JSON.stringify({ status: view.status, policy: view.policy_decision })}`);
  }
  return { id: view.operation_id, cursor: view.cursor };
}

/** Waits until the operation is terminal; it must have succeeded. */
async function outcome(c: Controller, op: { id: string; cursor: string }): Promise<void> {
  let cursor = op.cursor;
  for (;;) {
    const { operation } = await c.client.waitOperation({ operation_id: op.id, after_cursor: cursor, wait_millis: 5000 });
    cursor = operation.cursor;
    if (!operation.terminal) continue;
    if (operation.status !== 'succeeded') throw new Error(`operation ${op.id} ended ${operation.status}: ${JSON.stringify(operation.outcome ?? operation)}`);
    return;
  }
}

/** Each controller submits as soon as its previous submit is accepted; then every operation is waited for. */
async function burst(controllers: Controller[]): Promise<Phase> {
  const submitMs: number[] = [];
  const outcomeMs: number[] = [];
  const t0 = performance.now();
  const end = t0 + SECONDS * 1000;
  const perController = Math.floor(PHASE_CAP / controllers.length);
  let submitted = 0;
  const waits: Promise<void>[] = [];
  await Promise.all(
    controllers.map(async (c) => {
      // One waiter per controller takes its operations in order, so waits do not pile up on the server.
      let waiter = Promise.resolve();
      for (let i = 0; i < perController && performance.now() < end; i++) {
        const s = performance.now();
        const op = await submit(c);
        submitMs.push(performance.now() - s);
        submitted++;
        waiter = waiter.then(async () => {
          await outcome(c, op);
          outcomeMs.push(performance.now() - s);
        });
      }
      waits.push(waiter);
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(waits);
  return { ops: submitted, seconds, submit: submitMs, outcome: outcomeMs, drainSeconds: (performance.now() - t0) / 1000 };
}

/** Each controller submits, waits for the outcome, and submits again. */
async function closedLoop(controllers: Controller[], seconds = SECONDS, cap = PHASE_CAP): Promise<Phase> {
  const submitMs: number[] = [];
  const outcomeMs: number[] = [];
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const perController = Math.floor(cap / controllers.length);
  await Promise.all(
    controllers.map(async (c) => {
      for (let i = 0; i < perController && performance.now() < end; i++) {
        const s = performance.now();
        const op = await submit(c);
        submitMs.push(performance.now() - s);
        await outcome(c, op);
        outcomeMs.push(performance.now() - s);
      }
    }),
  );
  return { ops: outcomeMs.length, seconds: (performance.now() - t0) / 1000, submit: submitMs, outcome: outcomeMs };
}

/** The harbor (ACTORS boats) attached to the daemon at `url` through our host agent, and the whole workload. */
/** Our daemon's database counters, in its own process. */
interface Counter {
  reset(): Promise<void>;
  read(): Promise<DbCounts>;
}

async function workload(name: string, url: string, counter?: Counter): Promise<Column> {
  const dispatcher = new SerialDispatcher();
  const boats = Array.from({ length: ACTORS }, (_, i) => ({ actor_id: `boat${i + 1}`, name: `Boat ${i + 1}` }));
  const harbor = new HarborWorld({ owner: PRINCIPAL, boats });
  const coordinator = await AdapterCoordinator.create(harbor, dispatcher);
  const errors: RinError[] = [];
  let agent: HostAgent | undefined;
  try {
    agent = await startHostAgent({
      baseUrl: url,
      token: TOKEN,
      coordinator,
      hostId: HOST,
      instanceId: `instance.${runId}`,
      pollWaitMillis: 1000,
      onError: (e) => errors.push(e),
    });
    const controllers = await Promise.all(boats.map((b) => controller(url, b.actor_id)));
    await closedLoop(controllers, 60, WARMUP * controllers.length);
    await counter?.reset();
    console.log(`  ${name}: warmed up, ${ACTORS} controllers; back-to-back submits for up to ${SECONDS} s`);
    const burstPhase = await burst(controllers);
    console.log(`  ${name}: closed loop for up to ${SECONDS} s`);
    const closed = await closedLoop(controllers);
    const s = agent.stats();
    const agentText = `${s.gatewayAnswers} gateway answers, ${s.executed} executed, ${s.refused} refused, ${s.publications} publications, ${s.retries} retries, ${errors.length} errors`;
    if (errors.length > 0)
      console.warn(
        `  ${name}: host agent errors: ${errors
          .slice(0, 3)
          .map((e) => `${e.code}: ${e.message}`)
          .join(' | ')}`,
      );
    return { name, burst: burstPhase, closed, agent: agentText, ...(counter && { db: await counter.read() }) };
  } finally {
    await agent?.stop().catch((e: unknown) => console.warn(`  ${name}: agent stop: ${e instanceof Error ? e.message : String(e)}`));
  }
}

/**
 * The daemon process (this file run with DAEMON_FLAG): our control daemon on PGlite under a temporary
 * directory or on BENCH_RIN_CONTROL_DB, its database opened here, where `aigenora rin serve` would put
 * it, so that its use is counted. Talks to the bench over IPC: {url} once listening; 'reset' and
 * 'read' the counters; it stops on 'stop' or when the bench goes away.
 */
async function daemonProcess(): Promise<void> {
  const dbUrl = process.env['BENCH_RIN_CONTROL_DB'] || undefined;
  const dir = mkdtempSync(join(tmpdir(), 'aigenora-rinbench-'));
  const db = new CountingDb(await openDb({ url: dbUrl, dir: dbUrl ? undefined : join(dir, 'db') }));
  const served = await serveRinControl({
    token: TOKEN,
    principal: { id: PRINCIPAL, granted_scopes: SCOPES },
    policy: POLICY,
    db,
    listen: '127.0.0.1:0',
    log: silentLog,
  });
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      await served.close().catch(() => undefined);
      await db.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    })());
  process.on('disconnect', () => void stop());
  process.on('message', (m: unknown) => {
    if (m === 'reset') {
      db.reset();
      process.send!('reset');
    } else if (m === 'read') process.send!({ transactions: db.transactions, statements: db.statements, ms: db.ms } satisfies DbCounts);
    else if (m === 'stop') void stop();
  });
  process.send!({ url: served.url });
}

/** Our daemon in a process of its own (as the Go daemon is), with the workload run against it. */
async function ours(name: string, dbUrl?: string): Promise<Column> {
  const child = fork(fileURLToPath(import.meta.url), [DAEMON_FLAG], {
    env: { ...process.env, BENCH_RIN_CONTROL_TOKEN: TOKEN, BENCH_RIN_CONTROL_DB: dbUrl ?? '' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const next = (): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`${name}: the daemon process exited (${code}) early`));
      child.once('exit', onExit);
      child.once('message', (m) => {
        child.off('exit', onExit);
        resolve(m);
      });
    });
  try {
    const { url } = (await next()) as { url: string };
    const counter: Counter = {
      reset: async () => {
        const answer = next();
        child.send('reset');
        await answer;
      },
      read: async () => {
        const answer = next();
        child.send('read');
        return (await answer) as DbCounts;
      },
    };
    return await workload(name, url, counter);
  } finally {
    if (child.connected) child.send('stop');
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(kill);
  }
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

async function reference(name: string): Promise<Column> {
  if (!existsSync(BIN)) return { name, skipped: `the reference daemon ${BIN} is absent (build: source scripts/lib/rin-reference.sh && ensure_rin_reference)` };
  const dir = mkdtempSync(join(tmpdir(), 'aigenora-rinbench-go-'));
  const policy = join(dir, 'policy.json');
  writeFileSync(policy, POLICY);
  const port = await freePort();
  const child: ChildProcess = spawn(
    BIN,
    ['--control-addr', `127.0.0.1:${port}`, '--data', join(dir, 'data'), '--principal', PRINCIPAL, '--scopes', SCOPES.join(','), '--policy', policy],
    { env: { ...process.env, RIN_CONTROL_TOKEN: TOKEN }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    const url = `http://127.0.0.1:${port}`;
    for (
      let i = 0;
      !(await fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      ));
      i++
    ) {
      if (i > 300 || child.exitCode !== null) throw new Error(`the reference daemon did not start:\n${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return await workload(name, url);
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- the run
async function main(): Promise<void> {
  const load0 = loadavg();
  console.log(`rin-control bench: load average ${loadText(load0)} at the start (2 shared cores)`);
  const t0 = performance.now();
  const columns: Column[] = [];
  console.log('  PGlite …');
  columns.push(await ours('ours, PGlite'));
  const pgServer = await postgresUrl();
  // Only a cluster that cannot be had is a skip; a failure of our daemon on it fails the bench.
  const db = pgServer && (await freshDatabase(pgServer.url).catch((e: unknown) => (e instanceof Error ? e.message : String(e))));
  if (pgServer && typeof db === 'object') {
    try {
      console.log('  PostgreSQL …');
      columns.push(await ours('ours, PostgreSQL', db.url));
    } finally {
      await db.drop().catch((e: unknown) => console.warn(`  dropping the bench database: ${e instanceof Error ? e.message : String(e)}`));
      pgServer.stop();
    }
  } else {
    pgServer?.stop();
    const why = db === undefined ? 'no AIGENORA_TEST_PG_URL and no cluster could be started' : `no database could be created on the cluster: ${db}`;
    console.warn(`\n*** rin-control bench: PostgreSQL SKIPPED (${why}) ***\n`);
    columns.push({ name: 'ours, PostgreSQL', skipped: why });
  }
  console.log('  Go reference …');
  const go = await reference('Go reference');
  if (go.skipped) console.warn(`\n*** rin-control bench: Go reference SKIPPED: ${go.skipped} ***\n`);
  columns.push(go);
  const load1 = loadavg();
  const total = (performance.now() - t0) / 1000;

  // ---------------------------------------------------------------- the report
  const ms = (x: number) => (Number.isNaN(x) ? '–' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  type Row = [label: string, value: (c: Column) => number | undefined, format: (x: number) => string];
  const rows: Row[] = [
    ['back-to-back: submits/s (accepted)', (c) => c.burst && c.burst.ops / c.burst.seconds, fmt],
    ['back-to-back: completed ops/s (first submit → last outcome)', (c) => c.burst && c.burst.ops / c.burst.drainSeconds!, fmt],
    ['back-to-back: submit median ms', (c) => c.burst && median(c.burst.submit), ms],
    ['back-to-back: submit p95 ms', (c) => c.burst && percentile(c.burst.submit, 0.95), ms],
    ['back-to-back: submit → outcome median ms', (c) => c.burst && median(c.burst.outcome), ms],
    ['back-to-back: submit → outcome p95 ms', (c) => c.burst && percentile(c.burst.outcome, 0.95), ms],
    ['closed loop: completed ops/s', (c) => c.closed && c.closed.ops / c.closed.seconds, fmt],
    ['closed loop: submit median ms', (c) => c.closed && median(c.closed.submit), ms],
    ['closed loop: submit p95 ms', (c) => c.closed && percentile(c.closed.submit, 0.95), ms],
    ['closed loop: submit → outcome median ms', (c) => c.closed && median(c.closed.outcome), ms],
    ['closed loop: submit → outcome p95 ms', (c) => c.closed && percentile(c.closed.outcome, 0.95), ms],
    ['operations measured (back-to-back + closed)', (c) => c.burst && c.closed && c.burst.ops + c.closed.ops, String],
    ['database transactions per operation', (c) => c.db && c.burst && c.closed && c.db.transactions / (c.burst.ops + c.closed.ops), (x) => x.toFixed(1)],
    ['database statements per operation', (c) => c.db && c.burst && c.closed && c.db.statements / (c.burst.ops + c.closed.ops), (x) => x.toFixed(1)],
    ['ms inside database transactions per operation', (c) => c.db && c.burst && c.closed && c.db.ms / (c.burst.ops + c.closed.ops), ms],
  ];
  const [pglite, postgres, goRef] = columns as [Column, Column, Column];
  const cell = (c: Column, r: Row) => {
    if (c.skipped) return 'SKIPPED';
    const v = r[1](c);
    return v === undefined ? '–' : r[2](v);
  };
  const ratio = (r: Row) => {
    const a = r[1](pglite);
    const b = r[1](postgres);
    return a === undefined || b === undefined || !(a > 0) ? '–' : `${(b / a).toFixed(2)}×`;
  };
  const skips = columns.filter((c) => c.skipped).map((c) => `**${c.name}: SKIPPED** (${c.skipped}).`);
  const lines = [
    '# rin.control/v2 control plane, end to end (loopback HTTP)',
    '',
    `${new Date().toISOString()} · Node ${process.version} · load average ${loadText(load0)} at the start, ${loadText(load1)} at the end, on a shared 2-core machine · ${total.toFixed(0)} s in all`,
    '',
    'No floors: figures only (the Go reference and PostgreSQL are columns beside ours, not floors).',
    '',
    `Each daemon: the built-in harbor with ${ACTORS} boats attached through our host agent over HTTP (long poll 1 s), ${ACTORS} controllers (RinControlClient, one controller lease per boat) submitting \`${CAPABILITY.inspect}\` (immediate, read-only, low risk; the guarded policy told the harbor's vocabulary allows it), each operation waited for until it succeeded. After ${WARMUP} warm-up operations per controller: back-to-back submits (the next submit once the last is accepted; outcomes waited for in order), then a closed loop (submit, wait for the outcome, repeat); each phase at most ${SECONDS} s and ${PHASE_CAP} operations (the Go daemon keeps at most 1,024 operations). Each daemon runs in a process of its own, the host agent and the controllers in the bench's process. Ours: PGlite on disk in a temporary directory (as \`aigenora rin serve\` keeps it), PostgreSQL a throwaway local cluster (fsync off), the database opened beside serveRinControl and handed to it so that its transactions and statements are counted (over the measured operations, waits and polls included); the Go daemon keeps its own file store (written through and synced on every change).`,
    '',
    ...(skips.length > 0 ? [...skips, ''] : []),
    ...table(
      ['', pglite.name, postgres.name, 'PostgreSQL / PGlite', goRef.name],
      rows.map((r) => [r[0], cell(pglite, r), cell(postgres, r), ratio(r), cell(goRef, r)]),
      'lrrrr',
    ),
    '',
    'Host agent, per daemon:',
    '',
    ...columns.filter((c) => c.agent).map((c) => `- ${c.name}: ${c.agent}`),
  ];
  const report = `${lines.join('\n')}\n`;
  process.stdout.write(report);
  writeFileSync(new URL('results/rin-control.md', import.meta.url), report);
}

if (process.argv.includes(DAEMON_FLAG)) await daemonProcess();
else await main();
