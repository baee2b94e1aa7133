/**
 * Storage of the document authority. Revisions, candidates and validation tokens are immutable records
 * named by their content id; the only mutable state is a set of refs (name → value), changed by
 * compare-and-swap. Refs the authority uses:
 *   `head`            the user head (publish moves it)
 *   `task/<taskId>`   the task branch head (commit and revert move it)
 *   `base/<taskId>`   the user head the branch was cut from / last published
 *   `cand/<taskId>`   the task's live candidate (a new proposal replaces it)
 *   `vtok/<taskId>`   the live validation token, `void`, or `used:<token>` once committed
 * A candidate or token is task-local: abandoning a task leaves the revisions and `head` untouched.
 *
 * A store keeps records as JSON text (as the database does), so nothing read back shares structure
 * with what was written; the authority re-checks what it reads.
 */
import type { AiraDoc } from './model.js';
import type { PlanStep } from '../schema.js';

export type RevisionOp =
  | { readonly kind: 'seed'; readonly name: string }
  | { readonly kind: 'commit'; readonly candidateId: string }
  | { readonly kind: 'revert'; readonly toRevision: string };

export interface RevisionRecord {
  /** `rev:sha256:` over every other member. */
  readonly id: string;
  readonly parent: string | null;
  /** Number of ancestors. */
  readonly seq: number;
  readonly doc: AiraDoc;
  readonly op: RevisionOp;
}

export interface CandidateRecord {
  /** `cand:sha256:` over {taskId, baseRevision, steps}. */
  readonly id: string;
  readonly taskId: string;
  readonly baseRevision: string;
  /**
   * The plan's steps (query steps too: an authoring step may depend on one). The document they produce is not stored: the authority lowers them
   * on the base again when it needs it, so a stored candidate cannot claim a document of its own.
   */
  readonly steps: readonly PlanStep[];
}

export interface Evidence {
  readonly assertion: string;
  readonly passed: boolean;
  readonly detail?: unknown;
}

export interface TokenRecord {
  /** `vtok:sha256:` over {candidateId, baseRevision, evidence}. */
  readonly id: string;
  readonly taskId: string;
  readonly candidateId: string;
  readonly baseRevision: string;
  readonly evidence: readonly Evidence[];
}

export interface RefUpdate {
  readonly name: string;
  /** The value the ref must hold now; `null`: the ref must not exist. */
  readonly expected: string | null;
  readonly next: string;
}

export interface DocStore {
  readonly kind: string;
  getRef(name: string): Promise<string | null>;
  /**
   * All or nothing: stores `revision` (if given and new) and applies every update iff every ref holds
   * its expected value. `false` (nothing written) when one does not.
   */
  swap(updates: readonly RefUpdate[], revision?: RevisionRecord): Promise<boolean>;
  getRevision(id: string): Promise<RevisionRecord | null>;
  /** Stores a candidate (same id twice: kept once) and makes it the task's live candidate, voiding the live token. */
  putCandidate(candidate: CandidateRecord): Promise<void>;
  getCandidate(id: string): Promise<CandidateRecord | null>;
  putToken(token: TokenRecord): Promise<void>;
  getToken(id: string): Promise<TokenRecord | null>;
  close(): Promise<void>;
}

export const refs = {
  head: 'head',
  branch: (taskId: string): string => `task/${taskId}`,
  base: (taskId: string): string => `base/${taskId}`,
  candidate: (taskId: string): string => `cand/${taskId}`,
  token: (taskId: string): string => `vtok/${taskId}`,
} as const;

export const VOID_TOKEN = 'void';

/** A browser-safe store in memory: the default, and what the corpus runs on. */
export class MemoryDocStore implements DocStore {
  readonly kind = 'memory';
  private readonly refMap = new Map<string, string>();
  private readonly revisions = new Map<string, string>();
  private readonly candidates = new Map<string, string>();
  private readonly tokens = new Map<string, string>();
  private closed = false;

  private live(): void {
    if (this.closed) throw new Error('document store is closed');
  }

  private read<T>(map: Map<string, string>, id: string): T | null {
    this.live();
    const t = map.get(id);
    return t === undefined ? null : (JSON.parse(t) as T);
  }

  async getRef(name: string): Promise<string | null> {
    this.live();
    return this.refMap.get(name) ?? null;
  }

  async swap(updates: readonly RefUpdate[], revision?: RevisionRecord): Promise<boolean> {
    this.live();
    // No await between the check and the writes: one step of the event loop, so atomic.
    for (const u of updates) if ((this.refMap.get(u.name) ?? null) !== u.expected) return false;
    if (revision !== undefined && !this.revisions.has(revision.id)) this.revisions.set(revision.id, JSON.stringify(revision));
    for (const u of updates) this.refMap.set(u.name, u.next);
    return true;
  }

  async getRevision(id: string): Promise<RevisionRecord | null> {
    return this.read<RevisionRecord>(this.revisions, id);
  }

  async putCandidate(candidate: CandidateRecord): Promise<void> {
    this.live();
    if (!this.candidates.has(candidate.id)) this.candidates.set(candidate.id, JSON.stringify(candidate));
    this.refMap.set(refs.candidate(candidate.taskId), candidate.id);
    this.refMap.set(refs.token(candidate.taskId), VOID_TOKEN);
  }

  async getCandidate(id: string): Promise<CandidateRecord | null> {
    return this.read<CandidateRecord>(this.candidates, id);
  }

  async putToken(token: TokenRecord): Promise<void> {
    this.live();
    if (!this.tokens.has(token.id)) this.tokens.set(token.id, JSON.stringify(token));
  }

  async getToken(id: string): Promise<TokenRecord | null> {
    return this.read<TokenRecord>(this.tokens, id);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
