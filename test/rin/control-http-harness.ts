/**
 * Test harness for the rin.control/v2 core: the app on an in-process fetch (no socket), a virtual
 * clock whose timers fire only when a test advances it, deterministic ids, and a stand-in for the
 * operations half that records the hooks the core calls.
 *
 * `describeControlDbs(name, fn)` runs a suite on PGlite in a temporary directory and, when
 * AIGENORA_TEST_PG_URL is set, on a fresh PostgreSQL database (without it the file fails, unless
 * AIGENORA_SKIP_CORPORA=1 asks to skip that variant, by name: describeEachDb in test/server/harness.ts).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControlClock, ControlOps, OpsFactory } from '../../ts/rin/control/contracts.js';
import { createRinControl, type RinControl, type RinControlOptions } from '../../ts/rin/control/service.js';
import { RinError } from '../../ts/rin/errors.js';
import type { HostControlBatch, HostManifest, HostRegistration, Principal } from '../../ts/rin/types.js';
import { silentLog } from '../../ts/server/log.js';
import { describeEachDbWith, freshPgDatabase, PG_URL, type DbKind } from '../server/harness.js';

export const TOKEN = '0123456789abcdef0123456789abcdef';
export const SHARED = join(import.meta.dirname, '../../../shared');

/** Virtual time: `sleep` resolves only when `advance` passes its deadline. */
export class VirtualTimers implements ControlClock {
  private sleepers: Array<{ at: number; resolve: () => void }> = [];
  constructor(public ms = Date.UTC(2026, 0, 1)) {}
  now = (): number => this.ms;
  sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
    new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const entry = { at: this.ms + ms, resolve };
      this.sleepers.push(entry);
      signal?.addEventListener('abort', () => {
        this.sleepers = this.sleepers.filter((s) => s !== entry);
        resolve();
      });
    });
  /** Moves time on and fires the timers that are due; lets the woken code run. */
  async advance(ms: number): Promise<void> {
    this.ms += ms;
    const due = this.sleepers.filter((s) => s.at <= this.ms);
    this.sleepers = this.sleepers.filter((s) => s.at > this.ms);
    for (const s of due) s.resolve();
    await new Promise((r) => setTimeout(r, 0));
  }
  get pending(): number {
    return this.sleepers.length;
  }
  /**
   * Resolves once more than `n` sleeps are pending: a wait has reached the clock, so what the test does
   * next happens while it waits. The 10 s limit only keeps a broken test from hanging.
   */
  async pendingAbove(n: number, what: string): Promise<void> {
    const end = Date.now() + 10_000;
    while (this.sleepers.length <= n) {
      if (Date.now() > end) throw new Error(`never waiting on the clock: ${what}`);
      await new Promise((r) => setImmediate(r));
    }
  }
}

/** Lets the work already queued run to its end: promise jobs and callbacks, over many event-loop turns. */
export async function flush(turns = 50): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
}

export type HookCall = [name: string, ...args: unknown[]];

/** The operations half stood in: hooks are recorded; its routes answer with their own name. */
export function fakeOps(calls: HookCall[]): OpsFactory {
  const route =
    (name: string) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args.slice(0, 1)]);
      return { route: name };
    };
  const ops: ControlOps = {
    onHostExpired: (hostId, now) => void calls.push(['onHostExpired', hostId, now]),
    onHostUnregistered: (hostId, now) => void calls.push(['onHostUnregistered', hostId, now]),
    onWorldPublished: (hostId, publication, now) => void calls.push(['onWorldPublished', hostId, publication.world_id, publication.sequence, now]),
    onControllerLeaseInvalidated: (lease, now) => void calls.push(['onControllerLeaseInvalidated', lease.lease_id, now]),
    onEmergencyStop: (hostId, worldId, actorId, now) => void calls.push(['onEmergencyStop', hostId, worldId, actorId, now]),
    flush: async () => {},
    close: async () => {},
    poll: async (input): Promise<HostControlBatch> => {
      calls.push(['poll', input.hostId, input.leaseId, input.limit, input.waitMillis]);
      return { gateway_requests: [], requests: [], cancellations: [] };
    },
    ack: async () => void calls.push(['ack']),
    run: async () => void calls.push(['run']),
    outcome: async () => void calls.push(['outcome']),
    gatewayResult: async () => void calls.push(['gatewayResult']),
    submit: route('submit'),
    confirm: route('confirm'),
    get: route('get'),
    wait: route('wait'),
    cancel: route('cancel'),
    timelineGet: async () => {
      throw new RinError('conflict', 'timeline says no');
    },
    timelineWait: route('timelineWait'),
  };
  return async () => ops;
}

/** Ids from a counter: `lease.000…01`, … */
export function counterRandom(): (n: number) => Uint8Array {
  let next = 0;
  return (n) => {
    const out = new Uint8Array(n);
    let v = ++next;
    for (let i = n - 1; i >= 0 && v > 0; i--, v = Math.floor(v / 256)) out[i] = v % 256;
    return out;
  };
}

export const ALL_SCOPES: Principal = { id: 'player.one', granted_scopes: ['actor.read', 'actor.control', 'actor.execute', 'operation.cancel'] };

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: Record<string, unknown> & unknown[];
}

export interface CallOptions {
  method?: string;
  token?: string | null;
  contentType?: string | null;
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface ControlHarness {
  control: RinControl;
  clock: VirtualTimers;
  calls: HookCall[];
  call(path: string, body?: unknown, o?: CallOptions): Promise<Reply>;
}

export function harnessFor(control: RinControl, clock: VirtualTimers, calls: HookCall[]): ControlHarness {
  return {
    control,
    clock,
    calls,
    call: async (path, body, o = {}) => {
      const method = o.method ?? (body === undefined && o.raw === undefined ? 'GET' : 'POST');
      const headers: Record<string, string> = { ...o.headers };
      const token = o.token === undefined ? TOKEN : o.token;
      if (token !== null) headers['Authorization'] = `Bearer ${token}`;
      const contentType = o.contentType === undefined ? 'application/json' : o.contentType;
      if (contentType !== null && method === 'POST') headers['Content-Type'] = contentType;
      const payload = o.raw ?? (body === undefined ? undefined : JSON.stringify(body));
      const res = await control.app.request(`http://127.0.0.1:7375${path}`, {
        method,
        headers,
        body: payload as BodyInit | undefined,
        signal: o.signal,
      });
      const text = await res.text();
      let parsed: unknown = {};
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = {};
      }
      return { status: res.status, headers: res.headers, text, body: parsed as Reply['body'] };
    },
  };
}

export type { DbKind };

/** Where a server's data lives; `reopen` starts another server on the same data (restart). */
export interface DataPlace {
  options: Pick<RinControlOptions, 'dataDir' | 'dbUrl'>;
  drop(): Promise<void>;
}

export async function dataPlace(kind: DbKind): Promise<DataPlace> {
  if (kind === 'postgres') {
    if (PG_URL === undefined) throw new Error('AIGENORA_TEST_PG_URL is not set');
    const fresh = await freshPgDatabase(PG_URL);
    return { options: { dbUrl: fresh.url }, drop: fresh.drop };
  }
  const dir = mkdtempSync(join(tmpdir(), 'aigenora-rin-control-'));
  return { options: { dataDir: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

export async function openControl(
  place: DataPlace,
  o: { clock?: VirtualTimers; principal?: Principal | null; calls?: HookCall[]; extra?: Partial<RinControlOptions> } = {},
): Promise<ControlHarness> {
  const clock = o.clock ?? new VirtualTimers();
  const calls = o.calls ?? [];
  const control = await createRinControl({
    token: TOKEN,
    principal: o.principal === null ? undefined : (o.principal ?? ALL_SCOPES),
    clock,
    ops: fakeOps(calls),
    random: counterRandom(),
    log: silentLog,
    ...place.options,
    ...o.extra,
  });
  return harnessFor(control, clock, calls);
}

/** One server per database kind for the suite; `h()` inside a test returns it. */
export function describeControlDbs(name: string, fn: (h: () => ControlHarness, kind: DbKind) => void, o: Parameters<typeof openControl>[1] = {}): void {
  describeEachDbWith(
    name,
    async (kind) => {
      const place = await dataPlace(kind);
      try {
        return { place, harness: await openControl(place, o) };
      } catch (e) {
        await place.drop();
        throw e;
      }
    },
    async ({ place, harness }) => {
      await harness.control.close();
      await place.drop();
    },
    (get, kind) => fn(() => get().harness, kind),
  );
}

// ---- fixtures (the shapes of the reference's own tests) ----

export function manifest(over: Partial<HostManifest> = {}): HostManifest {
  return {
    contract_version: 'rin.host/v2',
    adapter_id: 'test.adapter',
    adapter_version: '1.0.0',
    engine_id: 'test.engine',
    engine_version: '1',
    runtime: 'go',
    platform: 'test',
    headless: true,
    authority: 'server',
    deployment: 'loopback-sidecar',
    control: 'semantic',
    clock_modes: ['step'],
    decision_modes: ['asynchronous'],
    max_concurrent_actors: 4,
    durability: {
      profile: 'advisory',
      stable_identity: true,
      durable_before_network: false,
      durable_outbox: false,
      idempotent_apply: false,
      atomic_apply_and_outbox: false,
    },
    ...over,
  };
}

export function registration(hostId: string, instanceId = 'instance.one', over: Partial<HostRegistration> = {}): HostRegistration {
  return { contract_version: 'rin.control/v2', host_id: hostId, instance_id: instanceId, manifest: manifest(), lease_ttl_millis: 5_000, ...over };
}

export const epoch = (worldId = 'world.one', host = 1) => ({ session_id: 'session.one', world_id: worldId, host, world: 1, timeline: 1 });

/** Plain JSON (the request body), so raw members are written as values. */
export function actor(actorId: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    actor_id: actorId,
    owner_principal_id: 'player.one',
    display_name: 'Companion',
    observation_seq: 1,
    epoch: epoch(),
    decision_authority: { source: 'external', controller_principal_id: 'player.one', revision: 1, persona_mode: 'character-bound' },
    state: { status: 'ready' },
    ...over,
  };
}

export function publication(
  sequence: number,
  actors: Array<Record<string, unknown>> = [actor('actor.one')],
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  return { world_id: 'world.one', display_name: 'Test World', sequence, actors, ...over };
}

export function observation(hostId: string, actorId: string, sequence = 1): Record<string, unknown> {
  return {
    observation_id: `observation.${sequence}`,
    host_id: hostId,
    world_id: 'world.one',
    actor_id: actorId,
    epoch: epoch(),
    sequence,
    observed_at: { clock: 'step', value: 10 },
    schema_ref: { id: 'test.observation', version: '1.0.0', sha256: 'a'.repeat(64) },
    payload: { position: { x: 1, y: 2 } },
  };
}

/** The reference's own sealed fixture capability (capdigest-01 of the public vectors), as wire JSON. */
export function fixtureCapability(): Record<string, unknown> {
  const file = JSON.parse(readFileSync(join(SHARED, 'conformance/rin-reference/capability-digest.json'), 'utf8')) as {
    cases: Array<{ id: string; spec_json: string; expect: { digest: string } }>;
  };
  const c = file.cases.find((x) => x.id === 'capdigest-01');
  if (c === undefined) throw new Error('capdigest-01 is missing from the public vectors');
  return { ...(JSON.parse(c.spec_json) as Record<string, unknown>), digest: c.expect.digest };
}
