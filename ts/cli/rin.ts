/**
 * `aigenora rin …`: a rin.control/v2 daemon (serve), the built-in world attached to one (host), and the
 * controller's commands against one (worlds, observe, capabilities, submit, operation, emergency-stop).
 *
 * The bearer token comes from $RIN_CONTROL_TOKEN only, never a flag: a flag would show in `ps`. Text from
 * the daemon is printed with control characters removed; --json prints its answer re-encoded from the
 * parsed value (members and values kept; a raw number such as 2.0 prints as 2).
 */
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parseWireJson, RawJson } from '../crypto/gojson.js';
import { readText } from '../files/read.js';
import { resolveDataDir } from '../library/data-dir.js';
import { sanitize } from '../registry/errors.js';
import { checkControlToken, CONTROL_DEFAULT_BASE_URL, RinControlClient, type Plain } from '../rin/client.js';
import { RinError } from '../rin/errors.js';
import type { ActionRequest, ActorTarget, CapabilityRef, HostRef, OperationView } from '../rin/types.js';
import { intFlag, noPositional, stringFlag, UsageError, type Command, type FlagKind, type Output } from './args.js';
import { stopSignal } from './serve.js';

type Flags = Record<string, string | boolean | undefined>;

export const TOKEN_ENV = 'RIN_CONTROL_TOKEN';
const CONTROL: Record<string, FlagKind> = { control: 'string', json: 'boolean' };
const CONTROL_USAGE = '[--control URL] [--json]';
const TARGET: Record<string, FlagKind> = { 'host-id': 'string', world: 'string', actor: 'string' };
const TARGET_USAGE = '[--host-id ID] [--world ID] [--actor ID]';
const CONTROL_HELP = `The daemon is --control URL (default ${CONTROL_DEFAULT_BASE_URL}; a plain loopback http origin);
its bearer token is read from $${TOKEN_ENV}.`;
const TARGET_HELP = `The actor is named by --host-id, --world and --actor; each may be left out when only one
visible world or actor matches the others.`;
/** Submissions tried when the world moves under one (`stale`), and the pause before the next. */
const STALE_ATTEMPTS = 5;
const STALE_PAUSE_MS = 250;
/** The longest wait the daemon grants one long poll (R70). */
const MAX_WAIT_MILLIS = 25_000;

const str = stringFlag;
const show = (v: unknown, max = 120) => sanitize(typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v), max);
const randomId = (prefix: string) => `${prefix}.${randomBytes(16).toString('hex')}`;

/** The token from the environment, checked before anything is sent. */
export function controlToken(env: NodeJS.ProcessEnv = process.env): string {
  const token = env[TOKEN_ENV];
  if (token === undefined || token === '') throw new UsageError(`$${TOKEN_ENV} is not set: it holds the control daemon's bearer token (at least 32 bytes)`);
  try {
    return checkControlToken(token);
  } catch (e) {
    throw new UsageError(`$${TOKEN_ENV} ${e instanceof RinError ? e.message.replace(/^the control token /, '') : 'is not a usable token'}`);
  }
}

function client(flags: Flags): RinControlClient {
  const token = controlToken();
  try {
    return new RinControlClient({ baseUrl: str(flags, 'control') ?? CONTROL_DEFAULT_BASE_URL, token });
  } catch (e) {
    if (e instanceof RinError) throw new UsageError(`--control: ${e.message}`);
    throw e;
  }
}

/** Picks the one world and actor matching the flags given, listing only what is needed. */
export async function resolveTarget(c: RinControlClient, flags: Flags): Promise<ActorTarget> {
  let hostId = str(flags, 'host-id');
  let worldId = str(flags, 'world');
  if (hostId === undefined || worldId === undefined) {
    const worlds = (await c.listWorlds()).filter((w) => (hostId === undefined || w.host_id === hostId) && (worldId === undefined || w.world_id === worldId));
    if (worlds.length !== 1) {
      const named = worlds.map((w) => `${show(w.host_id, 96)}/${show(w.world_id, 96)}`).join(', ');
      throw new RinError(
        'invalid',
        worlds.length === 0
          ? 'no visible world matches; see aigenora rin worlds'
          : `${worlds.length} worlds match (${named}); name one with --host-id and --world`,
      );
    }
    hostId = worlds[0]!.host_id;
    worldId = worlds[0]!.world_id;
  }
  let actorId = str(flags, 'actor');
  if (actorId === undefined) {
    const actors = await c.listActors({ host_id: hostId, world_id: worldId });
    if (actors.length !== 1) {
      throw new RinError(
        'invalid',
        actors.length === 0
          ? `world ${show(worldId, 96)} has no visible actor`
          : `${actors.length} actors in ${show(worldId, 96)} (${actors.map((a) => show(a.actor_id, 96)).join(', ')}); name one with --actor`,
      );
    }
    actorId = actors[0]!.actor_id;
  }
  return { host_id: hostId, world_id: worldId, actor_id: actorId };
}

/** `ID@VERSION`, or `ID` alone when the actor offers exactly one version of it. */
function parseCapabilityFlag(v: string): { id: string; version?: string } {
  const at = v.indexOf('@');
  const id = at < 0 ? v : v.slice(0, at);
  const version = at < 0 ? undefined : v.slice(at + 1);
  if (id === '' || version === '') throw new UsageError(`--capability must be ID or ID@VERSION, got ${JSON.stringify(v)}`);
  return { id, ...(version !== undefined && { version }) };
}

async function resolveCapability(c: RinControlClient, target: ActorTarget, flag: string): Promise<CapabilityRef> {
  const { id, version } = parseCapabilityFlag(flag);
  if (version !== undefined) return { id, version };
  const versions = (await c.listCapabilities(target)).specs.filter((s) => s.capability.id === id).map((s) => s.capability.version);
  if (versions.length !== 1) {
    throw new RinError(
      versions.length === 0 ? 'not_found' : 'invalid',
      versions.length === 0
        ? `actor ${show(target.actor_id, 96)} offers no capability ${show(id, 96)}`
        : `${show(id, 96)} has ${versions.length} versions (${versions.map((v) => show(v, 40)).join(', ')}); name one as ID@VERSION`,
    );
  }
  return { id, version: versions[0]! };
}

/** A JSON object given as text, kept byte for byte (its number lexemes are part of the request digest). */
function jsonObjectFlag(flags: Flags, name: string): RawJson {
  const text = str(flags, name) ?? '{}';
  let root;
  try {
    root = parseWireJson(text).root;
  } catch (e) {
    throw new UsageError(`--${name} is not strict JSON: ${show(e instanceof Error ? e.message : String(e), 160)}`);
  }
  if (root.kind !== 'object') throw new UsageError(`--${name} must be a JSON object`);
  return new RawJson(text.trim());
}

function targetRefsFlag(flags: Flags): HostRef[] | undefined {
  const text = str(flags, 'target-refs');
  if (text === undefined) return undefined;
  let refs: unknown;
  try {
    parseWireJson(text);
    refs = JSON.parse(text);
  } catch {
    throw new UsageError('--target-refs must be a JSON array of HostRefs copied from an observation');
  }
  if (!Array.isArray(refs) || refs.some((r) => r === null || typeof r !== 'object' || Array.isArray(r))) {
    throw new UsageError('--target-refs must be a JSON array of HostRefs copied from an observation');
  }
  return refs as HostRef[];
}

function operationLine(op: Plain<OperationView>): string {
  const cap = op.action_request ? ` ${show(op.action_request.capability.id, 96)}@${show(op.action_request.capability.version, 40)}` : '';
  const parts = [`operation ${show(op.operation_id, 96)}${cap}: ${show(op.status, 40)}`];
  if (op.cancel_requested && !op.terminal) parts.push('(cancel requested)');
  if (op.rejection_code) parts.push(`${show(op.rejection_code, 96)}: ${show(op.rejection_message, 200)}`);
  if (op.outcome) parts.push(`${op.outcome.code ? `${show(op.outcome.code, 96)}: ` : ''}${show(op.outcome.summary, 200)}`);
  if (op.status === 'awaiting-confirmation') parts.push(`(aigenora rin operation confirm ${show(op.operation_id, 96)})`);
  return parts.join(' ');
}

function printOperation(out: Output, flags: Flags, op: Plain<OperationView>): void {
  if (flags['json']) out.json(op);
  else out.line(operationLine(op));
}

/**
 * Waits for the operation to finish, one long poll after another, for at most `timeoutMs`; returns the
 * last view seen (finished or not).
 */
async function waitTerminal(c: RinControlClient, first: Plain<OperationView>, timeoutMs: number, now: () => number = Date.now): Promise<Plain<OperationView>> {
  const deadline = now() + timeoutMs;
  let op = first;
  while (!op.terminal) {
    const left = deadline - now();
    if (left <= 0) break;
    op = (await c.waitOperation({ operation_id: op.operation_id, after_cursor: op.cursor, wait_millis: Math.min(left, MAX_WAIT_MILLIS) })).operation;
  }
  return op;
}

export const rinWorlds: Command = {
  name: 'worlds',
  usage: `aigenora rin worlds ${CONTROL_USAGE}`,
  help: `Lists the worlds this principal can see, one line each: host/world, name, online or offline.\n${CONTROL_HELP}`,
  flags: { ...CONTROL },
  async run(args, out) {
    noPositional(args);
    const worlds = await client(args.flags).listWorlds();
    if (args.flags['json']) out.json(worlds);
    else
      for (const w of worlds)
        out.line(`${show(w.host_id, 96)}/${show(w.world_id, 96)} ${JSON.stringify(show(w.display_name, 128))} ${w.online ? 'online' : 'offline'}`);
    return 0;
  },
};

export const rinObserve: Command = {
  name: 'observe',
  usage: `aigenora rin observe ${TARGET_USAGE} ${CONTROL_USAGE}`,
  help: `Prints the actor's latest observation: its epoch and sequence, then its facts and resources (with the
HostRefs a submit's --target-refs copies). --json prints the whole envelope.\n${TARGET_HELP}\n${CONTROL_HELP}`,
  flags: { ...TARGET, ...CONTROL },
  async run(args, out) {
    noPositional(args);
    const c = client(args.flags);
    const obs = await c.observe(await resolveTarget(c, args.flags));
    if (args.flags['json']) {
      out.json(obs);
      return 0;
    }
    const e = obs.epoch;
    out.line(
      `${show(obs.host_id, 96)}/${show(obs.world_id, 96)}/${show(obs.actor_id, 96)} sequence ${obs.sequence} epoch ${show(e.session_id, 96)}:${e.host}.${e.world}.${e.timeline} observed ${obs.observed_at.clock} ${obs.observed_at.value}`,
    );
    for (const f of obs.facts ?? []) out.line(`fact ${show(f.fact_id, 96)} ${show(f.kind, 96)} = ${show(f.value, 200)}`);
    for (const r of obs.resources ?? []) out.line(`resource ${show(r.kind, 96)} ${show(r.ref, 400)}${r.quantity !== undefined ? ` x${r.quantity}` : ''}`);
    return 0;
  },
};

export const rinCapabilities: Command = {
  name: 'capabilities',
  usage: `aigenora rin capabilities [--capability ID[@VERSION]] ${TARGET_USAGE} ${CONTROL_USAGE}`,
  help: `Lists the capabilities the actor offers (id@version, kind, execution, risk floor, description); with
--capability, the one capability's whole spec (its schemas and digest).\n${TARGET_HELP}\n${CONTROL_HELP}`,
  flags: { capability: 'string', ...TARGET, ...CONTROL },
  async run(args, out) {
    noPositional(args);
    const c = client(args.flags);
    const target = await resolveTarget(c, args.flags);
    const flag = str(args.flags, 'capability');
    if (flag !== undefined) {
      const spec = await c.describeCapability({ ...target, capability: await resolveCapability(c, target, flag) });
      if (args.flags['json']) out.json(spec);
      else {
        out.line(
          `${show(spec.capability.id, 96)}@${show(spec.capability.version, 40)} ${spec.kind} ${spec.execution} cancellation ${spec.cancellation} risk>=${spec.risk_floor} digest ${show(spec.digest, 64)}`,
        );
        out.line(show(spec.description, 500));
        out.line(`input ${show(spec.input.document, 2000)}`);
      }
      return 0;
    }
    const snapshot = await c.listCapabilities(target);
    if (args.flags['json']) out.json(snapshot);
    else
      for (const s of snapshot.specs)
        out.line(
          `${show(s.capability.id, 96)}@${show(s.capability.version, 40)} ${s.kind} ${s.execution} risk>=${s.risk_floor} ${JSON.stringify(show(s.description, 200))}`,
        );
    return 0;
  },
};

export const rinSubmit: Command = {
  name: 'submit',
  usage: `aigenora rin submit --capability ID[@VERSION] [--arguments JSON] [--target-refs JSON] [--task-id ID] [--controller-id ID] [--lease-id ID] [--idempotency-key KEY] [--wait] [--timeout-ms N] ${TARGET_USAGE} ${CONTROL_USAGE}`,
  help: `Submits one action for the actor: the capability, its --arguments (a JSON object, default {}, sent byte for
byte) and the --target-refs it acts on (a JSON array of HostRefs copied from \`rin observe --json\`). The actor's
current epoch and observation sequence and the capability's digest are fetched here; when the world moves before
the host binds the request (stale), they are fetched again and the action resubmitted, up to ${STALE_ATTEMPTS} times.
A controller lease is acquired (or renewed) for --controller-id (default aigenora-cli) unless --lease-id names
the live one to use. --idempotency-key makes a retry return the first submission's operation while the actor's observation is unchanged
(default: a new key each time).
Prints the operation and its status: queued, awaiting-confirmation (then \`rin operation confirm\`), or rejected
with the policy's reason (exit 1). --wait waits until it finishes (at most --timeout-ms, default 60000) and exits 1
unless it succeeded.\n${TARGET_HELP}\n${CONTROL_HELP}`,
  flags: {
    capability: 'string',
    arguments: 'string',
    'target-refs': 'string',
    'task-id': 'string',
    'controller-id': 'string',
    'lease-id': 'string',
    'idempotency-key': 'string',
    wait: 'boolean',
    'timeout-ms': 'string',
    ...TARGET,
    ...CONTROL,
  },
  async run(args, out) {
    noPositional(args);
    const flag = str(args.flags, 'capability');
    if (flag === undefined) throw new UsageError('--capability is required');
    parseCapabilityFlag(flag);
    const argumentsJson = jsonObjectFlag(args.flags, 'arguments');
    const targetRefs = targetRefsFlag(args.flags);
    const timeoutMs = intFlag(args.flags, 'timeout-ms', 1, 3_600_000) ?? 60_000;
    const c = client(args.flags);
    const target = await resolveTarget(c, args.flags);
    const capability = await resolveCapability(c, target, flag);
    const spec = await c.describeCapability({ ...target, capability });

    const leaseId = str(args.flags, 'lease-id');
    let controllerId: string;
    if (leaseId !== undefined) {
      const lease = await c.getController(target);
      if (lease.lease_id !== leaseId) throw new RinError('lease_expired', `--lease-id ${show(leaseId, 96)} is not the actor's live controller lease`);
      controllerId = lease.controller_id;
    } else {
      controllerId = str(args.flags, 'controller-id') ?? 'aigenora-cli';
      await c.acquireController({ ...target, controller_id: controllerId, lease_ttl_millis: 60_000 });
    }
    const taskId = str(args.flags, 'task-id');
    // A retry under the same key must be the same request (the daemon compares digests), so its id
    // comes from the key.
    const givenKey = str(args.flags, 'idempotency-key');
    const submit = async () => {
      // The actor view carries the epoch and observation sequence the host will fence the request with.
      const actor = await c.getActor(target);
      const request: ActionRequest = {
        request_id: givenKey === undefined ? randomId('request') : `request.${createHash('sha256').update(givenKey).digest('hex').slice(0, 32)}`,
        controller_id: controllerId,
        actor_id: target.actor_id,
        capability,
        spec_digest: spec.digest,
        arguments: argumentsJson,
        ...(targetRefs !== undefined && targetRefs.length > 0 && { target_refs: targetRefs }),
        expected_epoch: actor.epoch,
        observation_sequence: actor.observation_seq,
        ...(taskId !== undefined && { task_id: taskId }),
        idempotency_key: givenKey ?? randomId('cli'),
      };
      return c.submitAction({ host_id: target.host_id, world_id: target.world_id, action_request: request });
    };
    // A world that moves between our read and the host's binding answers `stale`: read it again and
    // resubmit, a few times (not under a caller's key, whose request must stay the same).
    let op: Plain<OperationView> | undefined;
    for (let attempt = 1; op === undefined; attempt++) {
      try {
        op = await submit();
      } catch (e) {
        if (!(e instanceof RinError && e.code === 'stale') || givenKey !== undefined || attempt >= STALE_ATTEMPTS) throw e;
        // The host republishes after each change; give it the time to, rather than racing it again.
        await new Promise((r) => setTimeout(r, STALE_PAUSE_MS));
      }
    }
    if (args.flags['wait'] && op.status !== 'awaiting-confirmation') op = await waitTerminal(c, op, timeoutMs);
    printOperation(out, args.flags, op);
    if (op.status === 'rejected') return 1;
    return args.flags['wait'] && op.status !== 'awaiting-confirmation' && op.status !== 'succeeded' ? 1 : 0;
  },
};

const OPERATION_VERBS = ['get', 'wait', 'cancel', 'confirm'] as const;

export const rinOperation: Command = {
  name: 'operation',
  usage: `aigenora rin operation get|wait|cancel|confirm OPERATION_ID [--timeout-ms N] ${CONTROL_USAGE}`,
  help: `get: the operation's status (and outcome once finished).
wait: waits until it finishes (at most --timeout-ms, default 60000); exits 1 unless it succeeded.
cancel: asks for its cancellation (a request to the host, not a rollback); queued work is cancelled at once.
confirm: approves an operation awaiting confirmation; the daemon re-checks the actor's state first.\n${CONTROL_HELP}`,
  flags: { 'timeout-ms': 'string', ...CONTROL },
  async run(args, out) {
    const [verb, id, ...extra] = args.positional;
    if (verb === undefined || !(OPERATION_VERBS as readonly string[]).includes(verb))
      throw new UsageError(`expected one of ${OPERATION_VERBS.join(', ')}, then an operation id`);
    if (id === undefined) throw new UsageError('expected an operation id');
    if (extra.length) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
    const timeoutMs = intFlag(args.flags, 'timeout-ms', 1, 3_600_000) ?? 60_000;
    const c = client(args.flags);
    const target = { operation_id: id };
    let op: Plain<OperationView>;
    if (verb === 'get') op = await c.getOperation(target);
    else if (verb === 'cancel') op = await c.cancelOperation(target);
    else if (verb === 'confirm') op = await c.confirmAction(target);
    else op = await waitTerminal(c, await c.getOperation(target), timeoutMs);
    printOperation(out, args.flags, op);
    if (verb === 'wait') return op.status === 'succeeded' ? 0 : 1;
    return verb === 'confirm' && op.status === 'rejected' ? 1 : 0;
  },
};

export const rinEmergencyStop: Command = {
  name: 'emergency-stop',
  usage: `aigenora rin emergency-stop [--off] ${TARGET_USAGE} ${CONTROL_USAGE}`,
  help: `Stops the actor: its unfinished operations are cancelled (or asked to cancel once delivered) and policy
denies new ones until --off lifts the stop. Only the actor's owner may do this.\n${TARGET_HELP}\n${CONTROL_HELP}`,
  flags: { off: 'boolean', ...TARGET, ...CONTROL },
  async run(args, out) {
    noPositional(args);
    const c = client(args.flags);
    const target = await resolveTarget(c, args.flags);
    const stop = await c.setEmergencyStop({ ...target, active: args.flags['off'] !== true });
    if (args.flags['json']) out.json(stop);
    else
      out.line(
        `emergency stop ${stop.active ? 'active' : 'lifted'} for ${show(stop.host_id, 96)}/${show(stop.world_id, 96)}/${show(stop.actor_id, 96)} (revision ${stop.revision})`,
      );
    return 0;
  },
};

const DEFAULT_LISTEN = '127.0.0.1:7375';
const SCOPE_LIST = /^[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*(?:,[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*)*$/;

/** Why the daemon could not start: its socket or its database. */
class ServeError extends Error {
  override readonly name = 'ServeError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

export const rinServe: Command = {
  name: 'serve',
  usage: 'aigenora rin serve --principal ID [--scopes LIST] [--policy FILE|harbor] [--listen HOST:PORT] [--data-dir DIR] [--db URL] [--json]',
  help: `Runs a rin.control/v2 control daemon: hosts register and publish their worlds, and one client principal
(--principal, with the comma-separated --scopes, default actor.read) observes and acts through it. Its bearer token
is read from $${TOKEN_ENV} (at least 32 bytes) and guards every route but health.
--listen (default ${DEFAULT_LISTEN}; port 0 picks a free port) must be a loopback address.
--policy: the gameplay policy (the reference's JSON format). Without it the guarded default applies, which knows
no effect kinds and so denies every action: name the world's effect kinds and scopes in the file. --policy harbor
is the built-in world's policy (a file named harbor is ./harbor).
Operations, controller leases and emergency stops are kept in PGlite under <data-dir>/rin/db, or in PostgreSQL
with --db postgres://...; one daemon per database. Prints one line with the URL once it accepts connections
(--json: {"url", "principal", "database"}); SIGINT or SIGTERM stops it.`,
  flags: { principal: 'string', scopes: 'string', policy: 'string', listen: 'string', 'data-dir': 'string', db: 'string', json: 'boolean' },
  async run(args, out) {
    noPositional(args);
    const token = controlToken();
    const principal = str(args.flags, 'principal');
    if (principal === undefined) throw new UsageError('--principal is required: the client principal the daemon serves');
    const scopes = str(args.flags, 'scopes') ?? 'actor.read';
    if (!SCOPE_LIST.test(scopes)) throw new UsageError('--scopes must be a comma-separated list of scopes (e.g. actor.read,actor.control,actor.execute)');
    const dbUrl = str(args.flags, 'db');
    if (dbUrl !== undefined && !/^postgres(ql)?:\/\//.test(dbUrl)) throw new UsageError('--db must be a postgres:// or postgresql:// URL');
    const policyPath = str(args.flags, 'policy');
    const policy =
      policyPath === undefined
        ? undefined
        : policyPath === 'harbor'
          ? (await import('../rin/world/catalog.js')).harborPolicy()
          : readText(policyPath, { maxBytes: 1 << 20, what: 'the policy' });
    const dataDir = join(resolveDataDir(str(args.flags, 'data-dir')), 'rin');
    const [{ serveRinControl }, { createOperations }] = await Promise.all([import('../rin/control/service.js'), import('../rin/control/operations.js')]);
    const listen = str(args.flags, 'listen') ?? DEFAULT_LISTEN;
    let served;
    try {
      served = await serveRinControl({
        token,
        principal: { id: principal, granted_scopes: scopes.split(',') },
        ...(dbUrl === undefined ? { dataDir } : { dbUrl }),
        ...(policy !== undefined && { policy }),
        ops: createOperations,
        listen,
      });
    } catch (e) {
      if (e instanceof RinError) throw e;
      const why = show(e instanceof Error ? e.message.split('\n')[0] : String(e), 300);
      const { code, syscall } = e as { code?: unknown; syscall?: unknown };
      if (syscall === 'listen') throw new ServeError('LISTEN_FAILED', `cannot listen on ${show(listen, 80)}: ${why}`);
      // A typed error of its own (WASM_UNAVAILABLE, ...) already says what is wrong.
      if (typeof code === 'string' && code !== '' && !/^E[A-Z]+$/.test(code)) throw e;
      throw new ServeError('DB_UNAVAILABLE', `cannot open the database: ${why}`);
    }
    // Never print the PostgreSQL URL: it may hold a password.
    const database = dbUrl === undefined ? `pglite ${join(dataDir, 'db')}` : 'postgres';
    if (args.flags['json']) out.line(JSON.stringify({ url: served.url, principal, database }));
    else out.line(`aigenora rin control daemon listening on ${served.url} for ${principal} (database: ${database})`);
    const ended = await Promise.race([stopSignal(), served.failed]);
    await served.close();
    // The connection holding the database's one-writer lock was lost: another daemon may own it now.
    if (ended instanceof Error) throw new ServeError('DB_LOCK_LOST', `stopped: the database lock was lost (${show(ended.message.split('\n')[0] ?? '', 200)})`);
    return 0;
  },
};

const WORLDS = ['harbor'];

export const rinHost: Command = {
  name: 'host',
  usage: `aigenora rin host WORLD --owner ID [--controller ID] [--host-id ID] [--tick-ms N] ${CONTROL_USAGE}`,
  help: `Runs a built-in world (${WORLDS.join(', ')}) and attaches it to a control daemon as a host: it registers, publishes
the world and its actors, and executes the actions the daemon delivers until SIGINT or SIGTERM, then unregisters.
harbor: boats (gull, tern, puffin) that load cargo, sail, queue for the slipway, tow and sink; its clock advances
one step every --tick-ms (default 1000). Every boat is owned by --owner and controlled by --controller (default
the owner): the daemon's client principal must be one of them to act. --host-id defaults to harbor-host.
Prints one line once the world is published (--json: {"host_id", "world_id", "control"}).\n${CONTROL_HELP}`,
  flags: { owner: 'string', controller: 'string', 'host-id': 'string', 'tick-ms': 'string', ...CONTROL },
  async run(args, out) {
    const [world, ...extra] = args.positional;
    if (world === undefined || !WORLDS.includes(world)) throw new UsageError(`expected a built-in world: ${WORLDS.join(', ')}`);
    if (extra.length) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
    const owner = str(args.flags, 'owner');
    if (owner === undefined) throw new UsageError("--owner is required: the principal that owns the world's actors");
    const tickMs = intFlag(args.flags, 'tick-ms', 10, 3_600_000) ?? 1000;
    const token = controlToken();
    const baseUrl = client(args.flags).baseUrl;
    const hostId = str(args.flags, 'host-id') ?? 'harbor-host';
    const [{ HarborWorld }, { SerialDispatcher }, { AdapterCoordinator }, { startHostAgent }] = await Promise.all([
      import('../rin/world/harbor.js'),
      import('../rin/hostkit/authority.js'),
      import('../rin/hostkit/coordinator.js'),
      import('../rin/host-agent.js'),
    ]);
    const controller = str(args.flags, 'controller');
    const harbor = new HarborWorld({ owner, ...(controller !== undefined && { controller }) });
    const dispatcher = new SerialDispatcher();
    const coordinator = await AdapterCoordinator.create(harbor, dispatcher);
    // The agent retries what fails inside its loop; say so, one line each, so a stuck host is visible.
    const warn = (e: unknown) => out.warn(show(e instanceof Error ? e.message : String(e), 300));
    const agent = await startHostAgent({ baseUrl, token, coordinator, world: harbor, hostId, instanceId: randomId('instance'), onError: warn });
    if (args.flags['json']) out.line(JSON.stringify({ host_id: hostId, world_id: harbor.worldId, control: baseUrl }));
    else out.line(`aigenora rin host: ${world} published as ${hostId}/${harbor.worldId} at ${baseUrl}`);
    let busy = false;
    const ticker = setInterval(() => {
      if (busy) return;
      busy = true;
      dispatcher
        .dispatch(() => harbor.tick())
        .then(() => agent.refresh())
        .catch(warn)
        .finally(() => (busy = false));
    }, tickMs);
    const ended = await Promise.race([stopSignal(), agent.stopped.then(() => 'stopped')]);
    clearInterval(ticker);
    if (ended === 'stopped') {
      out.refuse('HOST_AGENT_STOPPED', 'the host agent stopped (its lease could not be kept)');
      return 1;
    }
    await agent.stop();
    return 0;
  },
};
