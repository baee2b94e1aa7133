/**
 * Scoped bindings (M49): after `catalog.describe`, a described capability may be offered as a typed
 * convenience tool `bound.<capability name>`. It is bound to this session, the revision the describe saw,
 * the catalog hash of the search that found it and the task's runtime snapshot, and lives for a TTL; at
 * most `max` exist. A call only builds a one-step plan and sends it through `model.proposePatch`, so the
 * runtime admits and checks it like any other proposal: no operation the meta-tools lack. Once any bound
 * fact has moved (or the TTL passed) it answers `BOUND_CAPABILITY_STALE`, never the latest instead.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import { z } from 'zod';
import { CapabilityId, Envelope, HashId, Name, Risk, type MetaOp, type Plan } from '../schema.js';
import type { McpTask } from './server.js';

/** The task facts a binding is checked against, read from the task whenever needed. */
export interface BindingSnapshot {
  /** The task branch head the runtime knows. */
  readonly revision: string | null;
  readonly runtimeSnapshot: string;
  readonly intentFrameHash: string;
  readonly grantId: string;
  /** Known once the manifest was read (interface.manifest, or the runtime's own plan check). */
  readonly operationCatalog: string | null;
  readonly acceptanceAssertions: readonly string[];
}

export interface BoundFacts {
  readonly capability: string;
  readonly revision: string;
  readonly catalogHash: string;
  readonly runtimeSnapshot: string;
  readonly expiresAt: number;
}

export interface BindingOptions {
  /** The most bound tools at once (1–20). */
  readonly max: number;
  readonly ttlMs: number;
  readonly now: () => number;
  readonly snapshot: () => BindingSnapshot;
  /**
   * The refusal of a stale bound call, as an envelope the runtime records (nothing is dispatched).
   * `why` names the first fact that moved.
   */
  readonly refuseStale: (requestId: string, facts: BoundFacts, why: string) => Promise<Envelope>;
}

export const MAX_BOUND_TOOLS = 20;
export const BOUND_PREFIX = 'bound.';

const Described = z.object({
  id: CapabilityId,
  title: z.string().optional(),
  risk: Risk,
  mode: z.enum(['query', 'authoring']),
  inputSchema: z.record(z.string(), z.unknown()),
});
const Searched = z.object({ catalogHash: HashId });
/** What a bound tool takes (the server lists every problem of a refused one against it). */
export const BoundInput = z.strictObject({ requestId: Name, args: z.record(z.string(), z.unknown()) });
const REQUEST_ID_SCHEMA = {
  ...toJsonSchemaCompat(Name, { pipeStrategy: 'input' }),
  description: 'A name for this call, new in this session (letters, digits and . _ : -); it is the requestId of the model.proposePatch this call makes.',
};

interface Bound {
  readonly name: string;
  readonly facts: BoundFacts;
  readonly tool: Tool;
  readonly risk: Risk;
  readonly mode: 'query' | 'authoring';
}

export interface BoundTool {
  call(input: unknown): Promise<Envelope>;
}

const capabilityName = (id: string) => id.slice('cap:'.length, id.lastIndexOf('@'));

export class Bindings {
  readonly #opts: BindingOptions;
  readonly #task: McpTask;
  readonly #bound = new Map<string, Bound>();
  #catalogHash: string | null = null;

  constructor(opts: BindingOptions, task: McpTask) {
    if (!Number.isInteger(opts.max) || opts.max < 1 || opts.max > MAX_BOUND_TOOLS) throw new RangeError(`bound tools: max must be 1..${MAX_BOUND_TOOLS}`);
    this.#opts = opts;
    this.#task = task;
  }

  tools(): Tool[] {
    return [...this.#bound.values()].map((b) => b.tool);
  }

  /** Learns from a meta-op's answer; true when the tool list changed. */
  observe(op: MetaOp, env: Envelope): boolean {
    if (env.status !== 'success') return false;
    if (op === 'catalog.search') {
      const s = Searched.safeParse(env.data);
      if (s.success) this.#catalogHash = s.data.catalogHash;
      return false;
    }
    // A plan binds the operation catalog and the discovery catalog hash: without both nothing can be bound.
    if (op !== 'catalog.describe' || this.#catalogHash === null || env.observedRevision === null || this.#opts.snapshot().operationCatalog === null)
      return false;
    const d = Described.safeParse(env.data);
    if (!d.success) return false;
    const name = BOUND_PREFIX + capabilityName(d.data.id);
    if (!this.#bound.has(name) && this.#bound.size >= this.#opts.max) return false;
    const facts: BoundFacts = {
      capability: d.data.id,
      revision: env.observedRevision,
      catalogHash: this.#catalogHash,
      runtimeSnapshot: this.#opts.snapshot().runtimeSnapshot,
      expiresAt: this.#opts.now() + this.#opts.ttlMs,
    };
    const tool: Tool = {
      name,
      description: `${d.data.title ?? d.data.id}: builds a one-step plan of ${d.data.id} and proposes it (model.proposePatch). Bound to revision ${facts.revision}; stale after it moves.`,
      inputSchema: {
        type: 'object',
        properties: {
          requestId: REQUEST_ID_SCHEMA,
          args: { description: `The arguments of ${d.data.id}, as its contract (catalog.describe) declares them.`, ...d.data.inputSchema },
        },
        required: ['requestId', 'args'],
        additionalProperties: false,
      } as Tool['inputSchema'],
      outputSchema: toJsonSchemaCompat(Envelope, { pipeStrategy: 'output' }) as Tool['outputSchema'],
    };
    this.#bound.set(name, { name, facts, tool, risk: d.data.risk, mode: d.data.mode });
    return true;
  }

  find(name: string): BoundTool | undefined {
    const b = this.#bound.get(name);
    if (b === undefined) return undefined;
    return { call: (input) => this.#call(b, input) };
  }

  /** The first bound fact that no longer holds, or null. */
  staleness(facts: BoundFacts): string | null {
    if (this.#opts.now() >= facts.expiresAt) return 'its time to live passed';
    const now = this.#opts.snapshot();
    if (now.revision !== facts.revision) return `the revision moved to ${now.revision ?? 'none'}`;
    if (now.runtimeSnapshot !== facts.runtimeSnapshot) return 'the runtime snapshot changed';
    if (this.#catalogHash !== facts.catalogHash) return 'the catalog hash changed';
    return null;
  }

  async #call(b: Bound, input: unknown): Promise<Envelope> {
    const parsed = BoundInput.safeParse(input);
    // A malformed bound call is refused by the runtime's own input check, as the meta-tool would be.
    if (!parsed.success) return this.#task.call({ op: 'model.proposePatch', input });
    const { requestId, args } = parsed.data;
    const why = this.staleness(b.facts);
    if (why !== null) return this.#opts.refuseStale(requestId, b.facts, why);
    const snap = this.#opts.snapshot();
    const plan: Plan = {
      baseRevision: b.facts.revision,
      intentFrameHash: snap.intentFrameHash,
      bindings: {
        operationCatalog: snap.operationCatalog ?? '',
        discoveryCatalogHash: b.facts.catalogHash,
        runtimeSnapshot: b.facts.runtimeSnapshot,
        grantId: snap.grantId,
      },
      steps: [{ id: 'step-1', capability: b.facts.capability, mode: b.mode, args }],
      acceptanceAssertions: [...snap.acceptanceAssertions],
      estimatedEffects: [b.facts.capability],
      estimatedRisk: b.risk,
    };
    return this.#task.call({ op: 'model.proposePatch', input: { requestId, plan } });
  }
}
