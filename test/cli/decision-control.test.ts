// The "decision awaited" line `host` and `join` print when a window opens for their person: what is
// asked and allowed comes from the built-in specs themselves; the command answers the window as written.
import { describe, expect, it } from 'vitest';
import type { Window } from '../../ts/engine/decision-window.js';
import { awaitedLine } from '../../ts/cli/decision-control.js';
import { builtin } from '../engine/harness.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();

function win(w: Partial<Window> & Pick<Window, 'match_key' | 'expects'>, human = true): Window {
  return { window_id: `${w.match_key}:0:1`, match_value: 0, opened_at: iso(0), release_at: iso(1000), deadline_at: human ? iso(120_000) : null, ...w };
}

describe('the decision-awaited line', () => {
  it('a human round names the enum, the deadline and the command', () => {
    expect(awaitedLine(builtin('rps').spec, 'guest', win({ match_key: 'round', expects: 'value' }), '/data/sessions/ab12/guest', T0)).toBe(
      'decision awaited: round 0, reveal.choice, one of: rock, paper, scissors; deadline 2026-01-01T00:02:00.000Z (120 s), then the session ends; answer: aigenora session decide /data/sessions/ab12/guest --value <choice>',
    );
  });

  it("an integer round names its range; a hybrid window says when the hooks' move is played", () => {
    expect(awaitedLine(builtin('weak-wins-all').spec, 'host', win({ match_key: 'round', expects: 'value' }, false), '/d/host', T0)).toBe(
      "decision awaited: round 0, reveal.bid, an integer from 0 to 1000; until 2026-01-01T00:00:01.000Z (1 s), then the hooks' move is played; answer: aigenora session decide /d/host --value <integer>",
    );
  });

  it('a message window offers the messages this side may send, and a template to edit, quoted for the shell', () => {
    const line = awaitedLine(builtin('guess-number').spec, 'guest', win({ match_key: 'turn', expects: 'message' }), "/tmp/it's here/guest", T0)!;
    expect(line).toMatch(/^decision awaited: turn 0, a whole message: guess( or \w+)*; deadline /);
    expect(line).toContain(`answer: aigenora session decide '/tmp/it'\\''s here/guest' --message '{"action":"guess",`);
  });

  it('a hybrid window that closes as it opens (no min_think) is not announced', () => {
    expect(awaitedLine(builtin('rps').spec, 'guest', win({ match_key: 'round', expects: 'value', release_at: iso(0) }, false), '/d', T0)).toBeUndefined();
  });

  it('what reaches the terminal is one escaped line', () => {
    const line = awaitedLine(builtin('rps').spec, 'guest', win({ match_key: 'round', expects: 'value' }), '/tmp/a\nb\u001b[31m', T0)!;
    expect(line).not.toMatch(/[\n\u001b]/);
    expect(line).toContain("'/tmp/a\\nb\\u001b[31m'");
  });
});
