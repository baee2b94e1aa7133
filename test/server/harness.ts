/**
 * Test harness for the registry server: the app on an in-process fetch (no socket), a virtual clock,
 * signed requests as the reference client sends them, and registration with a real proof of work.
 *
 * `describeDbs(name, fn)` runs a suite twice: on PGlite in a temporary directory, and on PostgreSQL in
 * a fresh database when AIGENORA_TEST_PG_URL is set (scripts/lib/postgres.sh starts a cluster). Without
 * it the file fails, naming the variable, unless AIGENORA_SKIP_CORPORA=1 asks to skip (needPg): then the
 * PostgreSQL variant is a skipped suite whose name says why, so the run reports it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe } from 'vitest';
import type { Crypto } from '../../ts/crypto/backend.js';
import { toHex } from '../../ts/crypto/encoding.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { registrationBody, restHeaders, signRegistration } from '../../ts/registry/auth.js';
import { createServer, type RegistryServer, type ServerOptions } from '../../ts/server/app.js';
import type { ServerConfig } from '../../ts/server/context.js';
import { silentLog } from '../../ts/server/log.js';
import { need } from '../shared/require.js';

export const PG_URL = process.env['AIGENORA_TEST_PG_URL'];

let pgAnswer: boolean | undefined;
/**
 * Whether the PostgreSQL variants run: AIGENORA_TEST_PG_URL is set. Without it this throws (failing the
 * file), unless AIGENORA_SKIP_CORPORA=1 asks to skip, when it warns once per file and answers false.
 */
export function needPg(): boolean {
  pgAnswer ??= need('AIGENORA_TEST_PG_URL (a PostgreSQL cluster for the [postgres] suites)', PG_URL !== undefined, {
    how: 'scripts/test.sh starts one (scripts/lib/postgres.sh: source it, then start_test_postgres; or run it by hand for the URL)',
  });
  return pgAnswer;
}
/** The suffix of a PostgreSQL test's name when it is skipped. */
export const PG_SKIPPED = ' — SKIPPED: AIGENORA_TEST_PG_URL is not set (scripts/lib/postgres.sh starts a cluster)';

export type DbKind = 'pglite' | 'postgres';

/** A fresh, empty PostgreSQL database on the test cluster; `drop` removes it. */
export async function freshPgDatabase(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `aig_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(baseUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: baseUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export class VirtualClock {
  constructor(public ms = Date.UTC(2026, 0, 1)) {}
  now = (): number => this.ms;
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

export interface SendOptions {
  body?: unknown;
  /** Exact body bytes (overrides `body`). */
  raw?: Uint8Array | string;
  timestamp?: number;
  requestId?: string;
  /** Replace or drop (undefined) signed headers after signing. */
  headers?: Record<string, string | undefined>;
  /** Sign as this seed but send another path, etc. */
  signedPath?: string;
}

export class Agent {
  readonly publicKey: string;
  constructor(
    readonly t: TestServer,
    readonly seed: Uint8Array,
  ) {
    this.publicKey = toHex(t.crypto.ed25519PublicKey(seed));
  }

  /** A signed request exactly as the reference's RestClient builds it. */
  async send(method: string, path: string, o: SendOptions = {}): Promise<Response> {
    const raw = o.raw ?? (o.body === undefined ? '' : JSON.stringify(o.body));
    const body = typeof raw === 'string' ? new TextEncoder().encode(raw) : raw;
    const headers: Record<string, string> = restHeaders(this.t.crypto, this.seed, {
      timestamp: o.timestamp ?? Math.floor(this.t.clock.now() / 1000),
      method,
      path: o.signedPath ?? path,
      requestId: o.requestId ?? randomBytes(16).toString('hex'),
      body,
    });
    for (const [k, v] of Object.entries(o.headers ?? {})) {
      if (v === undefined) delete headers[k];
      else headers[k] = v;
    }
    return this.t.fetch(path, { method, headers, body: body.length > 0 ? (body as Uint8Array<ArrayBuffer>) : undefined });
  }

  async json(method: string, path: string, o: SendOptions = {}): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await this.send(method, path, o);
    const text = await res.text();
    return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
  }

  /** Challenge, proof of work, registration. */
  async register(nickname = 'agent'): Promise<void> {
    const ch = await this.json('GET', '/api/v1/auth/challenge');
    const nonce = ch.body['nonce'] as string;
    const difficulty = ch.body['difficulty'] as number;
    const counter = this.t.crypto.powSolve(nonce, this.publicKey, difficulty);
    const res = await this.json('POST', '/api/v1/auth/register', {
      raw: registrationBody(signRegistration(this.t.crypto, this.seed, nonce, nickname, counter)),
    });
    if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
}

export interface TestServer {
  kind: DbKind;
  server: RegistryServer;
  crypto: Crypto;
  clock: VirtualClock;
  fetch(path: string, init?: RequestInit): Promise<Response>;
  agent(seed?: Uint8Array): Agent;
  /** A new agent that is already registered. */
  registered(nickname?: string): Promise<Agent>;
}

export const TEST_CONFIG: Partial<ServerConfig> = { powDifficulty: 1 };

/**
 * Opens a server for `kind` on a fresh database; `close` stops it and removes the database. Starting
 * PGlite costs seconds on a loaded machine, so suites share one server and keep tests apart by using
 * fresh keys (and, for browse, fresh protocol ids).
 */
export async function openTestServer(kind: DbKind, opts: Partial<ServerOptions> = {}): Promise<{ t: TestServer; close(): Promise<void> }> {
  const cleanups: (() => Promise<void>)[] = [];
  const clock = new VirtualClock();
  let dbOpts: Partial<ServerOptions>;
  if (kind === 'postgres') {
    if (PG_URL === undefined) throw new Error('AIGENORA_TEST_PG_URL is not set');
    const fresh = await freshPgDatabase(PG_URL);
    cleanups.push(fresh.drop);
    dbOpts = { dbUrl: fresh.url };
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'aigenora-server-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    dbOpts = { dataDir: dir };
  }
  const crypto = getCrypto();
  const server = await createServer({ log: silentLog, now: clock.now, crypto, ...dbOpts, ...opts, config: { ...TEST_CONFIG, ...opts.config } });
  cleanups.push(server.close);
  const t: TestServer = {
    kind,
    server,
    crypto,
    clock,
    fetch: async (path, init) => server.app.request(`http://registry.test${path}`, init),
    agent: (seed = randomBytes(32)) => new Agent(t, seed),
    registered: async (nickname = 'agent') => {
      const a = t.agent();
      await a.register(nickname);
      return a;
    },
  };
  return {
    t,
    close: async () => {
      for (const c of cleanups.reverse()) await c();
    },
  };
}

/**
 * Registers a suite once per database kind. Without AIGENORA_TEST_PG_URL the file fails (needPg), unless
 * AIGENORA_SKIP_CORPORA=1: then the PostgreSQL one is registered skipped, with the reason in its name, so
 * the totals say what did not run.
 */
export function describeEachDb(name: string, fn: (kind: DbKind) => void): void {
  for (const kind of ['pglite', 'postgres'] as const) {
    if (kind === 'postgres' && !needPg()) {
      describe.skip(`${name} [postgres]${PG_SKIPPED}`, () => fn(kind));
      continue;
    }
    describe(`${name} [${kind}]`, () => fn(kind));
  }
}

/**
 * describeEachDb with one value per kind opened before the suite's first test and closed after its
 * last; `get()` inside a test returns it.
 */
export function describeEachDbWith<T>(
  name: string,
  open: (kind: DbKind) => Promise<T>,
  close: (value: T) => Promise<void>,
  fn: (get: () => T, kind: DbKind) => void,
): void {
  describeEachDb(name, (kind) => {
    let value: T | undefined;
    beforeAll(async () => {
      value = await open(kind);
    });
    afterAll(async () => {
      if (value !== undefined) await close(value);
    });
    fn(() => {
      if (value === undefined) throw new Error(`${name} [${kind}]: not open`);
      return value;
    }, kind);
  });
}

/**
 * Registers a suite once per database, sharing one server (opened before its first test, closed
 * after its last). `server()` inside a test returns it.
 */
export function describeDbs(name: string, fn: (server: () => TestServer, kind: DbKind) => void, opts: Partial<ServerOptions> = {}): void {
  describeEachDbWith(
    name,
    (kind) => openTestServer(kind, opts),
    (opened) => opened.close(),
    (get, kind) => fn(() => get().t, kind),
  );
}
