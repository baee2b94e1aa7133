/**
 * Persistence of the rin.control/v2 server in the project's database layer (PGlite or PostgreSQL).
 *
 * In-memory state is authoritative while the server runs; every mutation's changed rows are written
 * in the mutation's transaction before its response. Documents are JSON text; a raw sub-document
 * (RawJson: arguments, normalized arguments, effect attributes, outputs) is kept as its exact text
 * under a `$rin.raw` wrapper, so number lexemes and member order survive a restart byte for byte.
 *
 * One writer per database: PGlite's directory is claimed by a pid file (ts/server/db.ts); on
 * PostgreSQL `acquireRinWriterLock` holds a session advisory lock on a dedicated connection.
 */
import pg from 'pg';
import { RawJson } from '../../crypto/gojson.js';
import type { Db } from '../../server/db.js';
import { RinError } from '../errors.js';
import type {
  ActionOutcome,
  ActionRun,
  ActorEmergencyStop,
  ControllerLease,
  HostAcknowledgement,
  HostControlRequest,
  OperationStatus,
  PolicyResult,
} from '../types.js';
import type { PolicyState } from './policy.js';

export const OPERATION_STORE_VERSION = 'rin.control.operations/v5';
const RAW_TAG = '$rin.raw';

/** One task-timeline snapshot of an operation (the reference's operationTimelineEvent). */
export interface OperationTimelineItem {
  sequence: number;
  kind: string;
  status: OperationStatus;
  reason_code?: string;
  summary?: string;
  at_unix_millis: number;
  terminal: boolean;
  execution_confirmed: boolean;
  reconciliation_pending: boolean;
  delivery_attempts?: number;
  progress_sequence?: number;
  progress?: number;
  cancel_requested?: boolean;
  outcome_code?: string;
  policy_disposition?: PolicyResult;
  policy_reason_code?: string;
  policy_summary?: string;
  matched_rule_ids?: string[];
  confirmation_pending?: boolean;
  effect_count?: number;
}

/** What is stored of one operation; children and the rejection are derived on load. */
export interface OperationRecord {
  request: HostControlRequest;
  status: OperationStatus;
  attempts: number;
  cancel: boolean;
  ack?: HostAcknowledgement;
  run?: ActionRun;
  outcome?: ActionOutcome;
  output?: RawJson;
  created_at_unix_millis: number;
  updated_at_unix_millis: number;
  timeline: OperationTimelineItem[];
  timeline_truncated_before: number;
}

export interface StoredState {
  operations: OperationRecord[];
  timelineSequence: number;
  policyState: PolicyState | undefined;
  controllerLeases: ControllerLease[];
  emergencyStops: ActorEmergencyStop[];
}

/** JSON text of a document with every RawJson kept verbatim. */
export function encodeDoc(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (v instanceof RawJson ? { [RAW_TAG]: v.text } : v));
}

export function decodeDoc<T>(text: string): T {
  return JSON.parse(text, (_key, v: unknown) => {
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      const keys = Object.keys(v);
      const raw = (v as Record<string, unknown>)[RAW_TAG];
      if (keys.length === 1 && typeof raw === 'string') return new RawJson(raw);
    }
    return v;
  }) as T;
}

export const emergencyStopKey = (hostId: string, worldId: string, actorId: string): string => `${hostId}/${worldId}/${actorId}`;

/** Reads everything the server persists. A document that does not parse stops the start loudly. */
export async function loadStoredState(db: Db): Promise<StoredState> {
  const parse = <T>(table: string, id: string, doc: string): T => {
    try {
      return decodeDoc<T>(doc);
    } catch {
      throw new RinError('internal', `stored ${table} row ${id} is not valid JSON`);
    }
  };
  const ops = await db.query<{ operation_id: string; doc: string }>('SELECT operation_id, doc FROM rin_operations ORDER BY operation_id');
  const leases = await db.query<{ lease_id: string; doc: string }>('SELECT lease_id, doc FROM rin_controller_leases ORDER BY lease_id');
  const stops = await db.query<{ key: string; doc: string }>('SELECT key, doc FROM rin_emergency_stops ORDER BY key');
  const meta = new Map((await db.query<{ key: string; value: string }>('SELECT key, value FROM rin_meta')).map((r) => [r.key, r.value]));
  const version = meta.get('version');
  if (version !== undefined && version !== OPERATION_STORE_VERSION) throw new RinError('internal', `operation store version ${version} is not supported`);
  const sequence = Number(meta.get('timeline_sequence') ?? '0');
  if (!Number.isSafeInteger(sequence) || sequence < 0) throw new RinError('internal', 'stored timeline sequence is invalid');
  const policyText = meta.get('policy_state');
  return {
    operations: ops.map((r) => parse<OperationRecord>('rin_operations', r.operation_id, r.doc)),
    timelineSequence: sequence,
    policyState: policyText === undefined ? undefined : parse<PolicyState>('rin_meta', 'policy_state', policyText),
    controllerLeases: leases.map((r) => parse<ControllerLease>('rin_controller_leases', r.lease_id, r.doc)),
    emergencyStops: stops.map((r) => parse<ActorEmergencyStop>('rin_emergency_stops', r.key, r.doc)),
  };
}

export async function saveOperations(tx: Db, records: readonly OperationRecord[], deletedIds: readonly string[]): Promise<void> {
  for (const id of deletedIds) await tx.query('DELETE FROM rin_operations WHERE operation_id = $1', [id]);
  for (const r of records) {
    const req = r.request;
    await tx.query(
      `INSERT INTO rin_operations (operation_id, principal_id, idempotency_key, doc, updated_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (operation_id) DO UPDATE SET doc = EXCLUDED.doc, updated_at = EXCLUDED.updated_at`,
      [req.operation_id, req.principal.id, req.action_request.idempotency_key, encodeDoc(r), r.updated_at_unix_millis],
    );
  }
}

export async function saveMeta(tx: Db, entries: Readonly<Record<string, string>>): Promise<void> {
  for (const [key, value] of Object.entries(entries)) {
    await tx.query('INSERT INTO rin_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value', [key, value]);
  }
}

export async function saveControllerLease(tx: Db, lease: ControllerLease): Promise<void> {
  await tx.query('INSERT INTO rin_controller_leases (lease_id, doc) VALUES ($1, $2) ON CONFLICT (lease_id) DO UPDATE SET doc = EXCLUDED.doc', [lease.lease_id, encodeDoc(lease)]);
}

export async function deleteControllerLease(tx: Db, leaseId: string): Promise<void> {
  await tx.query('DELETE FROM rin_controller_leases WHERE lease_id = $1', [leaseId]);
}

export async function saveEmergencyStop(tx: Db, stop: ActorEmergencyStop): Promise<void> {
  await tx.query('INSERT INTO rin_emergency_stops (key, doc) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET doc = EXCLUDED.doc', [
    emergencyStopKey(stop.host_id, stop.world_id, stop.actor_id),
    encodeDoc(stop),
  ]);
}

/** An arbitrary constant naming the writer lock among the database's advisory locks. */
const WRITER_LOCK = 0x72696e636f;

/**
 * Claims a PostgreSQL database for this server: a session advisory lock on its own connection (a
 * pooled connection could be recycled and drop the lock). A second server gets a clear error.
 * Returns the release function.
 */
export async function acquireRinWriterLock(url: string): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = (await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [WRITER_LOCK])).rows;
    if (rows[0]?.locked !== true) {
      throw new RinError('unavailable', 'another rin control server is using this database; one server per database');
    }
  } catch (e) {
    await client.end().catch(() => {});
    throw e;
  }
  client.on('error', () => {});
  return async () => {
    await client.query('SELECT pg_advisory_unlock($1)', [WRITER_LOCK]).catch(() => {});
    await client.end().catch(() => {});
  };
}
