// A host engine against a hand-driven guest: the test plays the peer frame by frame, so it can send
// what no well-behaved engine would (undeclared fields, forged or replayed frames, false reveals).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getCrypto, toHex } from '../../ts/crypto/index.js';
import { ChainWriter, genesis, hashOf, sessionId, type Frame } from '../../ts/engine/frame.js';
import { runSession, type SessionResult } from '../../ts/engine/session.js';
import { memoryPair, type Transport } from '../../ts/engine/transport.js';
import type { Clock } from '../../ts/engine/clock.js';
import type { HooksModule, Message, Role, SimultaneousRoundHooks } from '../../ts/hooks/types.js';
import { loadSpec } from '../../ts/spec/index.js';
import { seeded } from '../../ts/engine/local.js';

export const c = getCrypto();

export function builtin(folder: string) {
  const dir = new URL(`../../ts/protocols/${folder}`, import.meta.url).pathname;
  const l = loadSpec(c, dir);
  return { dir, spec: l.spec, specText: l.text, protocolId: l.protocolId! };
}

export async function hooksOf(folder: string): Promise<HooksModule> {
  return (await import(`../../ts/protocols/${folder}/hooks.ts`)).default as HooksModule;
}

export interface RawPeer {
  role: Role;
  writer: ChainWriter;
  transport: Transport;
  /** Signs and sends a message as the next frame of this peer's chain. */
  send(msg: Message): string;
  /** Signs a message as the next frame of this peer's chain without sending it (to send it altered). */
  sign(msg: Message): string;
  sendRaw(line: string): void;
  recv(timeoutMs?: number): Promise<Frame | null>;
}

/** Runs the engine for `engineRole` and lets `script` play the other side by hand. */
export async function againstScript(
  folder: string,
  engineRole: Role,
  script: (peer: RawPeer) => Promise<void>,
  opts: { outDir: string; options?: Record<string, unknown>; timeoutMs?: number; maxFrameBytes?: number; hooks?: HooksModule },
): Promise<{ result: SessionResult; dir: string }> {
  const b = builtin(folder);
  const hooks = opts.hooks ?? (await hooksOf(folder));
  const engineKey = c.ed25519Keypair(new Uint8Array(32).fill(engineRole === 'host' ? 1 : 2));
  const peerKey = c.ed25519Keypair(new Uint8Array(32).fill(engineRole === 'host' ? 2 : 1));
  const peerRole: Role = engineRole === 'host' ? 'guest' : 'host';
  const [hk, gk] = engineRole === 'host' ? [toHex(engineKey.publicKey), toHex(peerKey.publicKey)] : [toHex(peerKey.publicKey), toHex(engineKey.publicKey)];
  const nonce = '00'.repeat(16);
  const sid = sessionId(c, 'local', b.protocolId, hk, gk, nonce);
  const [ht, gt] = memoryPair();
  const [mine, theirs] = engineRole === 'host' ? [ht, gt] : [gt, ht];
  const writer = new ChainWriter(c, sid, peerRole, peerKey);
  // What the scripted peer acknowledges: the engine's latest frame it has read.
  let ack = genesis(c, sid, engineRole);
  const peer: RawPeer = {
    role: peerRole,
    writer,
    transport: theirs,
    send(msg) {
      const { line } = writer.next(msg, ack);
      theirs.send(line);
      return line;
    },
    sign: (msg) => writer.next(msg, ack).line,
    sendRaw: (line) => theirs.send(line),
    async recv(timeoutMs = 10_000) {
      const r = await theirs.recv(timeoutMs);
      if (r.line === null) return null;
      const f = JSON.parse(r.line) as Frame;
      ack = hashOf(c, f);
      return f;
    },
  };
  const dir = join(opts.outDir, engineRole);
  const [result] = await Promise.all([
    runSession({
      crypto: c,
      role: engineRole,
      spec: b.spec,
      specText: b.specText,
      protocolId: b.protocolId,
      hooks,
      options: opts.options ?? {},
      transport: mine,
      key: engineKey,
      hostKey: hk,
      guestKey: gk,
      sid,
      postId: 'local',
      nonce,
      stateDir: dir,
      random: seeded(5),
      controlMode: 'autonomous',
      timeoutMs: opts.timeoutMs ?? 10_000,
      ...(opts.maxFrameBytes !== undefined && { maxFrameBytes: opts.maxFrameBytes }),
    }),
    script(peer).catch(() => undefined),
  ]);
  return { result, dir };
}

export const readJson = (p: string) => JSON.parse(readFileSync(p, 'utf8'));

/** hero-duel hooks whose host bends its round_result of round `round` with `bend`: the shadow judge catches it. */
export async function bendingHeroDuelHost(round: number, bend: (result: Message) => Message): Promise<HooksModule> {
  const honest = await hooksOf('hero-duel');
  return {
    mode: 'simultaneous_round',
    create: (ctx) => {
      const h = honest.create(ctx) as SimultaneousRoundHooks;
      return {
        ...h,
        async proto_round_judge(r, hv, gv, s) {
          const out = (await h.proto_round_judge(r, hv, gv, s)) as { response: Message; completed: boolean };
          if (r === round) out.response = bend(out.response);
          return out;
        },
      };
    },
  };
}

/**
 * A clock that moves only when the test says so: a decision window closes on `advance`, never
 * because a loaded machine was slow.
 */
export class ManualClock implements Clock {
  private t = Date.now();
  private sleepers: { at: number; wake: () => void }[] = [];
  now(): number {
    return this.t;
  }
  sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((wake) => this.sleepers.push({ at: this.t + ms, wake }));
  }
  advance(ms: number): void {
    this.t += ms;
    const due = this.sleepers.filter((s) => s.at <= this.t);
    this.sleepers = this.sleepers.filter((s) => s.at > this.t);
    for (const s of due) s.wake();
  }
}

/** Polls until `cond` holds (the limit only keeps a broken test from hanging; it is not a timing assumption). */
export async function until(cond: () => boolean, what: string, limitMs = 30_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`still waiting for ${what} after ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
