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

/** rps with a human guest: best of `bestOf`, each window open `decisionTimeoutMs` on `clock`. */
async function humanRps(outDir: string, bestOf: number, decisionTimeoutMs: number, clock = new ManualClock()) {
  return runLocal({
    crypto: c,
    ...builtin('rps'),
    hooks: await hooksOf('rps'),
    options: { best_of: bestOf },
    outDir,
    guestControl: 'human',
    decisionTimeoutMs,
    minThinkMs: 0,
    clock,
  });
}

const events = (dir: string) =>
  readFileSync(join(dir, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; data?: Record<string, unknown> });
const reveals = (dir: string, from: string) =>
  readFileSync(join(dir, 'transcript.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => JSON.parse(l) as Frame)
    .filter((f) => f.from === from && f.msg.action === 'reveal')
    .map((f) => f.msg['choice']);

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
  return existsSync(p)
    ? readFileSync(p, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .filter((x) => x.reason === reason)
        .map((x) => x.decision_id as string)
    : [];
};

describe('decision config per control mode', () => {
  it('follows NOTES A13', () => {
    const spec = builtin('rps').spec;
    expect(decisionConfig(spec, 'autonomous')).toBeNull();
    expect(decisionConfig(spec, 'human')).toEqual({
      mode: 'manual',
      control_mode: 'human',
      timeout_seconds: 120,
      timeout_action: 'abort',
      require_explicit: true,
    });
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
    const r = await humanRps(out, 3, 5000);
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
    const r = await humanRps(out, 3, 150, clock);
    await stop();
    expect(r.guest).toMatchObject({ completed: false, reason: 'decision_timeout' });
    expect(r.host.completed).toBe(false);
  });

  it('hybrid falls back to the hooks after its window', async () => {
    const out = tempDir('decide');
    const clock = new ManualClock();
    const stop = autopilot(join(out, 'guest'), () => clock.advance(30));
    const r = await runLocal({
      crypto: c,
      ...builtin('coin-flip'),
      hooks: await hooksOf('coin-flip'),
      options: { best_of: 1 },
      outDir: out,
      guestControl: 'hybrid',
      minThinkMs: 30,
      clock,
    });
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
        appendDecision(guestDir, {
          match_key: w.match_key,
          match_value: w.match_value,
          message: { action: 'guess', attempt: 1, number: 'fifty' },
          _meta: { decision_id: 'bad' },
        });
        await until(() => events(guestDir).some((e) => e.type === 'local_decision_rejected'), 'the rejection');
        // A machine so loaded that this process stalls past the whole window: on the real clock the
        // window would close and the hooks' move would be played instead.
        const stall = Date.now() + 400;
        while (Date.now() < stall);
      }
      const id = `turn-${w.match_value}`;
      appendDecision(guestDir, {
        match_key: w.match_key,
        match_value: w.match_value,
        message: { action: 'guess', attempt: w.match_value + 1, number: 1 + w.match_value },
        _meta: { decision_id: id },
      });
      // Only once the engine has taken it does the window's hold (min_think) run out.
      await until(() => marked(guestDir, 'consumed').includes(id), `decision ${id} to be consumed`);
      clock.advance(300);
    });
    const r = await runLocal({
      crypto: c,
      ...builtin('guess-number'),
      hooks: await hooksOf('guess-number'),
      options: { range_min: 1, range_max: 3, max_attempts: 3 },
      outDir: out,
      guestControl: 'hybrid',
      minThinkMs: 300,
      clock,
    });
    await stop();
    expect([r.host.completed, r.guest.completed]).toEqual([true, true]);
    expect(marked(guestDir, 'rejected')).toEqual(['bad']);
    expect(events(guestDir).some((e) => e.type === 'local_decision_fallback')).toBe(false);
    // The person guessed 1, 2, 3 in turn until the secret came up, and the hooks kept track.
    const guesses = readFileSync(join(guestDir, 'transcript.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => JSON.parse(l) as Frame)
      .filter((f) => f.msg.action === 'guess')
      .map((f) => f.msg['number']);
    expect(guesses).toEqual([1, 2, 3].slice(0, guesses.length));
    expect(guesses.length).toBeGreaterThan(0);
  });

  it('hooks that do not support a control mode refuse it', async () => {
    const r = await runLocal({
      crypto: c,
      ...builtin('qna'),
      hooks: await hooksOf('qna'),
      outDir: tempDir('decide'),
      guestControl: 'human',
      decisionTimeoutMs: 200,
    });
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
    const r = await humanRps(out, 1, 3000, clock);
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

  it('answers the open window of a running session and waits for the verdict: lizard is refused with the reason, paper accepted', async () => {
    const out = tempDir('decide-cli');
    const guestDir = join(out, 'guest');
    const stop = autopilot(guestDir, async () => {
      const bad = await cli('session', 'decide', guestDir, '--value', 'lizard');
      // The engine's refusal, what the window allows, and that it is still open: no need to read events.jsonl.
      expect(bad).toEqual({
        status: 1,
        stdout: '',
        stderr: expect.stringMatching(
          /^aigenora session decide: DECISION_REFUSED: not a valid choice: \S.*; allowed: reveal\.choice, one of: rock, paper, scissors; the window round 0 stays open until \S+\n$/,
        ),
      });
      expect(events(guestDir).filter((e) => e.type === 'local_decision_rejected')).toHaveLength(1);
      expect(openWindow(guestDir)).toMatchObject({ match_key: 'round', match_value: 0 });
      const good = await cli('session', 'decide', guestDir, '--value', 'paper', '--json');
      expect(good.status).toBe(0);
      expect(JSON.parse(good.stdout)).toMatchObject({ match_key: 'round', match_value: 0, value: 'paper', _meta: { origin: 'cli' }, verdict: 'accepted' });
    });
    const r = await humanRps(out, 1, 1000);
    await stop();
    expect([r.host.completed, r.guest.completed]).toEqual([true, true]);
    expect(reveals(guestDir, 'guest')).toEqual(['paper']);
    expect(marked(guestDir, 'rejected')).toHaveLength(1);
    expect(marked(guestDir, 'consumed')).toHaveLength(1);
  });

  it('without an open window it exits 1 with NO_WINDOW; bad arguments exit 2; never a stack trace', async () => {
    const dir = tempDir('decide-cli');
    const none = await cli('session', 'decide', dir, '--value', 'rock');
    expect(none).toEqual({
      status: 1,
      stdout: '',
      stderr: `aigenora session decide: NO_WINDOW: no decision window is open in ${dir}: no session has run in this directory yet (--match-key and --match-value decide a window ahead)\n`,
    });
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
      ['session', 'decide', dir, '--match-key', 'turn', '--match-value', '0', '--message', '[1]'],
      ['session', 'decide', dir, '--match-key', 'round', '--match-value', '0', '--value', 'rock', '--timeout-seconds', '0'],
      ['session', 'decide', dir, '--match-key', 'round', '--match-value', '0', '--value', 'rock', '--no-wait', '--timeout-seconds', '5'],
    ];
    for (const args of usage) {
      const r = await cli(...args);
      expect([r.status, r.stderr], args.join(' ')).toEqual([2, expect.not.stringMatching(/\n\s+at /)]);
    }
    expect(existsSync(join(dir, 'decision', 'decisions.jsonl'))).toBe(false);
  });

  it('a decision another one was preferred to ends with DECISION_SUPERSEDED', async () => {
    const out = tempDir('decide-cli');
    const guestDir = join(out, 'guest');
    const decisions = join(guestDir, 'decision', 'decisions.jsonl');
    let decided: ReturnType<typeof cli> | undefined;
    const stop = autopilot(guestDir, async (w) => {
      if (w.match_value === 0) {
        // Round 1 is decided ahead twice: by a script through the CLI, and by a person (an explicit
        // origin, which the engine prefers). Both are written before its window opens.
        appendDecision(guestDir, { match_key: 'round', match_value: 1, value: 'paper', _meta: { decision_id: 'person', origin: 'web' } });
        decided = cli('session', 'decide', guestDir, '--match-key', 'round', '--match-value', '1', '--value', 'rock', '--origin', 'script_runner');
        await until(() => existsSync(decisions) && readFileSync(decisions, 'utf8').includes('script_runner'), 'the CLI to write its decision');
      }
      if (w.match_value !== 1) appendDecision(guestDir, { match_key: w.match_key, match_value: w.match_value, value: 'scissors' });
    });
    const r = await humanRps(out, 3, 5000);
    await stop();
    expect([r.host.completed, r.guest.completed]).toEqual([true, true]);
    expect(reveals(guestDir, 'guest')[1]).toBe('paper');
    expect(await decided).toEqual({
      status: 1,
      stdout: '',
      stderr: expect.stringMatching(/^aigenora session decide: DECISION_SUPERSEDED: another decision for round 1 was taken instead of cli:\S+\n$/),
    });
  });

  it('a session that ends before the engine reads the decision: DECISION_WINDOW_CLOSED, with the reason', async () => {
    const out = tempDir('decide-cli');
    const guestDir = join(out, 'guest');
    const clock = new ManualClock();
    let decided: ReturnType<typeof cli> | undefined;
    const stop = autopilot(guestDir, async () => {
      // A decision for round 1 while round 0 waits; then round 0's deadline passes and the session ends.
      decided = cli('session', 'decide', guestDir, '--match-key', 'round', '--match-value', '1', '--value', 'rock');
      await until(() => existsSync(join(guestDir, 'decision', 'decisions.jsonl')), 'the CLI to write its decision');
      clock.advance(150);
    });
    const r = await humanRps(out, 3, 150, clock);
    await stop();
    expect(r.guest).toMatchObject({ completed: false, reason: 'decision_timeout' });
    expect(await decided).toEqual({
      status: 1,
      stdout: '',
      stderr: 'aigenora session decide: DECISION_WINDOW_CLOSED: the session ended (decision_timeout) before the engine read the decision\n',
    });
  });

  it('a decision for a window ahead: with no engine to read it, DECISION_TIMEOUT after --timeout-seconds; --no-wait only writes it', async () => {
    const dir = tempDir('decide-cli');
    const t0 = Date.now();
    const late = await cli('session', 'decide', dir, '--match-key', 'round', '--match-value', '3', '--value', 'rock', '--timeout-seconds', '0.3');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    expect(late).toEqual({
      status: 1,
      stdout: '',
      stderr: expect.stringMatching(
        /^aigenora session decide: DECISION_TIMEOUT: no verdict on cli:\S+ for round 3 within 0\.3 s .*stays in decisions\.jsonl\n$/,
      ),
    });
    const quick = await cli('session', 'decide', dir, '--match-key', 'round', '--match-value', '3', '--value', 'paper', '--no-wait');
    expect(quick).toEqual({ status: 0, stdout: expect.stringMatching(/^decision cli:\S+ for round 3 written\n$/), stderr: '' });
    const written = readFileSync(join(dir, 'decision', 'decisions.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).value);
    expect(written).toEqual(['rock', 'paper']);
  });
});
