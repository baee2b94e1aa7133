/**
 * The host agent's side of the protocol against a scripted control plane (a fake fetch): what the Go
 * daemon never does on its own — redelivering a gateway request or a delivery, losing an
 * acknowledgement on the network, expiring the lease — and what the agent must then do exactly once.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { goJsonEncode } from '../../ts/crypto/gojson.js';
import { RinError } from '../../ts/rin/errors.js';
import { startHostAgent, type HostAgent } from '../../ts/rin/host-agent.js';
import type { HostAdapter, HostWorldSource } from '../../ts/rin/hostkit/adapter.js';
import { SerialDispatcher } from '../../ts/rin/hostkit/authority.js';
import { allowedDelivery } from '../../ts/rin/hostkit/conformance.js';
import { AdapterCoordinator } from '../../ts/rin/hostkit/coordinator.js';
import type { HostControlBatch, HostControlDelivery, HostGatewayDelivery } from '../../ts/rin/types.js';
import { CAPABILITY } from '../../ts/rin/world/catalog.js';
import { harborRequest } from '../../ts/rin/world/conformance.js';
import { HarborWorld } from '../../ts/rin/world/harbor.js';

const HOST = 'harbor.host';
const TARGET = { host_id: HOST, world_id: 'harbor', actor_id: 'gull' };
const PRINCIPAL = { id: 'player.one', granted_scopes: ['actor.execute'] };
const TOKEN = 't'.repeat(40);

interface Call {
  path: string;
  text: string;
  body: Record<string, unknown>;
}

/** A control plane that answers from a script: batches to hand out, failures to inject. */
class ScriptedControl {
  readonly calls: Call[] = [];
  readonly batches: HostControlBatch[] = [];
  /** Path → how many of its next calls fail as if the network dropped them. */
  readonly dropNext = new Map<string, number>();
  /** Path → an error answer for its next call. */
  readonly refuseNext = new Map<string, { status: number; body: unknown }>();
  private leases = 0;

  fetch = async (url: string, init: RequestInit): Promise<Response> => {
    const path = new URL(url).pathname.replace('/control/v2/', '');
    const text = String(init.body ?? '');
    this.calls.push({ path, text, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
    const drops = this.dropNext.get(path) ?? 0;
    if (drops > 0) {
      this.dropNext.set(path, drops - 1);
      throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } });
    }
    const refusal = this.refuseNext.get(path);
    if (refusal) {
      this.refuseNext.delete(path);
      return json(refusal.status, refusal.body);
    }
    switch (path) {
      case 'host/register':
      case 'host/renew':
        if (path === 'host/register') this.leases += 1;
        return json(200, { host_id: HOST, instance_id: 'instance.one', lease_id: `lease.${this.leases}`, expires_at_unix_millis: Date.now() + 30000 });
      case 'host/poll': {
        const next = this.batches.shift();
        if (next) return json(200, next);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 20);
          init.signal?.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve();
          });
        });
        if (init.signal?.aborted) throw new DOMException('aborted', 'AbortError');
        return json(200, { gateway_requests: [], requests: [], cancellations: [] });
      }
      default:
        return json(200, { status: 'recorded' });
    }
  };

  of(path: string): Call[] {
    return this.calls.filter((c) => c.path === path);
  }
}

function json(status: number, body: unknown): Response {
  return new Response(`${goJsonEncode(body)}\n`, { status, headers: { 'content-type': 'application/json' } });
}

const batch = (part: Partial<HostControlBatch>): HostControlBatch => ({ gateway_requests: [], requests: [], cancellations: [], ...part });

let agent: HostAgent | undefined;
afterEach(async () => {
  await agent?.stop().catch(() => undefined);
  agent = undefined;
});

async function setup(bindFailure?: () => never, source?: (world: HarborWorld) => HostWorldSource) {
  const dispatcher = new SerialDispatcher();
  const world = new HarborWorld({ owner: 'player.one', authority: dispatcher });
  const counts: Record<string, number> = {};
  const counted = (name: keyof HostAdapter) => {
    const original = world[name].bind(world) as (...args: unknown[]) => unknown;
    return (...args: unknown[]) => {
      counts[name] = (counts[name] ?? 0) + 1;
      return original(...args);
    };
  };
  const adapter: HostAdapter = {
    manifest: () => world.manifest(),
    listCapabilities: () => world.listCapabilities(),
    policyFacts: () => world.policyFacts(),
    snapshot: (t) => world.snapshot(t),
    observe: (q) => world.observe(q),
    preview: (t, r, b) => world.preview(t, r, b),
    verify: (op) => world.verify(op),
    bind: bindFailure ?? (counted('bind') as HostAdapter['bind']),
    execute: counted('execute') as HostAdapter['execute'],
    cancel: counted('cancel') as HostAdapter['cancel'],
  };
  const coordinator = await AdapterCoordinator.create(adapter, dispatcher);
  const control = new ScriptedControl();
  const errors: string[] = [];
  agent = await startHostAgent({
    baseUrl: 'http://127.0.0.1:7399',
    token: TOKEN,
    coordinator,
    world: source === undefined ? world : source(world),
    hostId: HOST,
    instanceId: 'instance.one',
    pollWaitMillis: 50,
    fetch: control.fetch,
    sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 20))),
    onError: (e) => errors.push(`${e.code}: ${e.message}`),
  });
  let n = 0;
  const request = async (capability: string, args: Record<string, unknown>) => {
    n += 1;
    const snapshot = await coordinator.snapshotAction(TARGET);
    return harborRequest(coordinator.capabilities(), capability, args, snapshot, `request.${n}`, `key.${n}`);
  };
  const delivery = async (capability: string, args: Record<string, unknown>, operationId: string): Promise<HostControlDelivery> => {
    const req = await request(capability, args);
    const { bound_action, snapshot } = await coordinator.bindRequest(TARGET, req);
    return allowedDelivery(TARGET, PRINCIPAL, req, bound_action, snapshot, operationId);
  };
  /** Waits (bounded) until the scripted control plane has seen what `ready` looks for. */
  const until = async (ready: () => boolean, what: string) => {
    for (let i = 0; i < 200 && !ready(); i++) await new Promise((r) => setTimeout(r, 10));
    if (!ready()) throw new Error(`never happened: ${what}; calls: ${control.calls.map((c) => c.path).join(' ')}; errors: ${errors.join(' | ')}`);
  };
  return { world, coordinator, control, counts, errors, request, delivery, until };
}

describe('host agent protocol', () => {
  it('registers, then publishes every actor with its observation and the sealed catalog', async () => {
    const { control, coordinator } = await setup();
    expect(control.calls.slice(0, 2).map((c) => c.path)).toEqual(['host/register', 'host/publish']);
    const registration = control.of('host/register')[0]?.body;
    expect(registration).toMatchObject({ contract_version: 'rin.control/v2', host_id: HOST, instance_id: 'instance.one', lease_ttl_millis: 30000 });
    const publication = control.of('host/publish')[0]?.body.publication as Record<string, any>;
    expect(publication.world_id).toBe('harbor');
    expect(publication.actors.map((a: { actor_id: string }) => a.actor_id)).toEqual(['gull', 'tern', 'puffin']);
    const gull = publication.actors[0];
    expect(gull).toMatchObject({
      observation_seq: 1,
      decision_authority: { source: 'external', controller_principal_id: 'player.one' },
      state: { berth: 'dock', cargo: 0, hull: 100 },
    });
    expect(gull.observation).toMatchObject({ actor_id: 'gull', sequence: 1 });
    expect(gull.capabilities.specs.map((s: { digest: string }) => s.digest)).toEqual(coordinator.capabilities().specs.map((s) => s.digest));
  });

  it('answers a redelivered gateway request with the same result, binding only once', async () => {
    const { control, counts, request, until } = await setup();
    const req = await request(CAPABILITY.load, { crates: 2 });
    const gateway = (attempt: number): HostGatewayDelivery => ({
      request: { gateway_request_id: 'gateway.one', kind: 'bind', target: TARGET, action_request: req, submitted_at_unix_millis: 5 },
      delivery_attempt: attempt,
    });
    control.batches.push(
      batch({ gateway_requests: [gateway(1)] }),
      batch({
        gateway_requests: [
          gateway(2),
          { request: { gateway_request_id: 'gateway.two', kind: 'snapshot', target: TARGET, submitted_at_unix_millis: 6 }, delivery_attempt: 1 },
        ],
      }),
    );
    await until(() => control.of('host/gateway-result').length === 3, 'three gateway results');
    const [first, second, snapshot] = control.of('host/gateway-result');
    expect(second?.text).toBe(first?.text);
    expect(counts.bind).toBe(1);
    expect(first?.body.result).toMatchObject({
      gateway_request_id: 'gateway.one',
      binding: { bound_action: { request_id: req.request_id }, snapshot: { observation_sequence: 1 } },
    });
    expect(snapshot?.body.result).toMatchObject({ gateway_request_id: 'gateway.two', snapshot: { epoch: { world_id: 'harbor' } } });
  });

  it('answers a bind the harbor refuses with an error code the control plane accepts', async () => {
    const { control, request, until } = await setup();
    const stale = {
      ...(await request(CAPABILITY.load, { crates: 2 })),
      observation_sequence: 1,
      expected_epoch: { session_id: 'harbor.session', world_id: 'harbor', host: 7, world: 1, timeline: 1 },
    };
    const tooMany = await request(CAPABILITY.load, { crates: 13 });
    control.batches.push(
      batch({
        gateway_requests: [
          {
            request: { gateway_request_id: 'gateway.stale', kind: 'bind', target: TARGET, action_request: stale, submitted_at_unix_millis: 1 },
            delivery_attempt: 1,
          },
          {
            request: { gateway_request_id: 'gateway.full', kind: 'bind', target: TARGET, action_request: tooMany, submitted_at_unix_millis: 2 },
            delivery_attempt: 1,
          },
        ],
      }),
    );
    await until(() => control.of('host/gateway-result').length === 2, 'two gateway results');
    const [stalled, full] = control.of('host/gateway-result').map((c) => c.body.result);
    expect(stalled).toMatchObject({ gateway_request_id: 'gateway.stale', error_code: 'stale' });
    expect(full).toMatchObject({ gateway_request_id: 'gateway.full', error_code: 'conflict', error_message: expect.stringMatching(/holds at most 12/) });
  });

  it('sends a long or malformed refusal message as at most 500 bytes of well-formed text', async () => {
    const { control, request, until } = await setup(() => {
      throw new RinError('conflict', `\ud800 line\nbreak ${'é'.repeat(400)}`);
    });
    const req = await request(CAPABILITY.load, { crates: 1 });
    control.batches.push(
      batch({
        gateway_requests: [
          {
            request: { gateway_request_id: 'gateway.long', kind: 'bind', target: TARGET, action_request: req, submitted_at_unix_millis: 1 },
            delivery_attempt: 1,
          },
        ],
      }),
    );
    await until(() => control.of('host/gateway-result').length === 1, 'the gateway refusal');
    const result = control.of('host/gateway-result')[0]?.body.result as { error_code: string; error_message: string };
    expect(result.error_code).toBe('conflict');
    expect(Buffer.byteLength(result.error_message, 'utf8')).toBeLessThanOrEqual(500);
    expect(result.error_message.startsWith('\ufffd line break é')).toBe(true);
  });

  it('executes a delivery once when its acknowledgement is lost and it comes again', async () => {
    const { control, counts, world, delivery, until } = await setup();
    const d = await delivery(CAPABILITY.load, { crates: 4 }, 'operation.one');
    control.dropNext.set('host/ack', 1);
    control.batches.push(batch({ requests: [d] }), batch({ requests: [{ ...d, delivery_attempt: 2 }] }));
    await until(() => control.of('host/outcome').length === 1, 'the outcome');
    expect(counts.execute).toBe(1);
    expect(world.boat('gull').cargo).toBe(4);
    const acks = control.of('host/ack');
    expect(acks.length).toBe(2);
    expect(acks[1]?.text).toBe(acks[0]?.text);
    expect(acks[0]?.body.acknowledgement).toEqual({ operation_id: 'operation.one', accepted: true });
    expect(control.of('host/run').map((c) => (c.body.run as { status: string }).status)).toEqual(['succeeded']);
    expect(control.of('host/outcome')[0]?.body).toMatchObject({
      outcome: { operation_id: 'operation.one', status: 'succeeded' },
      output: { cargo: 4, crates_on_dock: 36 },
    });
    // The new state is published with a higher sequence, before the outcome: a controller that waited for
    // the operation to finish reads the world it left, and its next request is not refused as stale.
    await until(() => control.of('host/publish').length >= 2, 'a second publication');
    const [before, after] = control.of('host/publish').map((c) => (c.body.publication as { sequence: number }).sequence);
    expect(after).toBe((before ?? 0) + 1);
    const order = control.calls.map((c) => c.path).filter((p) => p === 'host/publish' || p === 'host/run' || p === 'host/outcome');
    expect(order).toEqual(['host/publish', 'host/publish', 'host/run', 'host/outcome']);
  });

  it('refuses a delivery whose binding went stale before execution, without touching the game', async () => {
    const { control, counts, world, coordinator, delivery, until } = await setup();
    const d = await delivery(CAPABILITY.load, { crates: 4 }, 'operation.stale');
    await coordinator.dispatcher.dispatch(() => world.squall());
    control.batches.push(batch({ requests: [d] }));
    await until(() => control.of('host/ack').length === 1, 'the refusal');
    expect(control.of('host/ack')[0]?.body.acknowledgement).toMatchObject({ operation_id: 'operation.stale', accepted: false, code: 'stale' });
    expect(world.boat('gull').cargo).toBe(0);
    expect(control.of('host/run')).toEqual([]);
    expect(counts.execute).toBe(1);
  });

  it('passes a cancellation to the game, and refuses one for an operation it never ran', async () => {
    const { control, world, delivery, until } = await setup();
    const d = await delivery(CAPABILITY.sail, { distance: 9 }, 'operation.sail');
    control.batches.push(batch({ requests: [d] }));
    await until(() => control.of('host/run').length === 1, 'the running report');
    expect(world.boat('gull').berth).toBe('sea');
    control.batches.push(batch({ cancellations: ['operation.sail', 'operation.unknown'] }), batch({ cancellations: ['operation.sail'] }));
    await until(() => control.of('host/outcome').length === 1, 'the cancelled outcome');
    expect(control.of('host/outcome')[0]?.body.outcome).toMatchObject({ status: 'cancelled', code: 'harbor.cancelled' });
    expect(control.of('host/ack').map((c) => c.body.acknowledgement)).toContainEqual({
      operation_id: 'operation.unknown',
      accepted: false,
      code: 'cancelled',
      message: 'cancelled before execution',
    });
    expect(world.boat('gull').berth).toBe('dock');
  });

  it('registers again and republishes when the control plane says the lease expired', async () => {
    const { control, until } = await setup();
    control.refuseNext.set('host/poll', { status: 410, body: { error: 'host lease expired', code: 'lease_expired' } });
    await until(() => control.of('host/register').length === 2, 'a second registration');
    await until(() => control.of('host/publish').length === 2, 'a republication');
    const lastPoll = async () => {
      await until(() => control.of('host/poll').some((c) => c.body.lease_id === 'lease.2'), 'a poll on the new lease');
    };
    await lastPoll();
  });

  it('rebuilds its publications after a poll only when the world says it changed', async () => {
    const { world, coordinator, control } = await setup();
    const describe = vi.spyOn(world, 'describe');
    for (let i = 0; i < 3; i++) await agent!.refresh();
    expect(describe).not.toHaveBeenCalled();
    expect(control.of('host/publish')).toHaveLength(1);
    // A step moves the observation's time without a new sequence: it is published all the same.
    await coordinator.dispatcher.dispatch(() => world.tick());
    await agent!.refresh();
    expect(describe).toHaveBeenCalledTimes(1);
    const publications = control.of('host/publish');
    expect(publications).toHaveLength(2);
    const observedAt = (c: Call) =>
      (c.body.publication as { actors: Array<{ observation: { observed_at: { value: number } } }> }).actors[0]!.observation.observed_at.value;
    expect(observedAt(publications[1]!)).toBe(observedAt(publications[0]!) + 1);
    await agent!.refresh();
    expect(describe).toHaveBeenCalledTimes(1);
  });

  it('rebuilds and compares after every poll for a world without a change signal', async () => {
    const { world, coordinator, control } = await setup(undefined, (w) => ({ describe: () => w.describe(), actorState: (id) => w.actorState(id) }));
    const describe = vi.spyOn(world, 'describe');
    await agent!.refresh();
    expect(describe).toHaveBeenCalled();
    expect(control.of('host/publish')).toHaveLength(1);
    await coordinator.dispatcher.dispatch(() => world.tick());
    await agent!.refresh();
    expect(control.of('host/publish')).toHaveLength(2);
  });

  it('stops: the poll is abandoned and the host unregisters', async () => {
    const { control } = await setup();
    await agent?.stop();
    agent = undefined;
    expect(control.calls.at(-1)).toMatchObject({ path: 'host/unregister', body: { host_id: HOST, lease_id: 'lease.1' } });
  });
});
