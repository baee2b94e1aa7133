// free mode: the first `end` of either side ends the session as completed for both (end_when:
// either_ends), between two of our agents (who close with an answering `end` and exchange receipts) and
// against a peer that ends as the reference does (no answer, no receipts). Under human control each line
// is a decision taken while the peer's lines keep coming, and a decision window ends when the session
// does (a local abort or the peer's end does not wait out its deadline).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendDecision } from '../../ts/engine/decision.js';
import { toHex } from '../../ts/crypto/index.js';
import { sessionId, type Frame } from '../../ts/engine/frame.js';
import { runLocal, seeded, type LocalRun } from '../../ts/engine/local.js';
import { runSession, type SessionConfig } from '../../ts/engine/session.js';
import { memoryPair, type Transport } from '../../ts/engine/transport.js';
import type { Message, Role } from '../../ts/hooks/types.js';
import { verifyTranscriptAt } from '../../ts/engine/verify.js';
import { tempDir } from '../shared/tmp.js';
import { builtin, c, hooksOf, ManualClock, until } from './harness.js';

const frames = (dir: string): Frame[] =>
  existsSync(join(dir, 'transcript.jsonl'))
    ? readFileSync(join(dir, 'transcript.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => JSON.parse(l) as Frame)
    : [];
const events = (dir: string) =>
  existsSync(join(dir, 'events.jsonl'))
    ? readFileSync(join(dir, 'events.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; data?: Record<string, unknown> })
    : [];
const window = (dir: string): { match_key?: string; match_value?: number } => {
  try {
    return JSON.parse(readFileSync(join(dir, 'decision', 'state.json'), 'utf8'));
  } catch {
    return {};
  }
};

/** The deadline of the first decision window the side opened, in clock milliseconds. */
const deadlineOf = (dir: string): number => {
  const opened = events(dir).find((e) => e.type === 'local_decision_window_started');
  return Date.parse(String(opened?.data?.['deadline_at']));
};

/** A human-chat session between two sides in `out`, as `run` sets them up (control, windows, scripted lines). */
const humanChat = async (out: string, run: Omit<LocalRun, 'crypto' | 'spec' | 'specText' | 'protocolId' | 'hooks' | 'options' | 'outDir'>) =>
  runLocal({ crypto: c, ...builtin('human-chat'), hooks: await hooksOf('human-chat'), options: {}, outDir: out, ...run });

/**
 * A best-of-3 rps game in `out` whose guest decides in human windows (no think time) on a clock the test
 * never advances, from the moment the guest's first window is open.
 */
async function rpsWithHumanGuest(out: string) {
  const clock = new ManualClock();
  const run = runLocal({
    crypto: c,
    ...builtin('rps'),
    hooks: await hooksOf('rps'),
    options: { best_of: 3 },
    outDir: out,
    guestControl: 'human',
    decisionTimeoutMs: 60_000,
    minThinkMs: 0,
    clock,
  });
  await until(() => window(join(out, 'guest')).match_key !== undefined, 'the first window');
  return { clock, run };
}

describe('free mode with a person saying the lines', () => {
  // The human windows run on a clock the test never advances: their deadline never comes, so only an
  // `end` (or a decision) can close one.
  it("the person's line while the peer's person types, then the person's end: the peer ends at once, answering it", async () => {
    const out = tempDir('free-chat');
    const [hostDir, guestDir] = [join(out, 'host'), join(out, 'guest')];
    const clock = new ManualClock();
    const run = humanChat(out, {
      hostControl: 'human',
      guestControl: 'human',
      decisionTimeoutMs: 60_000,
      minThinkMs: 0,
      clock,
    });
    await until(() => window(guestDir).match_value === 0 && window(hostDir).match_value === 0, 'both first windows');
    appendDecision(guestDir, { match_key: 'chat', match_value: 0, message: { action: 'chat', text: 42 }, _meta: { decision_id: 'bad', origin: 'test' } });
    await until(() => events(guestDir).some((e) => e.type === 'local_decision_rejected'), 'the refusal');
    appendDecision(guestDir, {
      match_key: 'chat',
      match_value: 0,
      message: { action: 'chat', text: 'yes, hello', seq: 99 },
      _meta: { decision_id: 'line', origin: 'test' },
    });
    await until(() => window(guestDir).match_value === 1, 'the second window');
    // The host's person is still typing, and its hooks have the guest's line.
    await until(() => frames(hostDir).some((f) => f.from === 'guest' && f.msg.action === 'chat'), "the guest's line at the host");
    expect(window(hostDir)).toMatchObject({ match_key: 'chat', match_value: 0 });
    appendDecision(guestDir, { match_key: 'chat', match_value: 1, message: { action: 'end' }, _meta: { decision_id: 'bye', origin: 'test' } });
    const r = await run;
    expect([r.host, r.guest].map((x) => [x.completed, x.reason])).toEqual([
      [true, 'completed'],
      [true, 'completed'],
    ]);
    expect(clock.now()).toBeLessThan(deadlineOf(hostDir));
    const said = (dir: string, who: string) =>
      frames(dir)
        .filter((f) => f.from === who && !f.msg.action.startsWith('_'))
        .map((f) => f.msg);
    expect(said(hostDir, 'guest')).toEqual([{ action: 'join' }, { action: 'chat', text: 'yes, hello', seq: 1 }, { action: 'end' }]);
    // The host never said a line: its answer to the guest's end closes its chain for the receipts.
    expect(said(guestDir, 'host')).toEqual([{ action: 'ready' }, { action: 'end' }]);
    expect(events(hostDir).some((e) => e.type === 'local_decision_consumed')).toBe(false);
    for (const dir of [hostDir, guestDir]) expect(verifyTranscriptAt(c, dir)).toMatchObject({ ok: true, receipt: true });
  }, 60_000);

  it("the peer's end while the person types: this side takes the peer's lines, answers the end and completes at once", async () => {
    const out = tempDir('free-chat');
    const guestDir = join(out, 'guest');
    const clock = new ManualClock();
    const r = await humanChat(out, {
      guestControl: 'human',
      decisionTimeoutMs: 60_000,
      minThinkMs: 0,
      clock,
      chat: { host: ['hello from the host', 'are you there?'] },
    });
    expect([r.host, r.guest].map((x) => [x.completed, x.reason])).toEqual([
      [true, 'completed'],
      [true, 'completed'],
    ]);
    expect(clock.now()).toBeLessThan(deadlineOf(guestDir));
    const received = events(guestDir)
      .filter((e) => e.type === 'protocol_message' && e.data?.['direction'] === 'received')
      .map((e) => (e.data!['msg'] as { action: string }).action);
    expect(received).toEqual(['ready', 'chat', 'chat', 'end']);
    expect(
      frames(join(out, 'host'))
        .filter((f) => f.from === 'guest')
        .map((f) => f.msg.action),
    ).toEqual(['join', 'end', '_receipt']);
    for (const side of ['host', 'guest']) expect(verifyTranscriptAt(c, join(out, side))).toMatchObject({ ok: true, receipt: true });
  }, 60_000);

  it('a hybrid side with nobody deciding says its scripted lines, then leaves', async () => {
    const out = tempDir('free-chat');
    // The host's person never decides: its window is open (60 s) until the guest's end closes it.
    const r = await humanChat(out, {
      hostControl: 'human',
      guestControl: 'hybrid',
      minThinkMs: 20,
      decisionTimeoutMs: 60_000,
      chat: { guest: ['one', 'two'] },
    });
    expect([r.host.completed, r.guest.completed]).toEqual([true, true]);
    expect(
      frames(join(out, 'host'))
        .filter((f) => f.from === 'guest' && f.msg.action === 'chat')
        .map((f) => f.msg['text']),
    ).toEqual(['one', 'two']);
  }, 30_000);

  it('a local abort ends an open human window at once instead of at its deadline', async () => {
    const out = tempDir('free-chat');
    const guestDir = join(out, 'guest');
    // The windows run on a clock the test never advances: their deadline never comes, so only the
    // abort can end this session.
    const { clock, run } = await rpsWithHumanGuest(out);
    writeFileSync(join(guestDir, 'abort.request'), 'now\n');
    const r = await run;
    expect(r.guest.reason).toBe('local_abort');
    expect(clock.now()).toBeLessThan(deadlineOf(guestDir));
  }, 60_000);

  it("the peer leaving ends an open human window at once, with the peer's reason, in a turn it waits on", async () => {
    const out = tempDir('free-chat');
    const guestDir = join(out, 'guest');
    // The windows run on a clock the test never advances: their deadline never comes, so only the
    // host's leaving can end the guest's.
    const { clock, run } = await rpsWithHumanGuest(out);
    // The host's commit for the round is sent, and waits unread behind the window.
    await until(() => frames(join(out, 'host')).some((f) => f.from === 'host' && f.msg.action === 'commit'), "the host's commit");
    writeFileSync(join(out, 'host', 'abort.request'), 'now\n');
    const r = await run;
    expect(r.host.reason).toBe('local_abort');
    expect(r.guest.reason).toBe('peer_aborted');
    expect(clock.now()).toBeLessThan(deadlineOf(guestDir));
    expect(frames(guestDir).at(-1)?.msg).toMatchObject({ action: '_abort', reason: 'local_abort' });
    // Every frame the host sent, its commit read behind the window included, is in the guest's record.
    const sent = frames(join(out, 'host')).filter((f) => f.from === 'host');
    expect(sent.map((f) => f.msg.action)).toContain('commit');
    expect(frames(guestDir).filter((f) => f.from === 'host')).toEqual(sent);
    expect(verifyTranscriptAt(c, guestDir)).toMatchObject({ ok: true });
  }, 60_000);
});

// The reference's free mode (proto/engine.py, _run_free_async) neither answers an `end` nor waits for
// one, and speaks bare messages with no receipts (our plain profile). These peers play it by hand.
describe('free mode against a peer that ends as the reference does', () => {
  /** Runs our side over the plain profile against `script`, which gets the other end of the transport. */
  async function againstBarePeer(role: Role, script: (peer: Transport) => Promise<void>, extra: Partial<SessionConfig> = {}) {
    const b = builtin('human-chat');
    const key = c.ed25519Keypair(new Uint8Array(32).fill(role === 'host' ? 1 : 2));
    const theirs = toHex(c.ed25519Keypair(new Uint8Array(32).fill(role === 'host' ? 2 : 1)).publicKey);
    const [hostKey, guestKey] = role === 'host' ? [toHex(key.publicKey), theirs] : [theirs, toHex(key.publicKey)];
    const nonce = '00'.repeat(16);
    const sid = sessionId(c, 'local', b.protocolId, hostKey, guestKey, nonce);
    const [ht, gt] = memoryPair();
    const dir = join(tempDir('free-plain'), role);
    const [result] = await Promise.all([
      runSession({
        crypto: c,
        role,
        spec: b.spec,
        specText: b.specText,
        protocolId: b.protocolId,
        hooks: await hooksOf('human-chat'),
        options: {},
        transport: role === 'host' ? ht : gt,
        key,
        hostKey,
        guestKey,
        sid,
        postId: 'local',
        nonce,
        stateDir: dir,
        random: seeded(5),
        controlMode: 'autonomous',
        wire: 'plain',
        timeoutMs: 10_000,
        ...extra,
      }),
      script(role === 'host' ? gt : ht),
    ]);
    return result;
  }
  /** Every line from our side until it closes the connection: the peer itself never closes first. */
  const drain = async (t: Transport) => {
    const got: Message[] = [];
    for (let r = await t.recv(30_000); r.line !== null; r = await t.recv(30_000)) got.push(JSON.parse(r.line) as Message);
    return got;
  };
  const human = (clock: ManualClock): Partial<SessionConfig> => ({ controlMode: 'human', decisionTimeoutMs: 60_000, minThinkMs: 0, clock });

  it.each(['host', 'guest'] as const)(
    "the peer's end first: ours (%s, its person still typing) completes at once and does not answer",
    async (role) => {
      const clock = new ManualClock();
      let after: Message[] = [];
      const r = await againstBarePeer(
        role,
        async (peer) => {
          if (role === 'host') {
            peer.send(JSON.stringify({ action: 'join' }));
            expect((await peer.recv(30_000)).line).toBe(JSON.stringify({ action: 'ready' }));
          } else {
            expect(JSON.parse((await peer.recv(30_000)).line!)).toEqual({ action: 'join' });
            peer.send(JSON.stringify({ action: 'ready' }));
          }
          peer.send(JSON.stringify({ action: 'chat', text: 'bye for now', seq: 1 }));
          peer.send(JSON.stringify({ action: 'end' }));
          after = await drain(peer);
        },
        human(clock),
      );
      expect(r).toMatchObject({ completed: true, reason: 'completed' });
      expect(after).toEqual([]);
      expect(clock.now()).toBeLessThan(deadlineOf(r.dir));
      const received = events(r.dir)
        .filter((e) => e.type === 'protocol_message' && e.data?.['direction'] === 'received')
        .map((e) => (e.data!['msg'] as { action: string }).action);
      expect(received).toEqual([role === 'host' ? 'join' : 'ready', 'chat', 'end']);
      expect(JSON.parse(readFileSync(join(r.dir, 'receipt.json'), 'utf8'))).toMatchObject({ wire: 'plain', sid: r.sid });
      expect(verifyTranscriptAt(c, r.dir)).toMatchObject({ ok: true, receipt: true });
    },
    60_000,
  );

  it('ours ends first (a scripted /quit): it completes without waiting for an answer that never comes', async () => {
    let seen: Message[] = [];
    const r = await againstBarePeer(
      'host',
      async (peer) => {
        peer.send(JSON.stringify({ action: 'join' }));
        seen = await drain(peer);
      },
      { chat: ['hi there', '/quit', 'never sent'] },
    );
    expect(r).toMatchObject({ completed: true, reason: 'completed' });
    expect(seen).toEqual([{ action: 'ready' }, { action: 'chat', text: 'hi there', seq: 1 }, { action: 'end' }]);
    expect(verifyTranscriptAt(c, r.dir)).toMatchObject({ ok: true, receipt: true });
  }, 60_000);

  it("ours ends first (its person's end): it completes at once", async () => {
    const clock = new ManualClock();
    const dir = join(tempDir('free-plain'), 'guest');
    let seen: Message[] = [];
    const run = againstBarePeer(
      'guest',
      async (peer) => {
        await peer.recv(30_000);
        peer.send(JSON.stringify({ action: 'ready' }));
        seen = await drain(peer);
      },
      { ...human(clock), stateDir: dir },
    );
    await until(() => window(dir).match_value === 0, 'the first window');
    appendDecision(dir, { match_key: 'chat', match_value: 0, message: { action: 'end' }, _meta: { decision_id: 'bye', origin: 'test' } });
    const r = await run;
    expect(r).toMatchObject({ completed: true, reason: 'completed' });
    expect(seen).toEqual([{ action: 'end' }]);
    expect(verifyTranscriptAt(c, dir)).toMatchObject({ ok: true, receipt: true });
  }, 60_000);
});
