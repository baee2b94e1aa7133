/**
 * Storage of the operations half: which rows changed since the last write, writing them in
 * `state.mutate`'s transaction (`flush`), writing them again when that transaction did not commit,
 * and loading the stored operations at start with R96's restart rules.
 */
import type { Db } from '../../server/db.js';
import { RinError } from '../errors.js';
import type { OperationStatus } from '../types.js';
import { compareIds, restoreOperation } from './operation-state.js';
import type { OperationTable } from './operation-table.js';
import { loadStoredState, saveMeta, saveOperations, type OperationRecord } from './store.js';

/** What the writes read from the operations they track. */
export interface WriteSource {
  has(id: string): boolean;
  record(id: string): OperationRecord | undefined;
  /** Each rin_meta row's text as it stands now. */
  meta(): Record<string, string>;
}

/** The rows changed since the last write, and the batch of the write in progress. */
export class PendingWrites {
  private readonly dirty = new Set<string>();
  private readonly deleted = new Set<string>();
  private metaDirty = false;
  /** The batch of the flush in progress, kept until its transaction commits or fails. */
  private readonly writing = { ids: new Set<string>(), deleted: new Set<string>() };
  /** Each rin_meta row's text as last committed. */
  private readonly metaWritten = new Map<string, string>();

  constructor(private readonly source: WriteSource) {}

  changed(id: string): void {
    this.dirty.add(id);
  }

  /** An operation pruned: its row is deleted. */
  removed(id: string): void {
    this.dirty.delete(id);
    this.deleted.add(id);
  }

  /** An operation taken back before its row was ever written. */
  forget(id: string): void {
    this.dirty.delete(id);
  }

  metaChanged(): void {
    this.metaDirty = true;
  }

  /** The meta rows as loaded: only what moves from them is written. */
  loaded(meta: Iterable<[string, string]>): void {
    for (const [key, value] of meta) this.metaWritten.set(key, value);
  }

  /** Operation rows waiting to be written. */
  get pending(): number {
    return this.dirty.size;
  }

  hasDirty(): boolean {
    return this.dirty.size > 0 || this.deleted.size > 0 || this.metaDirty;
  }

  async flush(tx: Db): Promise<void> {
    const records: OperationRecord[] = [];
    for (const id of this.dirty) {
      const record = this.source.record(id);
      if (record !== undefined) records.push(record);
    }
    const batch = this.writing;
    for (const id of this.dirty) batch.ids.add(id);
    for (const id of this.deleted) batch.deleted.add(id);
    const deleted = [...this.deleted];
    const meta = this.metaDirty || records.length > 0 || deleted.length > 0;
    this.dirty.clear();
    this.deleted.clear();
    this.metaDirty = false;
    if (!meta) return;
    await saveOperations(tx, records, deleted);
    // Only the meta rows whose text moved are written (the version is written once).
    const current = this.source.meta();
    const changed: Record<string, string> = {};
    for (const [key, value] of Object.entries(current)) {
      if (this.metaWritten.get(key) !== value) changed[key] = value;
    }
    await saveMeta(tx, changed);
    for (const [key, value] of Object.entries(changed)) this.metaWritten.set(key, value);
  }

  /** A batch that was not committed is written again with the next one; every meta row too. */
  afterFlush(committed: boolean): void {
    const batch = this.writing;
    if (!committed) {
      for (const id of batch.ids) if (this.source.has(id)) this.dirty.add(id);
      for (const id of batch.deleted) if (!this.source.has(id)) this.deleted.add(id);
      this.metaWritten.clear();
      this.metaDirty = true;
    }
    batch.ids.clear();
    batch.deleted.clear();
  }
}

/** Loads the stored operations into an empty table and applies the restart rules (R96). */
export async function restoreOperations(table: OperationTable, db: Db): Promise<void> {
  const stored = await loadStoredState(db);
  table.timelineSequence = stored.timelineSequence;
  table.writes.loaded(stored.meta);
  const now = table.now();
  const allowIds = new Set<string>();
  const persistedStatus = new Map<string, OperationStatus>();
  for (const record of stored.operations) {
    const op = restoreOperation(record);
    const id = op.request.operation_id;
    if (table.ops.has(id) || table.requests.has(op.idempotency)) throw new RinError('internal', `stored operation ${id} is duplicated`);
    table.ops.set(id, op);
    table.requests.set(op.idempotency, id);
    persistedStatus.set(id, record.status);
    const decision = op.request.policy_decision;
    if (decision.result === 'allow') allowIds.add(decision.decision_id);
    for (const item of op.timeline) {
      if (item.sequence > table.timelineSequence) throw new RinError('internal', 'stored timeline sequence is behind its events');
    }
  }
  for (const op of table.ops.values()) {
    const parentId = op.request.parent_operation_id;
    if (parentId === undefined) continue;
    const parent = table.ops.get(parentId);
    if (
      parent === undefined ||
      parent.request.host_id !== op.request.host_id ||
      parent.request.world_id !== op.request.world_id ||
      parent.request.actor_id !== op.request.actor_id ||
      parent.request.principal.id !== op.request.principal.id ||
      parent.request.binding.controller_lease_id !== op.request.binding.controller_lease_id
    ) {
      throw new RinError('internal', `stored operation ${op.request.operation_id} has an invalid parent`);
    }
    parent.children.push(op.request.operation_id);
  }
  for (const op of table.ops.values()) {
    op.children.sort((a, b) => table.ops.get(a)!.createdAt - table.ops.get(b)!.createdAt || compareIds(a, b));
  }
  if (stored.policyState !== undefined) table.policy.restoreState(stored.policyState, allowIds);
  for (const op of table.ops.values()) {
    if (op.request.policy_decision.result !== 'allow') continue;
    if (op.status === 'succeeded' || op.status === 'outcome-unknown') table.finalizePolicy(op, true);
    else if (op.status === 'failed' || op.status === 'cancelled' || op.status === 'interrupted' || op.status === 'stale' || op.status === 'rejected')
      table.finalizePolicy(op, false);
  }
  for (const [id, op] of table.ops) {
    if (op.status !== persistedStatus.get(id)) {
      op.updatedAt = now;
      table.markDirty(op);
    }
    const before = op.timeline.length;
    table.recordTimeline(op);
    if (op.timeline.length !== before) table.markDirty(op);
  }
  if (table.writes.pending > 0) {
    let committed = false;
    try {
      await db.transaction((tx) => table.writes.flush(tx));
      committed = true;
    } finally {
      table.writes.afterFlush(committed);
    }
  }
}
