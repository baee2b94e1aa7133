// Plumbing of the rin interop and CLI tests: where the reference pieces are (the Go control daemon built
// by scripts/lib/rin-reference.sh, the reference JS SDK), and a daemon process on a free loopback port
// whose output is kept for a failure's message.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe } from 'vitest';
import { createOperations } from '../../ts/rin/control/operations.js';
import { serveRinControl, type ServedRinControl } from '../../ts/rin/control/service.js';
import { jsonLineLog } from '../../ts/server/log.js';
import { startHostAgent, type HostAgent } from '../../ts/rin/host-agent.js';
import { SerialDispatcher } from '../../ts/rin/hostkit/authority.js';
import { AdapterCoordinator } from '../../ts/rin/hostkit/coordinator.js';
import type { RinError } from '../../ts/rin/errors.js';
import { harborPolicy } from '../../ts/rin/world/catalog.js';

export { harborPolicy };
import { HarborWorld } from '../../ts/rin/world/harbor.js';
import { REPO } from './harness.js';
import { need } from '../shared/require.js';

export const SHARED = resolve(REPO, '../shared');
export const RIN_SRC = join(SHARED, 'reference/rin-src');
export const SDK_ENTRY = join(RIN_SRC, 'sdk/javascript/src/index.js');
/** Test-only bearer token (≥ 32 bytes). */
export const RIN_TOKEN = 'aigenora-rin-interop-token-0123456789abcdef';
export const PRINCIPAL = 'alice';
/** What the task needs: read, control, execute, cancel, and the default policy's confirmation scope. */
export const SCOPES = ['actor.read', 'actor.control', 'actor.execute', 'operation.cancel', 'rin.policy.confirm'];

/** What is missing for the rin interop tests (the reference JS SDK, the Go daemon), or undefined. */
export function rinReferenceMissing(): string | undefined {
  if (!existsSync(SDK_ENTRY)) return `the reference JS SDK (${SDK_ENTRY}, from ../shared/reference/rin-src)`;
  const bin = rinControlBinary();
  if (!existsSync(bin)) return `the reference Rin control daemon ${bin} (build it: source scripts/lib/rin-reference.sh && ensure_rin_reference)`;
  return undefined;
}

/**
 * `describe` for suites that need the reference pieces: a missing piece fails the file, naming it, unless
 * AIGENORA_SKIP_CORPORA=1 asks to skip (test/shared/require.ts): then the suite is skipped, loudly.
 */
export function describeWithReference(name: string, body: () => void): void {
  const missing = rinReferenceMissing();
  const ok = need(`${missing} (for: ${name})`, missing === undefined, {
    how: 'scripts/test.sh builds the daemon from ../shared/reference/rin-src (scripts/lib/rin-reference.sh)',
  });
  describe.skipIf(!ok)(ok ? name : `${name} (SKIPPED: missing ${missing})`, body);
}

export const rinControlBinary = () => process.env['AIGENORA_RIN_CONTROL'] ?? join(REPO, '.cache/rin-control');

/** The reference SDK module, imported unmodified from ../shared. */
export async function importReferenceSdk(): Promise<Record<string, unknown>> {
  return (await import(/* @vite-ignore */ pathToFileURL(SDK_ENTRY).href)) as Record<string, unknown>;
}

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

export interface Daemon {
  url: string;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts a process that listens on 127.0.0.1:<port> and waits until `ready` appears in its output (or
 * it exits, or `timeoutMs` passes: both throw with its output).
 */
export async function startDaemon(
  name: string,
  cmd: string,
  args: string[],
  env: Record<string, string>,
  port: number,
  ready: RegExp,
  timeoutMs = 30_000,
): Promise<Daemon> {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const daemon: Daemon = {
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(t);
      }
    },
  };
  const end = Date.now() + timeoutMs;
  while (!ready.test(out)) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${out}`);
    if (Date.now() > end) {
      await daemon.stop();
      throw new Error(`${name} was not ready within ${timeoutMs} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return daemon;
}

/** The reference Go daemon with `principal` granted `scopes` and the harbor policy, its state under `dataDir`. */
export async function startGoDaemon(dataDir: string, principal = PRINCIPAL, scopes = SCOPES): Promise<Daemon> {
  const port = await freePort();
  const policy = join(dataDir, 'policy.json');
  writeFileSync(policy, harborPolicy());
  return startDaemon(
    'rin-control (Go reference)',
    rinControlBinary(),
    ['--control-addr', `127.0.0.1:${port}`, '--data', dataDir, '--principal', principal, '--scopes', scopes.join(','), '--policy', policy],
    { RIN_CONTROL_TOKEN: RIN_TOKEN },
    port,
    /listening on/,
  );
}

/** What one controller's whole task through the reference SDK saw, step by step. */
export interface SdkTask {
  principal: string;
  target: { host_id: string; world_id: string; actor_id: string };
  lease: Record<string, any>;
  observation: Record<string, any>;
  capabilities: Record<string, any>;
  spec: Record<string, any>;
  submitted: Record<string, any>;
  confirmed: Record<string, any>;
  final: Record<string, any>;
  timeline: Record<string, any>;
}

/**
 * The reference SDK, unmodified, drives one task end to end: find the actor, acquire the controller,
 * observe, list and describe the capabilities, submit (the policy asks for confirmation), confirm, wait
 * for the outcome, read the task's timeline. Nothing is asserted here; the caller checks what it saw.
 * `tick` runs between waits (a world on a step clock moves only when told to).
 */
export async function sdkWholeTask(
  sdk: Record<string, unknown>,
  url: string,
  opts: { capability: string; arguments: Record<string, unknown>; taskId: string; controllerId: string; tick?: () => Promise<void>; timeoutMs?: number },
): Promise<SdkTask> {
  const Client = sdk['RinControlClient'] as new (base: string, o: { token: string }) => Record<string, (input?: unknown) => Promise<any>>;
  const c = new Client(url, { token: RIN_TOKEN });
  const info = await c['info']!();
  const principal = info.principal.id as string;
  const worlds = (await c['listWorlds']!()) as { host_id: string; world_id: string; online: boolean }[];
  const world = worlds.find((w) => w.online);
  if (!world) throw new Error(`no online world visible to ${principal}: ${JSON.stringify(worlds)}`);
  const actors = (await c['listActors']!({ host_id: world.host_id, world_id: world.world_id })) as { actor_id: string; owner_principal_id: string }[];
  const actor = actors.find((a) => a.owner_principal_id === principal);
  if (!actor) throw new Error(`no actor of ${principal} in ${world.world_id}: ${JSON.stringify(actors.map((a) => a.actor_id))}`);
  const target = { host_id: world.host_id, world_id: world.world_id, actor_id: actor.actor_id };
  const lease = await c['acquireController']!({ ...target, controller_id: opts.controllerId, lease_ttl_millis: 60_000 });
  const observation = await c['observeActor']!(target);
  const capabilities = await c['listCapabilities']!(target);
  const listed = (capabilities.specs as { capability: { id: string; version: string } }[]).find((s) => s.capability.id === opts.capability);
  if (!listed) throw new Error(`${opts.capability} is not offered: ${JSON.stringify(capabilities.specs.map((s: any) => s.capability.id))}`);
  const spec = await c['describeCapability']!({ ...target, capability: listed.capability });
  const submitted = await c['submitAction']!({
    host_id: target.host_id,
    world_id: target.world_id,
    action_request: {
      request_id: `request.${opts.taskId}`,
      controller_id: opts.controllerId,
      actor_id: target.actor_id,
      capability: listed.capability,
      spec_digest: spec.digest,
      arguments: opts.arguments,
      expected_epoch: observation.epoch,
      observation_sequence: observation.sequence,
      task_id: opts.taskId,
      idempotency_key: `key.${opts.taskId}`,
    },
  });
  const confirmed = submitted.status === 'awaiting-confirmation' ? await c['confirmAction']!({ operation_id: submitted.operation_id }) : submitted;
  let final = confirmed;
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  while (!final.terminal && Date.now() < deadline) {
    if (opts.tick) await opts.tick();
    final = (await c['waitOperation']!({ operation_id: final.operation_id, after_cursor: final.cursor, wait_millis: opts.tick ? 200 : 5000 })).operation;
  }
  const timeline = await c['getTaskTimeline']!({ task_id: opts.taskId });
  return { principal, target, lease, observation, capabilities, spec, submitted, confirmed, final, timeline };
}

/** Our control daemon in this process on 127.0.0.1 (in-memory database), as the Go one is configured; its log lines go to `log`. */
export function serveOurDaemon(log: string[]): Promise<ServedRinControl> {
  return serveRinControl({
    token: RIN_TOKEN,
    principal: { id: PRINCIPAL, granted_scopes: SCOPES },
    policy: harborPolicy(),
    ops: createOperations,
    listen: '127.0.0.1:0',
    log: jsonLineLog((line) => log.push(line.trimEnd())),
  });
}

/** Our built-in world attached to a control daemon through our host agent, in this process. */
export interface AttachedHarbor {
  harbor: HarborWorld;
  agent: HostAgent;
  /** Failures the agent survived (retried or refused reports), for a failure's message. */
  errors: RinError[];
  /** One world step on the authority thread, then the agent reports progress. */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

export async function attachHarbor(url: string, owner = PRINCIPAL, hostId = 'harbor-host'): Promise<AttachedHarbor> {
  const harbor = new HarborWorld({ owner });
  const dispatcher = new SerialDispatcher();
  const coordinator = await AdapterCoordinator.create(harbor, dispatcher);
  const errors: RinError[] = [];
  const agent = await startHostAgent({
    baseUrl: url,
    token: RIN_TOKEN,
    coordinator,
    world: harbor,
    hostId,
    instanceId: `instance.${randomBytes(8).toString('hex')}`,
    pollWaitMillis: 500,
    onError: (e) => errors.push(e),
  });
  return {
    harbor,
    agent,
    errors,
    async tick() {
      await dispatcher.dispatch(() => harbor.tick());
      await agent.refresh();
    },
    stop: () => agent.stop(),
  };
}

/**
 * What a whole task must show, whichever daemon ran it: the repair capability asks for confirmation
 * under the guarded policy, runs once confirmed on the slipway, and ends succeeded with the output its
 * schema promises; the timeline tells the same story for this task only.
 */
export function checkWholeTask(task: SdkTask, attached: AttachedHarbor, expect: typeof import('vitest').expect): void {
  const { target } = task;
  expect(task.principal).toBe(PRINCIPAL);
  expect(task.lease).toMatchObject({ ...target, controller_id: 'controller.sdk', principal_id: PRINCIPAL, source: 'external', persona_mode: 'agent-avatar' });
  expect(task.lease['epoch']).toEqual(task.observation['epoch']);
  expect(task.observation).toMatchObject({ ...target });
  expect(task.observation['sequence']).toBeGreaterThanOrEqual(1);
  const ids = (task.capabilities['specs'] as { capability: { id: string } }[]).map((s) => s.capability.id);
  expect(ids).toEqual([...ids].sort());
  expect(ids).toContain('harbor.repair');
  expect(task.spec).toEqual((task.capabilities['specs'] as { capability: { id: string } }[]).find((s) => s.capability.id === 'harbor.repair'));
  expect(task.spec['digest']).toMatch(/^[0-9a-f]{64}$/);

  expect(task.submitted).toMatchObject({ ...target, kind: 'action', status: 'awaiting-confirmation', terminal: false, execution_confirmed: false });
  expect(task.submitted['policy_decision']).toMatchObject({ result: 'require_confirmation', principal_id: PRINCIPAL, controller_id: 'controller.sdk' });
  expect(task.submitted['policy_decision'].confirmation_challenge).toBeDefined();
  expect(task.submitted['bound_action'].effect_preview.map((e: { kind: string }) => e.kind)).toEqual(['harbor.repair']);
  expect(task.confirmed['operation_id']).toBe(task.submitted['operation_id']);
  expect(['queued', 'delivered', 'accepted', 'running', 'succeeded']).toContain(task.confirmed['status']);

  const final = task.final;
  expect(final, JSON.stringify(final)).toMatchObject({
    operation_id: task.submitted['operation_id'],
    status: 'succeeded',
    terminal: true,
    execution_confirmed: true,
    reconciliation_pending: false,
  });
  expect(final['outcome']).toMatchObject({ operation_id: final['operation_id'], status: 'succeeded', epoch: task.observation['epoch'] });
  expect(final['output']).toEqual({ hull: 100 });
  expect(attached.agent.stats().executed).toBe(1);

  const timeline = task.timeline;
  expect(timeline).toMatchObject({ contract_version: 'rin.task-timeline/v1', task_id: final['action_request'].task_id, truncated: false });
  const events = timeline['events'] as { task_id: string; cursor: string; operation?: { operation_id: string } }[];
  expect(events.length).toBeGreaterThan(1);
  for (const e of events) expect(e.task_id).toBe(timeline['task_id']);
  expect(events.every((e) => e.operation === undefined || e.operation.operation_id === final['operation_id'])).toBe(true);
  expect(timeline['next_cursor']).toBe(events.at(-1)!.cursor);
  // The lifecycle in order; how many progress reports fall between depends on the host's timing.
  const kinds = (events as unknown as { event_kind: string }[]).map((e) => e.event_kind);
  expect(kinds[0]).toBe('operation.awaiting-confirmation');
  expect(kinds.at(-1)).toBe('operation.succeeded');
  const firsts = ['operation.awaiting-confirmation', 'operation.queued', 'operation.accepted', 'operation.succeeded'].map((k) => kinds.indexOf(k));
  expect(
    firsts.every((at) => at >= 0),
    kinds.join(' '),
  ).toBe(true);
  expect(firsts, kinds.join(' ')).toEqual([...firsts].sort((a, b) => a - b));
  expect((events[0] as unknown as { policy: { disposition: string } }).policy.disposition).toBe('require_confirmation');
}

/** The whole task through the reference SDK at `url`, checked; a failure carries the daemon's side of the story. */
export async function expectWholeTask(
  url: string,
  attached: AttachedHarbor,
  taskId: string,
  daemonLog: () => string,
  expect: typeof import('vitest').expect,
): Promise<void> {
  const sdk = await importReferenceSdk();
  try {
    const task = await sdkWholeTask(sdk, url, {
      capability: 'harbor.repair',
      arguments: {},
      taskId,
      controllerId: 'controller.sdk',
      tick: () => attached.tick(),
    });
    checkWholeTask(task, attached, expect);
  } catch (e) {
    const agentErrors = attached.errors.map((x) => `${x.code}: ${x.message}`).join('\n');
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- daemon:\n${daemonLog()}\n--- host agent errors:\n${agentErrors}`);
  }
}
