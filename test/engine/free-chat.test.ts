// free mode under human control: each line is a decision taken while the peer's lines keep coming,
// and a decision window ends when the session does (a local abort does not wait out its deadline).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendDecision } from '../../ts/engine/decision.js';
import type { Frame } from '../../ts/engine/frame.js';
import { runLocal } from '../../ts/engine/local.js';
import { verifyTranscriptAt } from '../../ts/engine/verify.js';
import { tempDir } from '../shared/tmp.js';
import { builtin, c, hooksOf, ManualClock, until } from './harness.js';

const frames = (dir: string): Frame[] =>
  existsSync(join(dir, 'transcript.jsonl')) ? readFileSync(join(dir, 'transcript.jsonl'), 'utf8').trim().split('\n').slice(1).map((l) => JSON.parse(l) as Frame) : [];
const events = (dir: string) => (existsSync(join(dir, 'events.jsonl')) ? readFileSync(join(dir, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; data?: Record<string, unknown> }) : []);
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

describe('free mode with a person saying the lines', () => {
  it("takes the peer's lines while the person's window is open, then says the person's line and leaves", async () => {
    const out = tempDir('free-chat');
    const guestDir = join(out, 'guest');
    const run = runLocal({ crypto: c, ...builtin('human-chat'), hooks: await hooksOf('human-chat'), options: {}, outDir: out, guestControl: 'human', decisionTimeoutMs: 20_000, minThinkMs: 0, chat: { host: ['hello from the host', 'are you there?'] } });
    // The host's two lines and its end arrive while the guest's first window is open.
    await until(() => frames(guestDir).filter((f) => f.from === 'host' && (f.msg.action === 'chat' || f.msg.action === 'end')).length === 3, 'the host lines in the guest transcript');
    expect(window(guestDir)).toMatchObject({ match_key: 'chat', match_value: 0 });
    appendDecision(guestDir, { match_key: 'chat', match_value: 0, message: { action: 'chat', text: 42 }, _meta: { decision_id: 'bad', origin: 'test' } });
    await until(() => events(guestDir).some((e) => e.type === 'local_decision_rejected'), 'the refusal');
    appendDecision(guestDir, { match_key: 'chat', match_value: 0, message: { action: 'chat', text: 'yes, hello', seq: 99 }, _meta: { decision_id: 'line', origin: 'test' } });
    await until(() => window(guestDir).match_value === 1, 'the second window');
    appendDecision(guestDir, { match_key: 'chat', match_value: 1, message: { action: 'end' }, _meta: { decision_id: 'bye', origin: 'test' } });
    const r = await run;
    expect([r.host.completed, r.guest.completed]).toEqual([true, true]);
    const said = frames(join(out, 'host')).filter((f) => f.from === 'guest' && !f.msg.action.startsWith('_')).map((f) => f.msg);
    expect(said).toEqual([{ action: 'join' }, { action: 'chat', text: 'yes, hello', seq: 1 }, { action: 'end' }].map((m) => expect.objectContaining(m)));
    const order = frames(guestDir).map((f) => `${f.from}:${f.msg.action}`);
    expect(order.indexOf('host:end')).toBeLessThan(order.indexOf('guest:chat'));
    for (const side of ['host', 'guest']) expect(verifyTranscriptAt(c, join(out, side))).toMatchObject({ ok: true, receipt: true });
  }, 60_000);

  it('a hybrid side with nobody deciding says its scripted lines, then leaves', async () => {
    const out = tempDir('free-chat');
    const r = await runLocal({ crypto: c, ...builtin('human-chat'), hooks: await hooksOf('human-chat'), options: {}, outDir: out, guestControl: 'hybrid', minThinkMs: 20, chat: { guest: ['one', 'two'] } });
    expect([r.host.completed, r.guest.completed]).toEqual([true, true]);
    expect(frames(join(out, 'host')).filter((f) => f.from === 'guest' && f.msg.action === 'chat').map((f) => f.msg['text'])).toEqual(['one', 'two']);
  }, 30_000);

  it('a local abort ends an open human window at once instead of at its deadline', async () => {
    const out = tempDir('free-chat');
    const guestDir = join(out, 'guest');
    // The windows run on a clock the test never advances: their deadline never comes, so only the
    // abort can end this session.
    const clock = new ManualClock();
    const run = runLocal({ crypto: c, ...builtin('rps'), hooks: await hooksOf('rps'), options: { best_of: 3 }, outDir: out, guestControl: 'human', decisionTimeoutMs: 60_000, minThinkMs: 0, clock });
    await until(() => window(guestDir).match_key !== undefined, 'the first window');
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
    const clock = new ManualClock();
    const run = runLocal({ crypto: c, ...builtin('rps'), hooks: await hooksOf('rps'), options: { best_of: 3 }, outDir: out, guestControl: 'human', decisionTimeoutMs: 60_000, minThinkMs: 0, clock });
    await until(() => window(guestDir).match_key !== undefined, 'the first window');
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
