/** Host and guest in one process over the in-memory transport: `protocol test` and the engine's tests. */
import { join } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { toHex } from '../crypto/encoding.js';
import type { ControlMode, HooksModule, Message, Role } from '../hooks/types.js';
import type { Spec } from '../spec/types.js';
import type { Clock } from './clock.js';
import { sessionId } from './frame.js';
import { runSession, type SessionResult } from './session.js';
import { memoryPair, type MemoryOptions } from './transport.js';
import { runVirtual } from './virtual.js';
import { seeded } from '../hooks/random.js';
import { flowMode } from '../spec/types.js';
import type { MpSecrets } from '../mp/secrets.js';

export interface LocalRun {
  crypto: Crypto;
  spec: Spec;
  specText: string;
  protocolId: string;
  hooks: HooksModule;
  /** Different hooks for one side, e.g. a cheating fixture. */
  hostHooks?: HooksModule;
  guestHooks?: HooksModule;
  options?: Record<string, unknown>;
  hostOptions?: Record<string, unknown>;
  guestOptions?: Record<string, unknown>;
  seed?: number;
  outDir: string;
  faults?: MemoryOptions;
  timeoutMs?: number;
  maxFrameBytes?: number;
  chat?: { host?: string[]; guest?: string[] };
  onMessage?: (from: Role, msg: Message) => void;
  /** Control mode of each side (default autonomous: no decision windows). */
  hostControl?: ControlMode;
  guestControl?: ControlMode;
  minThinkMs?: number;
  decisionTimeoutMs?: number;
  /** The clock both sides' decision windows run on (tests pass a virtual one). */
  clock?: Clock;
  /** 32-byte key seeds (default: random), for tests that play an attacker holding one side's key. */
  keySeeds?: { host: Uint8Array; guest: Uint8Array };
  /** The session nonce, 32 hex digits (default: random): with keySeeds, a test replays the same session id. */
  nonce?: string;
  /** mental_poker: a side's secret material (default: randomSecrets, fresh keys from the CSPRNG), for tests that play a pinned deal. */
  mpSecrets?: Partial<Record<Role, MpSecrets>>;
  /** authoritative_realtime: the protocol folder's ruleset hash (default: over spec.json alone). */
  rulesetHash?: string;
}

/** The seeded PRNG `--seed N` drives (it lives with the hooks it feeds). */
export { seeded };

/**
 * Plays both sides of a session in one process, over an in-memory link, each side writing its
 * session directory under `outDir` (host/ and guest/). A realtime match runs on the virtual clock
 * (virtual.ts): ticks follow each other as fast as the machine steps them, so a test of a 3-minute
 * match takes seconds. Its timing over a real link is the network session's to show.
 *
 * @param r - the protocol (a checked spec, its text and protocol_id, and its hooks module), where to
 *   write, and what tests may pin (seed, keys, nonce, faults, each side's control mode)
 * @returns each side's end: completed or the typed reason, the outcome, its directory
 * @example
 * ```ts
 * const crypto = getCrypto();
 * const loaded = loadSpec(crypto, './my-game');
 * const hooks = (await import('./my-game/hooks.js')).default;
 * const { host } = await runLocal({ crypto, spec: loaded.spec, specText: loaded.text, protocolId: loaded.protocolId!, hooks, outDir: './sessions' });
 * verifyTranscriptAt(crypto, host.dir).receipt; // true: both signed receipts hold
 * ```
 */
export async function runLocal(r: LocalRun): Promise<{ host: SessionResult; guest: SessionResult }> {
  if (flowMode(r.spec) === 'authoritative_realtime') {
    const v = await runVirtual({
      crypto: r.crypto,
      spec: r.spec,
      specText: r.specText,
      protocolId: r.protocolId,
      hooks: r.hooks,
      outDir: r.outDir,
      seed: r.seed ?? 1,
      options: r.hostOptions ?? r.options ?? {},
      ...(r.hostHooks && { hostHooks: r.hostHooks }),
      ...(r.guestHooks && { guestHooks: r.guestHooks }),
      ...(r.rulesetHash && { rulesetHash: r.rulesetHash }),
      ...(r.onMessage && { onMessage: r.onMessage }),
    });
    return { host: v.host, guest: v.guest };
  }
  const c = r.crypto;
  const seed = r.seed ?? 1;
  const hostKey = c.ed25519Keypair(r.keySeeds?.host ?? globalThis.crypto.getRandomValues(new Uint8Array(32)));
  const guestKey = c.ed25519Keypair(r.keySeeds?.guest ?? globalThis.crypto.getRandomValues(new Uint8Array(32)));
  const nonce = r.nonce ?? toHex(globalThis.crypto.getRandomValues(new Uint8Array(16)));
  const [hk, gk] = [toHex(hostKey.publicKey), toHex(guestKey.publicKey)];
  const postId = 'local';
  const sid = sessionId(c, postId, r.protocolId, hk, gk, nonce);
  const [ht, gt] = memoryPair(r.faults);
  const common = {
    crypto: c,
    ...(r.rulesetHash && { rulesetHash: r.rulesetHash }),
    spec: r.spec,
    specText: r.specText,
    protocolId: r.protocolId,
    hostKey: hk,
    guestKey: gk,
    sid,
    postId,
    nonce,
    ...(r.timeoutMs !== undefined && { timeoutMs: r.timeoutMs }),
    ...(r.maxFrameBytes !== undefined && { maxFrameBytes: r.maxFrameBytes }),
    ...(r.minThinkMs !== undefined && { minThinkMs: r.minThinkMs }),
    ...(r.decisionTimeoutMs !== undefined && { decisionTimeoutMs: r.decisionTimeoutMs }),
    ...(r.clock && { clock: r.clock }),
  };
  try {
    const [host, guest] = await Promise.all([
      // The host sees every frame once (its own sends and the guest's), so it alone reports them.
      runSession({
        ...common,
        ...(r.onMessage && { onMessage: r.onMessage }),
        role: 'host',
        controlMode: r.hostControl ?? 'autonomous',
        hooks: r.hostHooks ?? r.hooks,
        options: r.hostOptions ?? r.options ?? {},
        transport: ht,
        key: hostKey,
        stateDir: join(r.outDir, 'host'),
        random: seeded(seed * 2 + 1),
        chat: r.chat?.host ?? [],
        ...(r.mpSecrets?.host && { mpSecrets: r.mpSecrets.host }),
      }),
      runSession({
        ...common,
        role: 'guest',
        controlMode: r.guestControl ?? 'autonomous',
        hooks: r.guestHooks ?? r.hooks,
        options: r.guestOptions ?? r.options ?? {},
        transport: gt,
        key: guestKey,
        stateDir: join(r.outDir, 'guest'),
        random: seeded(seed * 2 + 2),
        chat: r.chat?.guest ?? [],
        ...(r.mpSecrets?.guest && { mpSecrets: r.mpSecrets.guest }),
      }),
    ]);
    return { host, guest };
  } finally {
    hostKey.dispose();
    guestKey.dispose();
  }
}
