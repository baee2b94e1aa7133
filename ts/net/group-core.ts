/**
 * What a group member is, whichever transport carries its group (libp2p: group.ts; the reference's
 * iroh wire with a registry: group-iroh.ts): its replica, transcript and player (MemberCore), the
 * protocol it plays, how a run ends, the JSON lines both drivers speak, and the process clock they hand
 * their leader hub (group-hub.ts). Nothing here opens a connection.
 */
import { existsSync, readFileSync, truncateSync } from 'node:fs';
import { join as joinPath } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { toHex } from '../crypto/encoding.js';
import type { GroupAutoplay, HooksModule } from '../hooks/types.js';
import type { Spec } from '../spec/types.js';
import { declaredTurnTimeoutMs } from '../group/leader.js';
import { GroupReplica, type ReplicaRefusal, type TranscriptEntry } from '../group/member.js';
import { groupProofOf } from '../group/proof.js';
import { GroupSessionRecord, type GroupTranscriptHeader } from '../group/session-dir.js';
import type { HubClock } from './group-hub.js';
import type { LineLink } from './group-follower.js';

export interface GroupProtocol {
  spec: Spec;
  specText: string;
  protocolId: string;
  hooks: HooksModule;
}

export type GroupEvent = (type: string, data: Record<string, unknown>) => void;

export class GroupNetError extends Error {
  constructor(
    readonly code: 'GROUP_NET_REFUSED' | 'GROUP_NET_UNREACHABLE' | 'GROUP_NET_PROTOCOL' | 'GROUP_NET_FAULT' | 'GROUP_NET_RESUME',
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = 'GroupNetError';
  }
}

/** Reports an event; a reporting callback that throws must not end a group. */
export function safeEmit(on: GroupEvent | undefined, type: string, data: Record<string, unknown>): void {
  try {
    on?.(type, data);
  } catch {
    // reporting must not end a group
  }
}

/** A group line as a JSON object, or undefined for anything else. */
export const parseLine = (line: string): Record<string, unknown> | undefined => {
  try {
    const v = JSON.parse(line) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

/** The next line as a JSON object; silence, a departure or anything else is a protocol error (about the awaited `what`, when named). */
export async function nextLine(t: LineLink, ms: number, what?: string): Promise<Record<string, unknown>> {
  const r = await t.recv(ms);
  if (r.line === null) {
    const why = what
      ? r.timedOut
        ? `no ${what} in time`
        : `the peer left before its ${what}`
      : r.timedOut
        ? 'the peer said nothing in time'
        : 'the peer left';
    throw new GroupNetError('GROUP_NET_PROTOCOL', why);
  }
  const v = parseLine(r.line);
  if (!v) throw new GroupNetError('GROUP_NET_PROTOCOL', what ? `the ${what} is not a JSON object` : 'a line is not a JSON object');
  return v;
}

/** Sends one JSON line; false when the channel can no longer take it. */
export const sendLine = (t: LineLink, v: unknown): boolean => {
  try {
    t.send(JSON.stringify(v));
    return true;
  } catch {
    return false;
  }
};

/** The member's replica, transcript and player, whichever process (leader or member) holds it. */
export class MemberCore {
  clientSeq = 0;
  pending = false;
  fault: string | undefined;
  /** The replica's refusal code for the envelope that faulted this member. */
  faultCode: ReplicaRefusal | undefined;
  private last: Record<string, unknown> | undefined;
  private refusedInARow = 0;

  private constructor(
    private readonly crypto: Crypto,
    readonly seed: Uint8Array,
    readonly publicKey: string,
    readonly replica: GroupReplica,
    readonly record: GroupSessionRecord,
    private readonly autoplay: GroupAutoplay,
    private readonly random: () => number,
  ) {}

  static create(
    crypto: Crypto,
    seed: Uint8Array,
    dir: string,
    header: GroupTranscriptHeader,
    specText: string,
    autoplay: GroupAutoplay,
    random: () => number,
  ): MemberCore {
    const replica = new GroupReplica({
      crypto,
      groupId: header.group_id,
      viewerPublicKey: header.member_public_key,
      leaderPublicKey: header.leader_public_key,
      leaderEpoch: header.leader_epoch,
    });
    return new MemberCore(crypto, seed, header.member_public_key, replica, new GroupSessionRecord(dir, header, specText, true), autoplay, random);
  }

  /** Rebuilds a member from its own session directory, after a crash: the transcript replays into a fresh replica. */
  static resume(crypto: Crypto, seed: Uint8Array, dir: string, autoplay: GroupAutoplay, random: () => number): MemberCore {
    const path = joinPath(dir, 'transcript.jsonl');
    if (!existsSync(path)) throw new GroupNetError('GROUP_NET_RESUME', `${dir} holds no transcript.jsonl`);
    let text = readFileSync(path, 'utf8');
    // A crash can cut the line being written: that entry was never acted on, so it is dropped.
    if (!text.endsWith('\n')) {
      text = text.slice(0, text.lastIndexOf('\n') + 1);
      truncateSync(path, Buffer.byteLength(text));
    }
    const lines = text.split('\n').filter((l) => l.length > 0);
    let header: GroupTranscriptHeader;
    let entries: TranscriptEntry[];
    try {
      header = JSON.parse(lines[0] ?? '') as GroupTranscriptHeader;
      entries = lines.slice(1).map((l) => JSON.parse(l) as TranscriptEntry);
    } catch {
      throw new GroupNetError('GROUP_NET_RESUME', `${path} is not a group transcript`);
    }
    const pk = toHex(crypto.ed25519PublicKey(seed));
    if (header._group_transcript !== 1 || header.member_public_key !== pk)
      throw new GroupNetError('GROUP_NET_RESUME', `${path} is not this identity's group transcript`);
    const replica = new GroupReplica({
      crypto,
      groupId: header.group_id,
      viewerPublicKey: pk,
      leaderPublicKey: header.leader_public_key,
      leaderEpoch: header.leader_epoch,
    });
    for (const [i, e] of entries.entries()) {
      if (e.kind === 'epoch') replica.advanceEpoch(e.leader_public_key, e.leader_epoch);
      else if (replica.apply(e.envelope, { bootstrap: e.bootstrap }).status !== 'applied')
        throw new GroupNetError('GROUP_NET_RESUME', `${path} entry ${i + 1} does not replay`);
    }
    const record = GroupSessionRecord.reopen(dir, header, entries.length);
    const core = new MemberCore(crypto, seed, pk, replica, record, autoplay, random);
    core.catchUpClientSeq();
    return core;
  }

  get completed(): boolean {
    return this.replica.checkpoint?.['completed'] === true;
  }

  /** Applies an envelope from the leader; a refused one is this member's proof of a fault, if it makes one. */
  apply(env: unknown, bootstrap: boolean): boolean {
    const r = this.replica.apply(env, { bootstrap });
    if (r.status === 'ignored') return true;
    if (r.status === 'refused') {
      this.fault = `${r.code}: ${r.reason}`;
      this.faultCode = r.code;
      const proof = this.last && typeof env === 'object' && env !== null ? groupProofOf(this.crypto, this.last, env as Record<string, unknown>) : undefined;
      if (proof) this.record.proof(proof);
      return false;
    }
    this.last = env as Record<string, unknown>;
    this.record.entry({ kind: 'envelope', bootstrap, envelope: env as Record<string, unknown> });
    this.catchUpClientSeq();
    return true;
  }

  /** The leader's checkpoint records this member's last accepted client_seq; never count below it. */
  private catchUpClientSeq(): void {
    const seqs = (this.replica.checkpoint?.['last_client_seq'] ?? {}) as Record<string, number>;
    this.clientSeq = Math.max(this.clientSeq, seqs[this.publicKey] ?? 0);
  }

  advanceEpoch(leader: string, epoch: number): void {
    this.replica.advanceEpoch(leader, epoch);
    this.record.entry({ kind: 'epoch', leader_public_key: leader, leader_epoch: epoch });
  }

  /** The next action to send, or null (one in flight, nothing to do, or done). */
  next(): { client_seq: number; action: Record<string, unknown> } | null {
    if (this.pending || this.completed || this.fault) return null;
    const view = this.replica.view;
    const me = this.replica.members.find((m) => m.public_key === this.publicKey);
    if (!view || !me || me.status !== 'active') return null;
    const action = this.autoplay(view, me, this.random);
    if (!action) return null;
    this.pending = true;
    return { client_seq: this.clientSeq + 1, action };
  }

  accepted(clientSeq: number): void {
    this.pending = false;
    this.refusedInARow = 0;
    if (clientSeq > this.clientSeq) this.clientSeq = clientSeq;
  }

  /** A refused action: the player tries again on the next frame; a player that only errs stops. */
  refused(): void {
    this.pending = false;
    if (++this.refusedInARow > 50) this.fault = 'the leader refused 50 actions in a row';
  }

  finish(): void {
    this.record.finish(this.crypto, this.seed, this.replica);
  }
}

/** How long a leader waits on a member's turn when neither the protocol nor the command line says (issue 33). */
export const DEFAULT_TURN_TIMEOUT_MS = 60_000;

/** A leader's turn deadline: the protocol's own if it declares one, else the driver's (`fallbackMs`), else the default; 0 turns it off. */
export function turnTimeoutFor(spec: Spec, options: Record<string, unknown>, fallbackMs?: number): number {
  return declaredTurnTimeoutMs(spec, options) ?? fallbackMs ?? DEFAULT_TURN_TIMEOUT_MS;
}

/**
 * The process clock, for the drivers to hand their hub (tests hand it a virtual one). A timer it sets
 * keeps the process alive on purpose: a leader whose members have all gone must still play out their turns.
 */
export const processClock: HubClock = {
  now: () => Date.now(),
  setTimer: (ms, fire) => setTimeout(fire, ms),
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface GroupRunResult {
  completed: boolean;
  outcome: string | null;
  dir: string;
  epochs: number;
  reason?: string;
}

/** Randomness for the leader's hooks and the players: the OS CSPRNG (a deal must not be guessable). */
export const secureRandom = (): number => (globalThis.crypto.getRandomValues(new Uint32Array(1))[0] as number) / 2 ** 32;

/** A member's session directory: one per group and member key. */
export const memberDir = (sessionsDir: string, groupId: string, pk: string) => joinPath(sessionsDir, groupId, pk.slice(0, 16));

export function autoplayOf(protocol: GroupProtocol): GroupAutoplay {
  const a = protocol.hooks.autoplay;
  if (!a) throw new GroupNetError('GROUP_NET_PROTOCOL', 'the protocol has no autoplay for an unattended member');
  return a;
}
