// Tank Battle through the engine on the virtual clock: a match completes with verified receipts; a
// host that signs a frame breaking its chain is caught by the guest, whose proof.json a third party
// checks (and a trimmed or misattributed proof proves nothing); a guest on another ruleset is refused
// with the reference's reason.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { runVirtual, type VirtualRun } from '../../ts/engine/virtual.js';
import { verifyProof, verifyTranscriptAt } from '../../ts/engine/verify.js';
import type { Mode, ModeEffect } from '../../ts/engine/mode.js';
import { BUILTINS } from '../../ts/protocols/index.js';
import { rulesetHashOfDir } from '../../ts/realtime/ruleset-dir.js';
import { tempDir } from '../shared/tmp.js';
import { toHex } from '../../ts/crypto/encoding.js';
import { SessionCore } from '../../ts/engine/core.js';
import { ChainReader, ChainWriter, sessionId } from '../../ts/engine/frame.js';
import { TICK_TIMER } from '../../ts/engine/modes/realtime.js';
import { SessionRecord } from '../../ts/engine/record.js';
import { commandHash, matchConfigHash, realtimeConfig } from '../../ts/realtime/wire.js';
import { builtin, c, hooksOf } from './harness.js';
import { runSession } from '../../ts/engine/session.js';
import { memoryPair } from '../../ts/engine/transport.js';
import { seeded } from '../../ts/engine/local.js';

const SHORT = BUILTINS.find((b) => b.folder === 'tank-battle')!.profiles['short']!.options;

async function match(extra: Partial<VirtualRun> = {}) {
  const b = builtin('tank-battle');
  return runVirtual({
    crypto: c,
    spec: b.spec,
    specText: b.specText,
    protocolId: b.protocolId,
    hooks: await hooksOf('tank-battle'),
    options: SHORT,
    outDir: tempDir('rt-session'),
    rulesetHash: rulesetHashOfDir(c, b.dir),
    ...extra,
  });
}

const events = (dir: string) =>
  readFileSync(join(dir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });

/** The host's rt_frame frames, in order, from its transcript. */
const hostFrames = (dir: string) =>
  readFileSync(join(dir, 'transcript.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .slice(1)
    .map((l) => JSON.parse(l) as { from: string; msg: { action: string; frame?: { tick: number; host_time_ns: number } } })
    .filter((f) => f.from === 'host' && f.msg.action === 'rt_frame')
    .map((f) => f.msg.frame!);

/**
 * A Tank Battle match with both sides as a network session runs them (driver.ts), not runVirtual's
 * loop, over the in-memory link on a virtual clock (Date and the timers): the driver waits for each
 * tick's deadline and fires it then. Each line takes 30 ms, so the guest's commands reach the host
 * between its ticks; `lateMs` holds back every timer of the host's receive by that much.
 */
async function drivenMatch(lateMs: number) {
  const b = builtin('tank-battle');
  const hooks = await hooksOf('tank-battle');
  const out = tempDir('rt-driver');
  const hostKey = c.ed25519Keypair(new Uint8Array(32).fill(1));
  const guestKey = c.ed25519Keypair(new Uint8Array(32).fill(2));
  const [hk, gk] = [toHex(hostKey.publicKey), toHex(guestKey.publicKey)];
  const nonce = '00'.repeat(16);
  const sid = sessionId(c, 'local', b.protocolId, hk, gk, nonce);
  const common = {
    crypto: c,
    spec: b.spec,
    specText: b.specText,
    protocolId: b.protocolId,
    rulesetHash: rulesetHashOfDir(c, b.dir),
    hostKey: hk,
    guestKey: gk,
    sid,
    postId: 'local',
    nonce,
    hooks,
    options: SHORT,
    controlMode: 'autonomous' as const,
    chat: [],
  };
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  try {
    const [ht, gt] = memoryPair({ delayMs: 30 });
    const hostLink = { ...ht, recv: (timeoutMs: number) => ht.recv(timeoutMs + lateMs) };
    let done = false;
    const both = Promise.all([
      runSession({ ...common, role: 'host', transport: hostLink, key: hostKey, stateDir: join(out, 'host'), random: seeded(1) }),
      runSession({ ...common, role: 'guest', transport: gt, key: guestKey, stateDir: join(out, 'guest'), random: seeded(2) }),
    ]).finally(() => (done = true));
    // 10 min of virtual time at most: the match takes seconds of it.
    for (let i = 0; i < 60_000 && !done; i++) await vi.advanceTimersByTimeAsync(10);
    const [host, guest] = await both;
    expect([host.reason, guest.reason]).toEqual(['completed', 'completed']);
    for (const side of [host, guest]) expect(verifyTranscriptAt(c, side.dir)).toMatchObject({ ok: true, receipt: true });
    const frames = hostFrames(host.dir);
    expect(frames.length).toBeGreaterThan(10);
    expect(frames.map((f) => f.tick)).toEqual(frames.map((_f, i) => i + 1));
    return { frames, late: events(host.dir).find((e) => e.type === 'timer_lateness')?.data };
  } finally {
    vi.useRealTimers();
    hostKey.dispose();
    guestKey.dispose();
  }
}

/** A host mode that rewrites its rt_frame of one tick before the core signs it. */
function bendFrame(tick: number, bend: (frame: Record<string, unknown>) => void) {
  return (inner: Mode): Mode => ({
    async step(input) {
      const out: ModeEffect[] = await inner.step(input);
      for (const e of out) {
        if (e.kind !== 'send' || e.msg.action !== 'rt_frame') continue;
        const frame = e.msg['frame'] as Record<string, unknown>;
        if (frame['tick'] === tick) bend(frame);
      }
      return out;
    },
  });
}

describe('authoritative_realtime through the engine', () => {
  it('a Tank Battle match completes, both copies verify, and the guest saw every tick', async () => {
    const r = await match();
    expect([r.host.reason, r.guest.reason]).toEqual(['completed', 'completed']);
    for (const side of [r.host, r.guest]) expect(verifyTranscriptAt(c, side.dir)).toMatchObject({ ok: true, receipt: true });
    const ended = events(r.guest.dir).find((e) => e.type === 'realtime_ended');
    expect(ended?.data['tick']).toBeGreaterThan(0);
    expect(r.elapsedMs).toBeGreaterThanOrEqual((ended!.data['tick'] as number) * 100 - 1);
    expect(events(r.host.dir).some((e) => e.type === 'realtime_started')).toBe(true);
    // Each frame carries the host's clock: tick n at n tick intervals (100 ms at 10 Hz) after the start.
    const frames = hostFrames(r.host.dir);
    expect(frames.at(-1)!.tick).toBe(ended!.data['tick']);
    expect(frames.map((f) => f.host_time_ns)).toEqual(frames.map((f) => f.tick * 100e6));
  });

  it('driven by the session driver over the in-memory link on a virtual clock, the host ticks on time, one interval apart', async () => {
    const { frames, late } = await drivenMatch(0);
    expect(frames.map((f) => f.host_time_ns)).toEqual(frames.map((f) => f.tick * 100e6));
    // Every tick fired at its deadline, none late.
    expect(late).toMatchObject({ count: frames.length, max_ms: 0 });
  });

  it('a tick that fires late does not move the ones after it: each keeps its deadline from the start', async () => {
    // Every timer of the host's fires 7 ms after its deadline: each tick is 7 ms late, and no more.
    const { frames, late } = await drivenMatch(7);
    expect(frames.map((f) => f.host_time_ns)).toEqual(frames.map((f) => f.tick * 100e6 + 7e6));
    expect(late).toMatchObject({ count: frames.length, p50_ms: 7, max_ms: 7 });
  });

  it('a host frame that breaks the chain ends the guest with a proof a third party accepts', async () => {
    const r = await match({ wrap: { host: bendFrame(5, (f) => (f['prev_chain_hash'] = 'f'.repeat(64))) } });
    expect(r.guest).toMatchObject({ completed: false, reason: 'realtime_integrity_failed' });
    expect(r.host.completed).toBe(false);
    const proof = JSON.parse(readFileSync(r.guest.proof!, 'utf8')) as { frames: string[]; offender: string };
    const spec = builtin('tank-battle').specText;
    expect(proof.offender).toBe('host');
    expect(verifyProof(c, proof, spec)).toMatchObject({ proven: true });
    // Evidence trimmed of an earlier frame, or blamed on the guest, proves nothing.
    const trimmed = { ...proof, frames: proof.frames.filter((_l, i) => i !== 3) };
    expect(verifyProof(c, trimmed, spec)).toMatchObject({ proven: false });
    expect(verifyProof(c, { ...proof, offender: 'guest' }, spec)).toMatchObject({ proven: false });
    // Without the bad frame, the same session clears the host.
    expect(verifyProof(c, { ...proof, frames: proof.frames.slice(0, -1) }, spec)).toMatchObject({ proven: false });
    // The guest's own transcript records the refused frame as a violation, not a receipt.
    expect(verifyTranscriptAt(c, r.guest.dir)).toMatchObject({ ok: true, receipt: false });
  });

  it('a host frame whose state is not the one hashed is caught as well', async () => {
    const r = await match({ wrap: { host: bendFrame(3, (f) => ((f['state'] as Record<string, unknown>)['tick'] = 999)) } });
    expect(r.guest).toMatchObject({ completed: false, reason: 'realtime_integrity_failed' });
    expect(verifyProof(c, JSON.parse(readFileSync(r.guest.proof!, 'utf8')), builtin('tank-battle').specText)).toMatchObject({ proven: true });
  });

  it("a guest command the spec refuses is acked rejected in the reference's words, the host plays on, and the transcript verifies", async () => {
    // A hand-signing guest: no engine of ours would send this (the core checks what it sends).
    const b = builtin('tank-battle');
    const dir = tempDir('rt-bad-command');
    const hostKey = c.ed25519Keypair(new Uint8Array(32).fill(1));
    const guestKey = c.ed25519Keypair(new Uint8Array(32).fill(2));
    const [hk, gk] = [toHex(hostKey.publicKey), toHex(guestKey.publicKey)];
    const nonce = '00'.repeat(16);
    const sid = sessionId(c, 'local', b.protocolId, hk, gk, nonce);
    const rulesetHash = rulesetHashOfDir(c, b.dir);
    const record = new SessionRecord(
      dir,
      { _transcript: 1, sid, post_id: 'local', protocol_id: b.protocolId, host_key: hk, guest_key: gk, nonce, role: 'host' },
      b.specText,
    );
    const toGuest: string[] = [];
    let now = 0;
    const host = new SessionCore(
      {
        crypto: c,
        role: 'host',
        spec: b.spec,
        specText: b.specText,
        protocolId: b.protocolId,
        hooks: await hooksOf('tank-battle'),
        options: SHORT,
        key: hostKey,
        hostKey: hk,
        guestKey: gk,
        sid,
        postId: 'local',
        nonce,
        stateDir: dir,
        random: () => 0.5,
        randomBytes: (n) => new Uint8Array(n),
        now: () => now,
        controlMode: 'autonomous',
        decision: null,
        inputs: { rulesetHash },
      },
      {
        transmit: (l) => void toGuest.push(l),
        frame: (l) => record.frame(l),
        event: (n, d) => record.event(n, d),
        snapshot: () => undefined,
        writeJson: () => undefined,
      },
    );
    const writer = new ChainWriter(c, sid, 'guest', guestKey);
    const reader = new ChainReader(c, sid, 'host', hostKey.publicKey, writer);
    const read = () =>
      toGuest.splice(0).map((l) => {
        const a = reader.accept(JSON.parse(l));
        if (!a.ok) throw new Error(a.reason);
        return a.frame.msg;
      });
    const say = (msg: Record<string, unknown>) => host.receive(writer.next(msg as never, reader.head).line);
    await host.start();
    const config = realtimeConfig(b.spec as never);
    await say({ action: 'rt_join', wire_version: 1, ruleset_hash: rulesetHash, match_config_hash: matchConfigHash(c, rulesetHash, SHORT, config) });
    expect(read().map((m) => m.action)).toEqual(['rt_ready']);
    await say({ action: 'rt_command', seq: 1, target_tick: 3, commands: {}, command_hash: '0'.repeat(64) });
    const [ack] = read();
    expect(ack).toMatchObject({ action: 'rt_command_ack', seq: 1, target_tick: 3, status: 'rejected', reason: 'commands: expected JSON array' });
    // A well-formed command after it is accepted, and the ticks go on.
    await say({ action: 'rt_command', seq: 2, target_tick: 3, commands: [], command_hash: commandHash(c, 2, 3, []) });
    expect(read()).toMatchObject([{ action: 'rt_command_ack', seq: 2, status: 'accepted' }]);
    for (let i = 0; i < 3; i++) {
      now = host.timers.get(TICK_TIMER)!;
      await host.timer(TICK_TIMER);
    }
    expect(read().map((m) => m['action'])).toEqual(['rt_frame', 'rt_frame', 'rt_frame']);
    expect(host.ending).toBeUndefined();
    record.close();
    // The refused command is the guest's and the host answered it as the reference does: no violation.
    const v = verifyTranscriptAt(c, dir, join(b.dir, 'spec.json'));
    expect(v).toMatchObject({ ok: true, receipt: false });
    expect(v.violation).toBeUndefined();
    hostKey.dispose();
    guestKey.dispose();
  });

  it('a guest on another ruleset is refused with ruleset_hash_mismatch, on both sides', async () => {
    const r = await match({ rulesetHashes: { guest: 'ab'.repeat(32) } });
    expect(r.host).toMatchObject({ completed: false, reason: 'realtime_rejected' });
    expect(r.guest).toMatchObject({ completed: false, reason: 'realtime_rejected' });
    expect(r.guest.detail).toContain('ruleset_hash_mismatch');
    for (const side of [r.host, r.guest]) expect(verifyTranscriptAt(c, side.dir)).toMatchObject({ ok: true, receipt: false });
  });
});
