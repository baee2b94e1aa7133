/**
 * Both sides of a session in one process on a virtual clock: the two cores exchange lines through
 * in-memory queues, timers fire in time order as soon as nothing else is pending, and local decisions
 * take the hooks' choice. A realtime match of thousands of ticks runs as fast as the machine steps
 * it, and the same seed gives the same session. Records are the ordinary session files, so the
 * transcripts verify offline like any other.
 */
import { join } from 'node:path';
import { toHex } from '../crypto/encoding.js';
import type { Role } from '../hooks/types.js';
import { SessionCore, type CoreEnd } from './core.js';
import type { Mode } from './mode.js';
import { sessionId } from './frame.js';
import { SessionRecord } from './record.js';
import { driverResult } from './driver.js';
import type { SessionResult } from './session.js';
import type { LocalRun } from './local.js';

export interface VirtualRun extends Pick<
  LocalRun,
  'crypto' | 'spec' | 'specText' | 'protocolId' | 'hooks' | 'hostHooks' | 'guestHooks' | 'options' | 'outDir' | 'seed' | 'rulesetHash' | 'chat' | 'onMessage'
> {
  /** Rewrites each line in flight: [] drops it, two entries duplicate it, 'disconnect' ends the link. */
  fault?: (from: Role, line: string, n: number) => string[] | 'disconnect';
  /** Wraps one side's flow mode: a test plays a cheat with it. */
  wrap?: Partial<Record<Role, (mode: Mode) => Mode>>;
  /** Each side's ruleset hash, when a test gives them different ones. */
  rulesetHashes?: Partial<Record<Role, string>>;
  /** Stop after this many deliveries and timer firings (a runaway mode ends as peer_timeout). */
  maxSteps?: number;
}

export interface VirtualResult {
  host: SessionResult;
  guest: SessionResult;
  /** Virtual milliseconds the session took. */
  elapsedMs: number;
  steps: number;
}

/** A deterministic byte source (xorshift32) for keys, nonces and secrets: a test session replays exactly; nothing here is secret. */
export function seededBytes(seed: number): (n: number) => Uint8Array {
  let x = seed >>> 0 || 0x9e3779b9;
  return (n) => {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      x >>>= 0;
      out[i] = x & 0xff;
    }
    return out;
  };
}

export async function runVirtual(r: VirtualRun): Promise<VirtualResult> {
  const c = r.crypto;
  const seed = r.seed ?? 1;
  const bytes = seededBytes(seed * 7919 + 17);
  const keys = { host: c.ed25519Keypair(bytes(32)), guest: c.ed25519Keypair(bytes(32)) };
  const hk = toHex(keys.host.publicKey);
  const gk = toHex(keys.guest.publicKey);
  const nonce = toHex(bytes(16));
  const postId = 'local';
  const sid = sessionId(c, postId, r.protocolId, hk, gk, nonce);
  let now = 0;
  const queues: Record<Role, string[]> = { host: [], guest: [] };
  const closed: Record<Role, boolean> = { host: false, guest: false };
  const sent: Record<Role, number> = { host: 0, guest: 0 };
  const other = (s: Role): Role => (s === 'host' ? 'guest' : 'host');
  const records: Partial<Record<Role, SessionRecord>> = {};
  const make = (role: Role): SessionCore => {
    const dir = join(r.outDir, role);
    const record = new SessionRecord(
      dir,
      { _transcript: 1, sid, post_id: postId, protocol_id: r.protocolId, host_key: hk, guest_key: gk, nonce, role },
      r.specText,
    );
    records[role] = record;
    const rnd = seededBytes(seed * 2 + (role === 'host' ? 1 : 2));
    const core = new SessionCore(
      {
        crypto: c,
        role,
        spec: r.spec,
        specText: r.specText,
        protocolId: r.protocolId,
        hooks: (role === 'host' ? r.hostHooks : r.guestHooks) ?? r.hooks,
        options: r.options ?? {},
        key: keys[role],
        hostKey: hk,
        guestKey: gk,
        sid,
        postId,
        nonce,
        stateDir: dir,
        random: () => (rnd(4).reduce((a, b) => a * 256 + b, 0) >>> 0) / 4294967296,
        randomBytes: rnd,
        now: () => now,
        controlMode: 'autonomous',
        decision: null,
        ...(r.wrap?.[role] && { wrapMode: r.wrap[role] }),
        inputs: {
          ...(r.chat?.[role] && { chat: r.chat[role] }),
          ...((r.rulesetHashes?.[role] ?? r.rulesetHash) && { rulesetHash: r.rulesetHashes?.[role] ?? r.rulesetHash }),
        },
      },
      {
        transmit: (line) => {
          const to = other(role);
          if (closed[role] || closed[to]) throw new Error('the link is closed');
          const out = r.fault ? r.fault(role, line, sent[role]++) : [line];
          if (out === 'disconnect') {
            closed.host = closed.guest = true;
            return;
          }
          queues[to].push(...out);
        },
        frame: (line) => record.frame(line),
        event: (name, data) => record.event(name, data),
        snapshot: (phase, data) => record.snapshot(phase, data),
        writeJson: (file, value) => record.writeJson(file, value),
        ...(role === 'host' && r.onMessage && { onMessage: r.onMessage }),
      },
    );
    record.event('session_started', { role, sid, protocol_id: r.protocolId, mode: core.mode });
    return core;
  };
  const cores: Record<Role, SessionCore> = { host: make('host'), guest: make('guest') };
  const ends: Partial<Record<Role, CoreEnd & { proofFile?: string }>> = {};
  const finish = (role: Role) => {
    if (ends[role]) return;
    ends[role] = cores[role].finish();
    closed[role] = true;
    records[role]!.close();
  };
  let steps = 0;
  const maxSteps = r.maxSteps ?? 1_000_000;
  try {
    await cores.host.start();
    await cores.guest.start();
    let turn: Role = 'host';
    while (!ends.host || !ends.guest) {
      for (const s of ['host', 'guest'] as const) if (!ends[s] && cores[s].ending) finish(s);
      if (ends.host && ends.guest) break;
      if (++steps > maxSteps) {
        for (const s of ['host', 'guest'] as const) if (!ends[s]) cores[s].transportEnded(true, 0);
        continue;
      }
      // Decisions first (the hooks' choice), then lines in flight, alternating sides, then the earliest timer.
      const deciding = (['host', 'guest'] as const).find((s) => !ends[s] && cores[s].decision);
      if (deciding) {
        await cores[deciding].decided(cores[deciding].decision!.fallback);
        continue;
      }
      const order: Role[] = turn === 'host' ? ['host', 'guest'] : ['guest', 'host'];
      const receiver = order.find((s) => !ends[s] && queues[s].length > 0);
      if (receiver) {
        turn = other(receiver);
        await cores[receiver].receive(queues[receiver].shift()!);
        continue;
      }
      let due: { role: Role; id: string; at: number } | undefined;
      for (const s of ['host', 'guest'] as const) {
        if (ends[s]) continue;
        for (const [id, at] of cores[s].timers) if (!due || at < due.at) due = { role: s, id, at };
      }
      if (due) {
        now = Math.max(now, due.at);
        await cores[due.role].timer(due.id);
        continue;
      }
      // Nothing in flight and nothing scheduled: a side still waiting has lost its peer.
      for (const s of ['host', 'guest'] as const) if (!ends[s]) cores[s].transportEnded(closed[other(s)] || closed[s] ? false : true, 0);
    }
  } finally {
    for (const s of ['host', 'guest'] as const) if (!ends[s]) finish(s);
    keys.host.dispose();
    keys.guest.dispose();
  }
  const result = (s: Role): SessionResult => {
    const e = ends[s]!;
    const { proofFile, ...end } = driverResult(e, sid);
    return { ...end, dir: join(r.outDir, s), ...(proofFile && { proof: join(r.outDir, s, proofFile) }) };
  };
  return { host: result('host'), guest: result('guest'), elapsedMs: now, steps };
}
