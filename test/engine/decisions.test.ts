// Local decisions (NOTES A13): human control waits for `session decide` and aborts on its deadline,
// hybrid falls back to the hooks after its window, invalid decisions are rejected, and an explicit
// origin beats a script's.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendDecision, decisionConfig } from '../../ts/engine/decision.js';
import { runLocal } from '../../ts/engine/local.js';
import type { Frame } from '../../ts/engine/frame.js';
import { tempDir } from '../shared/tmp.js';
import { cli as runCli } from '../shared/cli.js';
import { builtin, c, hooksOf, ManualClock, until } from './harness.js';

const events = (dir: string) => readFileSync(join(dir, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; data?: Record<string, unknown> });
const reveals = (dir: string, from: string) =>
  readFileSync(join(dir, 'transcript.jsonl'), 'utf8').trim().split('\n').slice(1).map((l) => JSON.parse(l) as Frame).filter((f) => f.from === from && f.msg.action === 'reveal').map((f) => f.msg['choice']);

/**
 * Answers every decision window of `dir` once, in turn: `answer(window)` may wait (it is awaited before
 * the next window is looked at).
 */
function autopilot(dir: string, answer: (w: { window_id: string; match_key: string; match_value: number }) => void | Promise<void>): () => Promise<void> {
  const seen = new Set<string>();
  let running = true;
  const loop = (async () => {
    while (running) {
      const w = openWindow(dir);
      if (w && !seen.has(w.window_id)) {
        seen.add(w.window_id);
        await answer(w);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return async () => {
    running = false;
    await loop;
  };
}

function openWindow(dir: string): { window_id: string; match_key: string; match_value: number } | undefined {
  const p = join(dir, 'decision', 'state.json');
  if (!existsSync(p)) return undefined;
  try {
    const w = JSON.parse(readFileSync(p, 'utf8'));
    return w.window_id ? w : undefined;
  } catch {
    return undefined;
  }
}

/** The ids the engine has marked `reason` in consumed.jsonl. */
const marked = (dir: string, reason: string) => {
  const p = join(dir, 'decision', 'consumed.jsonl');
  return existsSync(p) ? readFileSync(p, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((x) => x.reason === reason).map((x) => x.decision_id as string) : [];
};

describe('decision config per control mode', () => {
  it('follows NOTES A13', () => {
    const spec = builtin('rps').spec;
    expect(decisionConfig(spec, 'autonomous')).toBeNull();
    expect(decisionConfig(spec, 'human')).toEqual({ mode: 'manual', control_mode: 'human', timeout_seconds: 120, timeout_action: 'abort', require_explicit: true });
    expect(decisionConfig(spec, 'hybrid')).toEqual({ mode: 'auto', control_mode: 'hybrid', timeout_seconds: 120, timeout_action: 'fallback' });
  });
});

describe('decisions in a session', () => {
  // Every window runs on a ManualClock: it closes when the test advances the clock, never because a
  // loaded machine was slow to deliver a decision.
  it('a human guest plays the values it decides; an invalid one is rejected; explicit beats a script', async () => {
    const out = tempDir('decide');
    const guestDir = join(out, 'guest');
    const stop = autopilot(guestDir, (w) => {
      appendDecision(guestDir, { match_key: w.match_key, match_value: w.match_value, value: 'lizard', _meta: { origin: 'cli' } });
      appendDecision(guestDir, { match_key: w.match_key, match_value: w.match_value, value: 'scissors', _meta: { origin: 'script_runner' } });
      appendDecision(guestDir, { match_key: w.match_key, match_value: w.match_value, value: 'rock', _meta: { origin: 'web' } });
    });
    const r = await runLocal({ crypto: c, ...builtin('rps'), hooks: await hooksOf('rps'), options: { best_of: 3 }, outDir: out, guestControl: 'human', decisionTimeoutMs: 5000, minThinkMs: 0, clock: new ManualClock() });
    await stop();
    expect([r.host.completed, r.guest.completed]).toEqual([true, true]);
    expect(new Set(reveals(guestDir, 'guest'))).toEqual(new Set(['rock']));
    const ev = events(guestDir).map((e) => e.type);
    expect(ev.filter((e) => e === 'local_decision_window_started').length).toBeGreaterThanOrEqual(2);
    expect(ev).toContain('local_decision_consumed');
    expect(marked(guestDir, 'superseded').length).toBeGreaterThan(0);
  });

  it('a human who never decides: the session ends with decision_timeout when the deadline passes', async () => {
    const out = tempDir('decide');
    const clock = new ManualClock();
    const stop = autopilot(join(out, 'guest'), () => clock.advance(150));
    const r = await runLocal({ crypto: c, ...builtin('rps'), hooks: await hooksOf('rps'), options: { best_of: 3 }, outDir: out, guestControl: 'human', decisionTimeoutMs: 150, minThinkMs: 0, clock });
    await stop();
    expect(r.guest).toMatchObject({ completed: false, reason: 'decision_timeout' });
    expect(r.host.completed).toBe(false);
  });

  it('hybrid falls back to the hooks after its window', async () => {
    const out = tempDir('decide');
    const clock = new ManualClock();
    const stop = autopilot(join(out, 'guest'), () => clock.advance(30));
    const r = await runLocal({ crypto: c, ...builtin('coin-flip'), hooks: await hooksOf('coin-flip'), options: { best_of: 1 }, outDir: out, guestControl: 'hybrid', minThinkMs: 30, clock });
    await stop();
    expect(r.guest.completed).toBe(true);
    expect(events(r.guest.dir).map((e) => e.type)).toContain('local_decision_fallback');
  });

  it('session_loop turns take a whole message, checked against the spec', async () => {
    const out = tempDir('decide');
    const guestDir = join(out, 'guest');
    const clock = new ManualClock();
    let first = true;
    const stop = autopilot(guestDir, async (w) => {
      if (first) {
        first = false;
        // An invalid decision: rejected, and the window stays open for the next one.
        appendDecision(guestDir, { match_key: w.match_key, match_value: w.match_value, message: { action: 'guess', attempt: 1, number: 'fifty' }, _meta: { decision_id: 'bad' } });
        await until(() => events(guestDir).some((e) => e.type === 'local_decision_rejected'), 'the rejection');
        // A machine so loaded that this process stalls past the whole window: on the real clock the
        // window would close and the hooks' move would be played instead.
        const stall = Date.now() + 400;
        while (Date.now() < stall);
      }
      const id = `turn-${w.match_value}`;
      appendDecision(guestDir, { match_key: w.match_key, match_value: w.match_value, message: { action: 'guess', attempt: w.match_value + 1, number: 1 + w.match_value }, _meta: { decision_id: id } });
      // Only once the engine has taken it does the window's hold (min_think) run out.
      await until(() => marked(guestDir, 'consumed').includes(id), `decision ${id} to be consumed`);
      clock.advance(300);
    });
    const r = await runLocal({ crypto: c, ...builtin('guess-number'), hooks: await hooksOf('guess-number'), options: { range_min: 1, range_max: 3, max_attempts: 3 }, outDir: out, guestControl: 'hybrid', minThinkMs: 300, clock });
    await stop();
    expect([r.host.completed, r.guest.completed]).toEqual([true, true]);
    expect(marked(guestDir, 'rejected')).toEqual(['bad']);
    expect(events(guestDir).some((e) => e.type === 'local_decision_fallback')).toBe(false);
    // The person guessed 1, 2, 3 in turn until the secret came up, and the hooks kept track.
    const guesses = readFileSync(join(guestDir, 'transcript.jsonl'), 'utf8').trim().split('\n').slice(1).map((l) => JSON.parse(l) as Frame).filter((f) => f.msg.action === 'guess').map((f) => f.msg['number']);
    expect(guesses).toEqual([1, 2, 3].slice(0, guesses.length));
    expect(guesses.length).toBeGreaterThan(0);
  });

  it('hooks that do not support a control mode refuse it', async () => {
    const r = await runLocal({ crypto: c, ...builtin('qna'), hooks: await hooksOf('qna'), outDir: tempDir('decide'), guestControl: 'human', decisionTimeoutMs: 200 });
    expect(r.guest).toMatchObject({ completed: false, reason: 'control_mode_unsupported' });
  });
});

describe('the decision window in snapshot.json', () => {
  it('carries the timing window (ISO and epoch) while a human decides', async () => {
    const out = tempDir('decide');
    const guestDir = join(out, 'guest');
    const clock = new ManualClock();
    let seen: Record<string, unknown> | undefined;
    const stop = autopilot(guestDir, (w) => {
      seen ??= JSON.parse(readFileSync(join(guestDir, 'snapshot.json'), 'utf8'));
      appendDecision(guestDir, { match_key: w.match_key, match_value: w.match_value, value: 'paper' });
    });
    const r = await runLocal({ crypto: c, ...builtin('rps'), hooks: await hooksOf('rps'), options: { best_of: 1 }, outDir: out, guestControl: 'human', decisionTimeoutMs: 3000, minThinkMs: 0, clock });
    await stop();
    expect(r.guest.completed).toBe(true);
    expect(seen).toMatchObject({ phase: 'action_submitted', timing: { match_key: 'round', match_value: 0, phase: 'deciding' } });
    const t = (seen as { timing: Record<string, number> }).timing;
    expect(Math.round(t['deadline_at_epoch']! * 1000)).toBe(Date.parse(String(t['deadline_at'])));
    expect(Math.round(t['deadline_at_epoch']! * 1000)).toBe(clock.now() + 3000);
  });
});

describe('aigenora session decide, end to end', () => {
  /** In process: main() awaits, so the session keeps running meanwhile. */
  const cli = (...args: string[]) => runCli(args);

  it('answers the open window of a running session: an invalid value is rejected, the next one is played', async () => {
    const out = tempDir('decide-cli');
    const guestDir = join(out, 'guest');
    const stop = autopilot(guestDir, async () => {
      const bad = await cli('session', 'decide', guestDir, '--value', 'lizard');
      expect([bad.status, bad.stdout]).toEqual([0, expect.stringMatching(/^decision cli:\S+ for round 0 written/)]);
      await until(() => events(guestDir).some((e) => e.type === 'local_decision_rejected'), 'the rejection of lizard');
      const good = await cli('session', 'decide', guestDir, '--value', 'paper', '--json');
      expect(good.status).toBe(0);
      expect(JSON.parse(good.stdout)).toMatchObject({ match_key: 'round', match_value: 0, value: 'paper', _meta: { origin: 'cli' } });
    });
    const r = await runLocal({ crypto: c, ...builtin('rps'), hooks: await hooksOf('rps'), options: { best_of: 1 }, outDir: out, guestControl: 'human', decisionTimeoutMs: 1000, minThinkMs: 0, clock: new ManualClock() });
    await stop();
    expect([r.host.completed, r.guest.completed]).toEqual([true, true]);
    expect(reveals(guestDir, 'guest')).toEqual(['paper']);
    expect(marked(guestDir, 'rejected')).toHaveLength(1);
    expect(marked(guestDir, 'consumed')).toHaveLength(1);
  });

  it('without an open window it exits 1; bad arguments exit 2; never a stack trace', async () => {
    const dir = tempDir('decide-cli');
    const none = await cli('session', 'decide', dir, '--value', 'rock');
    expect([none.status, none.stdout]).toEqual([1, expect.stringMatching(/no decision window is open/)]);
    mkdirSync(join(dir, 'decision'));
    for (const garbage of ['garbage', 'null', '[]', '{"match_key":"round"}']) {
      writeFileSync(join(dir, 'decision', 'state.json'), garbage);
      const r = await cli('session', 'decide', dir, '--value', 'rock');
      expect([r.status, r.stderr], garbage).toEqual([1, expect.not.stringMatching(/\n\s+at /)]);
    }
    const usage = [
      ['session', 'decide', join(dir, 'missing'), '--value', 'rock'],
      ['session', 'decide', dir, '--match-key', 'round', '--match-value', 'x', '--value', 'rock'],
      ['session', 'decide', dir, '--match-key', 'turn', '--match-value', '0', '--message', 'not json'],
      ['session', 'decide', dir, '--match-key', 'round', '--match-value', '0'],
    ];
    for (const args of usage) {
      const r = await cli(...args);
      expect([r.status, r.stderr], args.join(' ')).toEqual([2, expect.not.stringMatching(/\n\s+at /)]);
    }
    expect(existsSync(join(dir, 'decision', 'decisions.jsonl'))).toBe(false);
  });
});
