// Helpers of the rin authority tests: a plan of one step, a context, and one action prepared up to
// validation (propose must succeed), as a model would drive them.
import { afterAll, beforeAll, expect } from 'vitest';
import type { Authority, AuthorityContext } from '../../ts/aira/authority.js';
import { HARBOR_EFFECTS, openRinAuthority, type RinAuthorityOptions } from '../../ts/aira/rin/index.js';
import { harborRinPolicy } from '../../ts/aira/rin/local-policy.js';
import type { Plan, PlanStep } from '../../ts/aira/schema.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { RinControlClient } from '../../ts/rin/client.js';
import { attachHarbor, RIN_TOKEN, type AttachedHarbor } from '../interop/rin-harness.js';

/**
 * The `op:toState` path of the harbor load task driven to completion (search, describe, an observing
 * read, then the transaction and its read-back), written by hand from the matrix.
 */
export const HARBOR_LOAD_PATH = [
  'catalog.search:discover',
  'catalog.describe:describe',
  'model.read:describe',
  'model.proposePatch:propose',
  'model.preview:preview',
  'model.validate:validate',
  'model.commit:commit',
  'model.read:readBack',
] as const;

/** The grant the test authorities may approve confirmations under. */
export const GRANT_APPROVES = 'grant:approver';

export interface RinDaemon {
  readonly url: string;
  stop(): Promise<void>;
  /** The daemon's output, for a failure's message. */
  output?(): string;
}

export interface RinWorld {
  readonly url: string;
  readonly attached: AttachedHarbor;
  readonly client: RinControlClient;
  output(): string;
  /** A rin authority on `actor` with the harbor's declared effects and policy, closed after the file. */
  authority(actor: string, more?: Partial<RinAuthorityOptions>): Authority;
}

/**
 * A control daemon from `start` with the harbor attached through our host agent and a client, started
 * before the enclosing suite's tests and stopped after them (one daemon for a file: PGlite is slow to start).
 */
export function useRinWorld(start: () => Promise<RinDaemon>): RinWorld {
  let daemon: RinDaemon | undefined;
  let attached: AttachedHarbor | undefined;
  let client: RinControlClient | undefined;
  const opened: Authority[] = [];
  const crypto = getCrypto();
  beforeAll(async () => {
    daemon = await start();
    attached = await attachHarbor(daemon.url);
    client = new RinControlClient({ baseUrl: daemon.url, token: RIN_TOKEN });
  });
  afterAll(async () => {
    for (const a of opened) await a.close();
    await attached?.stop();
    await daemon?.stop();
  });
  const ready = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('the rin world is not started yet');
    return v;
  };
  return {
    get url() {
      return ready(daemon).url;
    },
    get attached() {
      return ready(attached);
    },
    get client() {
      return ready(client);
    },
    output: () => `${daemon?.output?.().slice(-4000) ?? ''}\n--- host agent errors:\n${(attached?.errors ?? []).map((e) => e.message).join('\n')}`,
    authority(actor, more = {}) {
      const a = openRinAuthority({
        client: ready(client),
        crypto,
        world: { host_id: 'harbor-host', world_id: 'harbor' },
        actor,
        effects: HARBOR_EFFECTS,
        policy: harborRinPolicy(),
        approvingGrants: [GRANT_APPROVES],
        advance: () => ready(attached).tick(),
        waitMillis: 200,
        ...more,
      });
      opened.push(a);
      return a;
    },
  };
}

export const H = (prefix: string): string => `${prefix}:sha256:${'0'.repeat(64)}`;

let seq = 0;
export const ctx = (taskId = 'task:sha256:' + 'a'.repeat(64)): AuthorityContext => ({ taskId, branch: `task/${taskId}`, requestId: `r${++seq}` });

export function plan(baseRevision: string, steps: Array<Partial<PlanStep> & Pick<PlanStep, 'capability' | 'args'>>, grantId = 'grant:local'): Plan {
  return {
    baseRevision,
    intentFrameHash: H('intent'),
    bindings: { operationCatalog: 'aira.rin.ops/1', discoveryCatalogHash: H('catalog'), runtimeSnapshot: H('snapshot'), grantId },
    steps: steps.map((s, i) => ({ id: `s${i + 1}`, mode: 'authoring', ...s })),
    acceptanceAssertions: [],
    estimatedEffects: [],
    estimatedRisk: 'low',
  };
}

/** Propose and validate one action at the world's head now; propose must succeed. */
export async function prepare(a: Authority, capability: string, args: Record<string, unknown>, grantId?: string, c = ctx()) {
  const head = await a.head(c);
  const proposed = await a.propose(c, plan(head, [{ capability: capability as PlanStep['capability'], args }], grantId));
  expect(proposed.diagnostics).toEqual([]);
  const candidateId = proposed.data.candidateId;
  const validated = await a.validate(c, candidateId);
  return { head, candidateId, validated, ctx: c };
}

/** Prepare, expect validation to pass, commit. */
export async function commitAction(a: Authority, capability: string, args: Record<string, unknown>, grantId?: string) {
  const p = await prepare(a, capability, args, grantId);
  expect(p.validated.data.passed, JSON.stringify(p.validated.diagnostics)).toBe(true);
  const committed = await a.commit(p.ctx, { requestId: 'commit', candidateId: p.candidateId, validationToken: p.validated.data.validationToken! });
  return { ...p, committed };
}
