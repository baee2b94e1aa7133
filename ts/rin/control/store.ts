/**
 * Persistence of the rin.control/v2 server in the project's database layer (PGlite or PostgreSQL).
 *
 * In-memory state is authoritative while the server runs; every mutation's changed rows are written
 * in the mutation's transaction before its response. Documents are JSON text; a raw sub-document
 * (RawJson: arguments, normalized arguments, effect attributes, outputs) is kept as its exact text
 * under a `$rin.raw` wrapper, so number lexemes and member order survive a restart byte for byte.
 *
 * The core's controller leases and emergency stops live in their own tables of the same database
 * (migrations.ts) and are written and loaded by the core.
 */
import { RawJson } from '../../crypto/gojson.js';
import type { Db } from '../../server/db.js';
import { RinError } from '../errors.js';
import type { ActionOutcome, ActionRun, HostAcknowledgement, HostControlRequest, OperationStatus, PolicyResult } from '../types.js';
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
  /** The rin_meta rows as stored. */
  meta: ReadonlyMap<string, string>;
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

/** Reads the operations half's state. A document that does not parse stops the start loudly. */
export async function loadStoredState(db: Db): Promise<StoredState> {
  const parse = <T>(table: string, id: string, doc: string): T => {
    try {
      return decodeDoc<T>(doc);
    } catch {
      throw new RinError('internal', `stored ${table} row ${id} is not valid JSON`);
    }
  };
  const ops = await db.query<{ operation_id: string; doc: string }>('SELECT operation_id, doc FROM rin_operations ORDER BY operation_id');
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
    meta,
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
