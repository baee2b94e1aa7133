/**
 * The operations half inside the real server (core, HTTP, database): a scripted Host registers,
 * publishes, answers the gateway through host/poll + host/gateway-result and reports its work;
 * a controller submits, confirms, waits and reads the task timeline; a restart on the same data
 * recovers the operations with the restart rules. Both database engines.
 */
import { expect, it } from 'vitest';
import { goJsonEncode, parseWireJson, RawJson, type WireNode } from '../../ts/crypto/gojson.js';
import { ActionRequestShape, decodeWire } from '../../ts/rin/wire.js';
import { createOperations } from '../../ts/rin/control/operations.js';
import { HostRegistry } from '../../ts/rin/registry.js';
import type { ActionRequest, BoundAction, CapabilitySpec, HostControlBatch } from '../../ts/rin/types.js';
import { ALL_SCOPES, dataPlace, openControl, VirtualTimers, type ControlHarness, type DbKind } from './control-http-harness.js';
import { capability, manifest, settle, TEST_POLICY } from './control-ops-harness.js';
import { describeEachDb } from '../server/harness.js';

const HOST_ID = 'host.e2e';
const WORLD_ID = 'world.one';
const ACTOR_ID = 'actor.one';
const CONFIRMER = { id: 'player.one', granted_scopes: [...ALL_SCOPES.granted_scopes!, 'rin.policy.confirm'] };
const epoch = { session_id: 'session.one', world_id: WORLD_ID, host: 1, world: 1, timeline: 1 };
const plain = (v: unknown): unknown => JSON.parse(goJsonEncode(v));

class HttpHost {
  leaseId = '';
  readonly registry = new HostRegistry(manifest());
  readonly spec: CapabilitySpec;
  step = 500;
  constructor(readonly h: ControlHarness) {
    this.spec = this.registry.register(capability('harbor.cargo.load'));
  }

  async start(): Promise<void> {
    const reg = await this.h.call('/control/v2/host/register', {
      contract_version: 'rin.control/v2',
      host_id: HOST_ID,
      instance_id: 'instance.one',
      manifest: manifest(),
      lease_ttl_millis: 300_000,
    });
    expect(reg.status, reg.text).toBe(200);
    this.leaseId = reg.body['lease_id'] as string;
    const actor = {
      actor_id: ACTOR_ID,
      owner_principal_id: 'player.one',
      display_name: 'Guide',
      observation_seq: 4,
      epoch,
      decision_authority: { source: 'external', controller_principal_id: 'player.one', revision: 1, persona_mode: 'agent-avatar' },
      state: { ready: true },
      capabilities: plain({ revision: 1, specs: [this.spec] }),
    };
    const pub = await this.h.call('/control/v2/host/publish', {
      host_id: HOST_ID,
      lease_id: this.leaseId,
      publication: { world_id: WORLD_ID, display_name: 'Harbor', sequence: 1, actors: [actor] },
    });
    expect(pub.status, pub.text).toBe(200);
  }

  async poll(): Promise<HostControlBatch> {
    const r = await this.h.call('/control/v2/host/poll', { host_id: HOST_ID, lease_id: this.leaseId, limit: 16, wait_millis: 0 });
    expect(r.status, r.text).toBe(200);
    const batch = r.body as unknown as HostControlBatch;
    // The action requests again from the wire text, so their raw arguments keep their lexemes.
    const parsed = parseWireJson(r.text);
    const gatewayNodes = member(parsed.root, 'gateway_requests');
    for (const [index, g] of batch.gateway_requests.entries()) {
      const snapshot = { now: { clock: 'step', value: this.step }, epoch, observation_sequence: 4 };
      let result: Record<string, unknown>;
      if (g.request.kind === 'snapshot') {
        result = { gateway_request_id: g.request.gateway_request_id, snapshot };
      } else {
        const node = member(member(item(gatewayNodes, index), 'request'), 'action_request');
        const request = decodeWire<ActionRequest>(parsed.text, node, ActionRequestShape);
        const risk = request.idempotency_key.includes('confirm') ? 'moderate' : 'low';
        const bound: BoundAction = this.registry.sealBinding(
          request,
          {
            binding_id: `binding.${g.request.gateway_request_id.slice(-6)}`,
            effect_preview: [
              {
                effect_id: 'effect.one',
                kind: 'cargo.move',
                operation: 'update',
                ownership: 'actor',
                scope: 'harbor.dock',
                reversible: true,
                risk,
                attributes: new RawJson('{"weight":2}'),
              },
            ],
            valid_until: { clock: 'step', value: this.step + 90 },
          },
          snapshot.now as { clock: 'step'; value: number },
          epoch,
          4,
        );
        result = { gateway_request_id: g.request.gateway_request_id, binding: { bound_action: bound, snapshot } };
      }
      const raw = goJsonEncode({ host_id: HOST_ID, lease_id: this.leaseId, result });
      const answer = await this.h.call('/control/v2/host/gateway-result', undefined, { method: 'POST', raw });
      expect(answer.status, answer.text).toBe(200);
    }
    return batch;
  }

  /** Polls until the client call settles, answering its gateway request. */
  async serve<T>(pending: Promise<T>): Promise<T> {
    let done = false;
    void pending.finally(() => (done = true)).catch(() => {});
    for (let i = 0; i < 40 && !done; i++) {
      await settle(3);
      if (!done) await this.poll();
    }
    return pending;
  }

  report(path: 'ack' | 'run' | 'outcome', body: Record<string, unknown>) {
    return this.h.call(`/control/v2/host/${path}`, { host_id: HOST_ID, lease_id: this.leaseId, ...body });
  }
}

function member(node: WireNode, name: string): WireNode {
  if (node.kind !== 'object') throw new Error(`not an object at ${name}`);
  const found = node.members.find(([n]) => n === name);
  if (found === undefined) throw new Error(`no member ${name}`);
  return found[1];
}

function item(node: WireNode, index: number): WireNode {
  if (node.kind !== 'array') throw new Error('not an array');
  return node.items[index]!;
}

/** The submit body as wire text: the arguments carry a lexeme JSON.stringify would not keep. */
function submitText(spec: CapabilitySpec, key: string): string {
  return JSON.stringify({ host_id: HOST_ID, world_id: WORLD_ID, action_request: request(spec, key) }).replace('"weight":2.5', '"weight":2.50');
}

function request(spec: CapabilitySpec, key: string): Record<string, unknown> {
  return {
    request_id: `request.${key}`,
    controller_id: 'controller.one',
    actor_id: ACTOR_ID,
    capability: spec.capability,
    spec_digest: spec.digest,
    arguments: { crate: 'red', weight: 2.5 },
    expected_epoch: epoch,
    observation_sequence: 4,
    task_id: 'task.harbor',
    idempotency_key: key,
  };
}

function suite(kind: DbKind): void {
  it('submit → confirm → deliver → ack → run → outcome over HTTP, the timeline, then a restart', async () => {
    const place = await dataPlace(kind);
    const clock = new VirtualTimers();
    const extra = { ops: createOperations, policy: TEST_POLICY };
    let h = await openControl(place, { clock, principal: CONFIRMER, extra });
    try {
      const host = new HttpHost(h);
      await host.start();
      const lease = await h.call('/control/v2/controllers/acquire', {
        host_id: HOST_ID,
        world_id: WORLD_ID,
        actor_id: ACTOR_ID,
        controller_id: 'controller.one',
        lease_ttl_millis: 300_000,
      });
      expect(lease.status, lease.text).toBe(200);

      const submitted = await host.serve(h.call('/control/v2/actions/submit', undefined, { method: 'POST', raw: submitText(host.spec, 'key.load') }));
      expect(submitted.status, submitted.text).toBe(200);
      expect(submitted.body['status']).toBe('queued');
      // The arguments' lexemes survive the whole trip.
      expect(submitted.text).toContain('"arguments":{"crate":"red","weight":2.50}');
      const id = submitted.body['operation_id'] as string;

      const confirmNeeded = await host.serve(h.call('/control/v2/actions/submit', undefined, { method: 'POST', raw: submitText(host.spec, 'key.confirm') }));
      expect(confirmNeeded.body['status']).toBe('awaiting-confirmation');
      const confirmed = await host.serve(h.call('/control/v2/actions/confirm', { operation_id: confirmNeeded.body['operation_id'] }));
      expect(confirmed.status, confirmed.text).toBe(200);
      expect(confirmed.body['status']).toBe('queued');

      const waiting = h.call('/control/v2/operations/wait', { operation_id: id, after_cursor: submitted.body['cursor'], wait_millis: 20_000 });
      await settle(3);
      const batch = await host.poll();
      expect(batch.requests.map((r) => r.request.operation_id)).toContain(id);
      const woke = await waiting;
      expect(woke.body['changed']).toBe(true);
      expect((woke.body['operation'] as Record<string, unknown>)['status']).toBe('delivered');

      expect((await host.report('ack', { acknowledgement: { operation_id: id, accepted: true } })).body).toEqual({ status: 'acknowledged' });
      const run = await host.report('run', {
        run: { operation_id: id, status: 'running', progress_seq: 1, progress: 50, updated_at: { clock: 'step', value: 501 } },
      });
      expect(run.status, run.text).toBe(200);
      const early = await h.call('/control/v2/host/run', {
        host_id: HOST_ID,
        lease_id: host.leaseId,
        run: { operation_id: confirmed.body['operation_id'], status: 'running', progress_seq: 1, progress: 1, updated_at: { clock: 'step', value: 501 } },
      });
      expect(early.status).toBe(409);
      expect(early.body['code']).toBe('not_accepted');
      const outcome = await host.report('outcome', {
        outcome: { operation_id: id, status: 'succeeded', summary: 'Loaded.', epoch, world_seq: 5, occurred_at: { clock: 'step', value: 520 } },
        output: { note: 'ok', moved: 1 },
      });
      expect(outcome.status, outcome.text).toBe(200);
      const done = await h.call('/control/v2/operations/get', { operation_id: id });
      expect(done.body['status']).toBe('succeeded');
      expect(done.body['execution_confirmed']).toBe(true);
      expect(done.text).toContain('"output":{"moved":1,"note":"ok"}');

      const page = await h.call('/control/v2/tasks/timeline/get', { task_id: 'task.harbor', limit: 2 });
      expect(page.status, page.text).toBe(200);
      expect(page.body['contract_version']).toBe('rin.task-timeline/v1');
      expect(page.body['more']).toBe(true);
      const rest = await h.call('/control/v2/tasks/timeline/get', { task_id: 'task.harbor', after_cursor: page.body['next_cursor'], limit: 256 });
      const kinds = [...(page.body['events'] as Array<Record<string, unknown>>), ...(rest.body['events'] as Array<Record<string, unknown>>)].map(
        (e) => e['event_kind'],
      );
      expect(kinds).toEqual(
        expect.arrayContaining([
          'operation.queued',
          'operation.awaiting-confirmation',
          'operation.delivered',
          'operation.accepted',
          'operation.progress',
          'operation.succeeded',
        ]),
      );
      const bad = await h.call('/control/v2/tasks/timeline/get', { task_id: 'task.harbor', after_cursor: 'tl1:00' });
      expect(bad.status).toBe(400);

      // Restart on the same data: the finished operation stays; the confirmed one, delivered but never accepted, is stale.
      await h.control.close();
      h = await openControl(place, { clock, principal: CONFIRMER, extra });
      const after = await h.call('/control/v2/operations/get', { operation_id: id });
      expect(after.status, after.text).toBe(200);
      expect(after.body['status']).toBe('succeeded');
      const pendingAfter = await h.call('/control/v2/operations/get', { operation_id: confirmed.body['operation_id'] });
      expect(pendingAfter.body['status']).toBe('stale');
    } finally {
      await h.control.close();
      await place.drop();
    }
  });
}

describeEachDb('operations over HTTP', suite);
