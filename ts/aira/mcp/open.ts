/**
 * Opening the task behind an MCP session: the authority (one per session, or one shared store), the
 * runtime task, and the scoped bindings read from that task.
 */
import { z } from 'zod';
import type { Crypto } from '../../crypto/backend.js';
import type { Authority } from '../authority.js';
import { startTask, type AiraTask, type TaskInput } from '../runtime.js';
import type { Envelope } from '../schema.js';
import type { BindingOptions, BindingSnapshot, BoundFacts } from './bindings.js';
import type { AiraMcpSessionOptions } from './server.js';

/** An authority for one session and how to let go of it when the session ends. */
export interface SessionAuthority {
  readonly authority: Authority;
  release(): Promise<void>;
}

export interface TaskSessionOptions {
  crypto: Crypto;
  task: TaskInput;
  authority: () => Promise<SessionAuthority>;
  /** Scoped bound tools (M49): how many at most; 0 or absent: none. */
  bindCapabilities?: number;
  /** Their time to live (default 10 minutes). */
  bindTtlMs?: number;
  /** Clock for the TTL and the runtime's `millis` budget (default: wall clock for TTLs only). */
  now?: () => number;
}

export const DEFAULT_BIND_TTL_MS = 600_000;

/**
 * The facts a bound tool is checked against, as the task knows them now; `operationCatalog` stands in
 * for the capsule's until the task has read the manifest.
 */
export function bindingSnapshot(task: AiraTask, operationCatalog: string | null = null): BindingSnapshot {
  const c = task.capsule();
  return {
    revision: task.head,
    runtimeSnapshot: c.runtimeSnapshot,
    intentFrameHash: c.intentFrameHash,
    grantId: c.grant.grantId,
    operationCatalog: c.operationCatalog ?? operationCatalog,
    acceptanceAssertions: c.intentFrame.acceptanceAssertions.map((a) => a.id),
  };
}

/**
 * Refuses a stale bound call through the runtime, so it is in the trace like any refusal; nothing is
 * dispatched and no state changes.
 */
function refuseStaleBinding(task: AiraTask, requestId: string, facts: BoundFacts, why: string): Promise<Envelope> {
  return task.refuse({
    requestId,
    op: 'model.proposePatch',
    code: 'BOUND_CAPABILITY_STALE',
    message: `the binding of ${facts.capability} is stale: ${why}; describe it again`,
    next: { op: 'catalog.describe', capability: facts.capability },
    details: {
      affected: [facts.capability],
      expected: { revision: facts.revision, catalogHash: facts.catalogHash, runtimeSnapshot: facts.runtimeSnapshot },
      actual: { revision: task.head },
    },
  });
}

const ManifestCatalog = z.object({ data: z.object({ operationCatalog: z.string().min(1).max(200) }) });

/**
 * The authority's operation catalog, read once when the session opens, or null. A plan binds it, and a
 * capsule names it only after interface.manifest ran: without it here, a model that starts with
 * catalog.search (as the protocol's sequence does) could not bind a plan. The read goes to the authority
 * directly, as the runtime's own plan check does, so it is no meta-op and leaves no trace event; if it
 * fails the session still opens and the instructions ask for interface.manifest first.
 */
async function readOperationCatalog(authority: Authority, task: AiraTask): Promise<string | null> {
  try {
    const r = ManifestCatalog.safeParse(await authority.manifest({ taskId: task.taskId, branch: task.capsule().branch, requestId: 'mcp.session.manifest' }));
    return r.success ? r.data.data.operationCatalog : null;
  } catch {
    return null;
  }
}

/** Opens the authority and the task of one session; the task's end releases the authority. */
export async function openTaskSession(opts: TaskSessionOptions): Promise<AiraMcpSessionOptions & { task: AiraTask; release(): Promise<void> }> {
  const held = await opts.authority();
  let task: AiraTask;
  try {
    task = await startTask({ authority: held.authority, crypto: opts.crypto, task: opts.task, ...(opts.now !== undefined && { now: opts.now }) });
  } catch (e) {
    await held.release();
    throw e;
  }
  const operationCatalog = await readOperationCatalog(held.authority, task);
  const n = opts.bindCapabilities ?? 0;
  const now = opts.now ?? Date.now;
  const bindings: BindingOptions | undefined =
    n > 0
      ? {
          max: n,
          ttlMs: opts.bindTtlMs ?? DEFAULT_BIND_TTL_MS,
          now,
          snapshot: () => bindingSnapshot(task, operationCatalog),
          refuseStale: (requestId, facts, why) => refuseStaleBinding(task, requestId, facts, why),
        }
      : undefined;
  return { task, operationCatalog, ...(bindings !== undefined && { bindings }), release: () => held.release() };
}
