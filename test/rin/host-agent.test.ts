/**
 * The host agent against the reference Go control daemon (.cache/rin-control, or $AIGENORA_RIN_CONTROL):
 * the harbor is attached over HTTP and a whole task is driven with plain fetch on the daemon's client
 * routes. The daemon runs the reference's default (guarded) policy profile, told the harbor's effect
 * vocabulary, so one capability is allowed, one needs confirmation and one is denied.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goJsonEncode, RawJson } from '../../ts/crypto/gojson.js';
import { RinError } from '../../ts/rin/errors.js';
import { startHostAgent, type HostAgent } from '../../ts/rin/host-agent.js';
import { SerialDispatcher } from '../../ts/rin/hostkit/authority.js';
import { AdapterCoordinator } from '../../ts/rin/hostkit/coordinator.js';
import { CAPABILITY, EFFECT_KINDS, EFFECT_SCOPES } from '../../ts/rin/world/catalog.js';
import { HarborWorld } from '../../ts/rin/world/harbor.js';

const BIN = process.env.AIGENORA_RIN_CONTROL ?? resolve('.cache/rin-control');
const PRINCIPAL = 'player.one';
const HOST = 'harbor.host';
const WORLD = 'harbor';
const token = randomBytes(24).toString('hex');

let daemon: ChildProcess | undefined;
let daemonLog = '';
let dir = '';
let baseUrl = '';
let world: HarborWorld;
let coordinator: AdapterCoordinator;
let agent: HostAgent;
const agentErrors: RinError[] = [];

async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? done(address.port) : fail(new Error('no port'))));
    });
  });
}

// The test reads the daemon's JSON answers freely.
type Loose = any;

interface Answer {
  status: number;
  body: Loose;
}

async function api(path: string, body: unknown): Promise<Answer> {
  const res = await fetch(`${baseUrl}/control/v2/${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: goJsonEncode(body),
  });
  return { status: res.status, body: await res.json() };
}

async function ok(path: string, body: unknown): Promise<Loose> {
  const answer = await api(path, body);
  if (answer.status !== 200) throw new Error(`${path}: HTTP ${answer.status} ${JSON.stringify(answer.body)}\n${daemonLog}`);
  return answer.body;
}

const target = (actor = 'gull') => ({ host_id: HOST, world_id: WORLD, actor_id: actor });

/** The published observation once the agent has caught up with the harbor's current state. */
async function published(actor = 'gull'): Promise<Loose> {
  for (let i = 0; i < 100; i++) {
    const observation = await ok('observe', target(actor));
    if (observation.sequence === world.sequence && observation.epoch.host === world.epoch.host) return observation;
    await agent.refresh();
  }
  throw new Error(`the agent never published observation ${world.sequence}`);
}

let requests = 0;
/** Added to the agent's clock: moves its renewal schedule without waiting. */
let skew = 0;
async function submit(capability: string, args: Record<string, unknown>, actor = 'gull', task?: { task_id: string; parent?: string }): Promise<Loose> {
  const observation = await published(actor);
  const catalog = await ok('capabilities', target(actor));
  const spec = catalog.specs.find((s: { capability: { id: string } }) => s.capability.id === capability);
  requests += 1;
  return api('actions/submit', {
    host_id: HOST,
    world_id: WORLD,
    action_request: {
      request_id: `request.${requests}`,
      controller_id: 'controller.test',
      actor_id: actor,
      capability: spec.capability,
      spec_digest: spec.digest,
      arguments: new RawJson(JSON.stringify(args)),
      expected_epoch: observation.epoch,
      observation_sequence: observation.sequence,
      ...(task ? { task_id: task.task_id } : {}),
      idempotency_key: `key.${requests}`,
    },
    ...(task?.parent ? { parent_operation_id: task.parent } : {}),
  });
}

/** Waits for an operation to satisfy `done`, ticking the harbor between looks when `tick` is set. */
async function settle(operationId: string, done: (op: Loose) => boolean, tick = false): Promise<Loose> {
  let cursor = '';
  for (let i = 0; i < 60; i++) {
    const update = await ok('operations/wait', { operation_id: operationId, ...(cursor ? { after_cursor: cursor } : {}), wait_millis: tick ? 0 : 1000 });
    cursor = update.operation.cursor;
    if (done(update.operation)) return update.operation;
    if (tick) {
      await coordinator.dispatcher.dispatch(() => world.tick());
      await agent.refresh();
    }
  }
  const last = await ok('operations/get', { operation_id: operationId });
  throw new Error(`operation ${operationId} stayed ${last.status}: ${JSON.stringify(last)}`);
}

beforeAll(async () => {
  if (!existsSync(BIN)) {
    throw new Error(
      `the reference Rin control daemon is missing at ${BIN}: build it with scripts/lib/rin-reference.sh (ensure_rin_reference), ` +
        'i.e. go build -o .cache/rin-control ./cmd/rin-control in ../shared/reference/rin-src, or set AIGENORA_RIN_CONTROL',
    );
  }
  dir = mkdtempSync(join(tmpdir(), 'rin-host-agent-'));
  const policy = join(dir, 'policy.json');
  // The daemon's built-in defaults (profile guarded, step confirmations for 600 steps), told the harbor's vocabulary.
  writeFileSync(
    policy,
    JSON.stringify({
      revision: 1,
      profile: 'guarded',
      known_effect_kinds: EFFECT_KINDS,
      known_scopes: EFFECT_SCOPES,
      confirmation_ttl: { event: 16, step: 600, realtime: 30000 },
      confirmation_scopes: ['rin.policy.confirm'],
    }),
  );
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  daemon = spawn(
    BIN,
    [
      '--control-addr',
      `127.0.0.1:${port}`,
      '--data',
      join(dir, 'data'),
      '--principal',
      PRINCIPAL,
      '--scopes',
      'actor.read,actor.control,actor.execute,operation.cancel,rin.policy.confirm',
      '--policy',
      policy,
    ],
    { env: { ...process.env, RIN_CONTROL_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  daemon.stdout?.on('data', (d: Buffer) => (daemonLog += d.toString()));
  daemon.stderr?.on('data', (d: Buffer) => (daemonLog += d.toString()));
  for (let i = 0; ; i++) {
    const up = await fetch(`${baseUrl}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (i > 100 || daemon.exitCode !== null) throw new Error(`the reference daemon did not start:\n${daemonLog}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // The harbor refuses any call that does not come through the coordinator's authority dispatcher.
  const dispatcher = new SerialDispatcher();
  world = new HarborWorld({ owner: PRINCIPAL, authority: dispatcher });
  coordinator = await AdapterCoordinator.create(world, dispatcher);
  agent = await startHostAgent({
    baseUrl,
    token,
    coordinator,
    hostId: HOST,
    instanceId: 'instance.one',
    leaseTtlMillis: 6000,
    pollWaitMillis: 300,
    now: () => Date.now() + skew,
    onError: (e) => agentErrors.push(e),
  });
});

afterAll(async () => {
  await agent?.stop().catch(() => undefined);
  daemon?.kill('SIGTERM');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('host agent against the reference control daemon', () => {
  it('registers and publishes the harbor: worlds, actors, observations and the sealed catalog', async () => {
    const worlds = await ok('worlds', {});
    expect(worlds).toEqual([expect.objectContaining({ host_id: HOST, world_id: WORLD, display_name: 'Harbor', online: true })]);
    const actors = await ok('actors', { host_id: HOST, world_id: WORLD });
    expect(actors.map((a: { actor_id: string }) => a.actor_id)).toEqual(['gull', 'puffin', 'tern']);
    const observation = await published('tern');
    expect(observation).toMatchObject({ host_id: HOST, world_id: WORLD, actor_id: 'tern', sequence: world.sequence });
    const catalog = await ok('capabilities', target());
    expect(catalog.specs.map((s: { digest: string }) => s.digest)).toEqual(coordinator.capabilities().specs.map((s) => s.digest));
    expect(agent.lease().lease_id).toMatch(/^lease\./);
  });

  it('runs a whole task: allowed, confirmed, denied, long-running and cancelled actions', async () => {
    const lease = await ok('controllers/acquire', { ...target(), controller_id: 'controller.test', lease_ttl_millis: 60000 });
    expect(lease).toMatchObject({ controller_id: 'controller.test', principal_id: PRINCIPAL });

    // Allowed by the guarded profile: a reversible low-risk transfer of the actor's own cargo.
    const load = await submit(CAPABILITY.load, { crates: 3 });
    expect(load.status, JSON.stringify(load.body)).toBe(200);
    expect(load.body.policy_decision.result).toBe('allow');
    const loaded = await settle(load.body.operation_id, (op) => op.terminal);
    expect(loaded).toMatchObject({ status: 'succeeded', execution_confirmed: true, output: { cargo: 3, crates_on_dock: 37 } });
    expect(world.boat('gull').cargo).toBe(3);
    expect((await published()).payload).toMatchObject({ boat: { cargo: 3 } });

    // Needs confirmation: an irreversible repair on the shared slipway. It is queued, then worked by ticks.
    const repair = await submit(CAPABILITY.repair, {});
    expect(repair.body).toMatchObject({ status: 'awaiting-confirmation', policy_decision: { result: 'require_confirmation' } });
    const confirmed = await ok('actions/confirm', { operation_id: repair.body.operation_id });
    expect(confirmed.status).toBe('queued');
    const repaired = await settle(repair.body.operation_id, (op) => op.terminal, true);
    expect(repaired).toMatchObject({ status: 'succeeded', output: { hull: 100 } });

    // Denied: sinking the boat is a critical-risk effect.
    const scuttle = await submit(CAPABILITY.scuttle, {});
    expect(scuttle.body).toMatchObject({ status: 'rejected', rejection_code: 'policy.profile_deny' });
    expect(world.boat('gull').berth).toBe('dock');

    // Long-running and cancellable: the voyage runs with ticks until the controller cancels it.
    const sail = await submit(CAPABILITY.sail, { distance: 20 });
    expect(sail.body.policy_decision.result).toBe('allow');
    const underway = await settle(sail.body.operation_id, (op) => op.status === 'running' && op.run?.progress > 0, true);
    expect(underway.run.status).toBe('running');
    expect(world.boat('gull').berth).toBe('sea');
    const cancelling = await ok('operations/cancel', { operation_id: sail.body.operation_id });
    expect(cancelling.cancel_requested).toBe(true);
    const cancelled = await settle(sail.body.operation_id, (op) => op.terminal);
    expect(cancelled).toMatchObject({ status: 'cancelled', outcome: { status: 'cancelled', code: 'harbor.cancelled' } });
    expect(world.boat('gull').berth).toBe('dock');

    // Every refusal the agent met was one the test asked for.
    expect(agentErrors.filter((e) => e.code !== 'unavailable')).toEqual([]);
    expect(agent.stats()).toMatchObject({ executed: 3, refused: 0, cancellations: 1 });
  });

  it('runs a macro shift whose task is submitted as a child operation', async () => {
    // Children share their parent's task (R84).
    const shift = await submit(CAPABILITY.shift, { steps: 3 }, 'gull', { task_id: 'task.shift' });
    expect(shift.body.policy_decision.result).toBe('allow');
    await settle(shift.body.operation_id, (op) => op.status === 'running');
    const child = await submit(CAPABILITY.load, { crates: 2 }, 'gull', { task_id: 'task.shift', parent: shift.body.operation_id });
    expect(child.status, JSON.stringify(child.body)).toBe(200);
    expect(child.body.parent_operation_id).toBe(shift.body.operation_id);
    const loaded = await settle(child.body.operation_id, (op) => op.terminal);
    expect(loaded).toMatchObject({ status: 'succeeded', output: { cargo: 5 } });
    const done = await settle(shift.body.operation_id, (op) => op.terminal, true);
    expect(done).toMatchObject({ status: 'succeeded', output: { steps: 3 }, child_operation_ids: [child.body.operation_id] });
    // A running atomic voyage cannot parent anything; the same request without a parent is fine.
    const sail = await submit(CAPABILITY.sail, { distance: 9 }, 'gull', { task_id: 'task.voyage' });
    await settle(sail.body.operation_id, (op) => op.status === 'running');
    const orphan = await submit(CAPABILITY.inspect, {}, 'gull', { task_id: 'task.voyage', parent: sail.body.operation_id });
    expect(orphan.body).toMatchObject({ code: 'conflict' });
    const alone = await submit(CAPABILITY.inspect, {}, 'gull', { task_id: 'task.voyage' });
    expect(alone.body.policy_decision.result).toBe('allow');
    await ok('operations/cancel', { operation_id: sail.body.operation_id });
    await settle(sail.body.operation_id, (op) => op.terminal);
  });

  it('renews its lease once a third of its lifetime has passed on its clock', async () => {
    const before = agent.lease();
    skew += 2100;
    for (let i = 0; i < 50 && agent.lease().expires_at_unix_millis === before.expires_at_unix_millis; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(agent.lease().lease_id).toBe(before.lease_id);
    expect(agent.lease().expires_at_unix_millis).toBeGreaterThan(before.expires_at_unix_millis);
  });

  it('answers a bind the harbor refuses with a gateway error, and the daemon refuses the submission', async () => {
    const answer = await submit(CAPABILITY.load, { crates: 20 });
    expect(answer.status).toBe(409);
    expect(answer.body).toMatchObject({ code: 'conflict' });
    expect(answer.body.error).toMatch(/holds at most 12 crates/);
  });

  it('refuses a second instance of the same host, and a wrong token, with typed errors', async () => {
    const other = startHostAgent({ baseUrl, token, coordinator, world, hostId: HOST, instanceId: 'instance.two' });
    await expect(other).rejects.toMatchObject({ code: 'lease_conflict' });
    await expect(
      startHostAgent({ baseUrl, token: 'x'.repeat(40), coordinator, world, hostId: 'other.host', instanceId: 'instance.one' }),
    ).rejects.toBeInstanceOf(RinError);
  });

  it('retries an unreachable control plane with backoff, then gives up with unavailable', async () => {
    const port = await freePort();
    const waits: number[] = [];
    const attempt = startHostAgent({
      baseUrl: `http://127.0.0.1:${port}`,
      token,
      coordinator,
      world,
      hostId: HOST,
      instanceId: 'instance.three',
      startAttempts: 4,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    await expect(attempt).rejects.toMatchObject({ code: 'unavailable' });
    expect(waits).toEqual([100, 200, 400]);
  });

  it('unregisters on stop: the world stays listed, offline', async () => {
    await agent.stop();
    const worlds = await ok('worlds', {});
    expect(worlds).toEqual([expect.objectContaining({ world_id: WORLD, online: false })]);
  });
});
