// The progress lines `aigenora host` and `aigenora join` print while a session runs (ts/cli/progress.ts):
// every two-party built-in plays a real session in one process (runLocal), and the lines made of its
// messages must say the moves and the score those messages carry, never "undefined" or "NaN", and not
// flood for the games that send many messages. Then the spec-driven fallback for protocols without a
// narrator, and what a hostile peer's text becomes on a terminal.
import { describe, expect, it } from 'vitest';
import { MAX_GENERIC_LINE, MAX_LINE, progressLines, terminalSafe } from '../../ts/cli/progress.js';
import { runLocal } from '../../ts/engine/local.js';
import type { HooksModule, Message, Role } from '../../ts/hooks/types.js';
import { toHex } from '../../ts/crypto/encoding.js';
import { findBuiltin } from '../../ts/protocols/index.js';
import { Board as ConnectFourBoard } from '../../ts/protocols/connect-four/hooks.js';
import { points as briscolaPoints, RANKS as BRISCOLA_RANKS, SUITS as BRISCOLA_SUITS } from '../../ts/protocols/briscola/hooks.js';
import { RANKS as EIGHTS_RANKS, SUITS as EIGHTS_SUITS } from '../../ts/protocols/crazy-eights/hooks.js';
import type { Spec } from '../../ts/spec/types.js';
import { builtin, c, hooksOf } from '../engine/harness.js';
import { dealBytes, dealSecrets, memoCrypto } from '../mp/deal.js';
import { tempDir } from '../shared/tmp.js';

interface Frame {
  from: Role;
  msg: Message;
}
interface Played {
  spec: Spec;
  hooks: HooksModule;
  frames: Frame[];
}

const mp = memoCrypto(c);

/** One session of a built-in, both agents in this process: every protocol message, as the host saw them. */
async function play(
  folder: string,
  o: { seed?: number; options?: Record<string, unknown>; chat?: { host?: string[]; guest?: string[] } } = {},
): Promise<Played> {
  const b = builtin(folder);
  const hooks = await hooksOf(folder);
  const frames: Frame[] = [];
  const seed = o.seed ?? 1;
  // Mental poker on the pinned deal of test/mp/deal.ts (fixture RSA keys), as the engine's built-in test plays it.
  const pinned = b.spec.flow?.mode === 'mental_poker' && {
    keySeeds: { host: new Uint8Array(32).fill(7), guest: new Uint8Array(32).fill(9) },
    nonce: toHex(dealBytes('builtin session nonce', 16)),
    mpSecrets: { host: dealSecrets(mp.ot, 'host', { shuffle: seed }), guest: dealSecrets(mp.ot, 'guest', { shuffle: seed }) },
  };
  const r = await runLocal({
    crypto: pinned ? mp : c,
    ...b,
    hooks,
    seed,
    outDir: tempDir('progress'),
    ...(o.options && { options: o.options }),
    ...(o.chat && { chat: o.chat }),
    ...pinned,
    onMessage: (from, msg) => frames.push({ from, msg: structuredClone(msg) }),
  });
  expect([r.host.reason, r.guest.reason], `${r.host.detail ?? ''} ${r.guest.detail ?? ''}`).toEqual(['completed', 'completed']);
  return { spec: b.spec, hooks, frames };
}

/** The protocol's own messages: the engine's (`_receipt`, …) reach the printer too, and it skips them. */
function protocolFrames(p: Played): Frame[] {
  return p.frames.filter((f) => !f.msg.action.startsWith('_'));
}

/** What `aigenora join` (me: guest) or `host` would print for the session. */
function narrate(p: Pick<Played, 'spec' | 'hooks' | 'frames'>, me: Role = 'guest'): string[] {
  const lines = progressLines(p, me);
  return p.frames.flatMap((f) => lines(f.from, f.msg));
}

const of = (p: Played, action: string) => p.frames.filter((f) => f.msg.action === action).map((f) => f.msg);
const last = <T>(a: readonly T[]): T => a[a.length - 1]!;

function expectClean(lines: string[], max = MAX_LINE) {
  expect(lines.length).toBeGreaterThan(0);
  for (const l of lines) {
    expect(l).not.toMatch(/undefined|NaN|\[object Object\]/);
    expect(l).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(Array.from(l).length).toBeLessThanOrEqual(max);
  }
}

/** Each needle in a line after the previous needle's: the lines tell the session in its order. */
function inOrder(lines: string[], needles: (string | RegExp)[]) {
  let at = -1;
  for (const n of needles) {
    const i = lines.findIndex((l, k) => k > at && (typeof n === 'string' ? l.includes(n) : n.test(l)));
    expect(i, `${String(n)} after line ${at}: ${lines[at] ?? '(start)'}`).toBeGreaterThan(at);
    at = i;
  }
}

/** Without its narrator: a user protocol, shown from its spec. */
const bare = (p: Played): Played => ({ ...p, hooks: { mode: p.hooks.mode, create: p.hooks.create } });

describe('each two-party built-in narrates its own session', () => {
  it("rock-paper-scissors: one line per round in the demo's format, then the winner", async () => {
    const p = await play('rps', { options: { best_of: 5 } });
    const lines = narrate(p);
    expectClean(lines);
    const results = of(p, 'round_result');
    expect(lines).toEqual([
      'best of 5: first to 3 wins',
      ...results.map(
        (m) =>
          `round ${m['round']}: host ${m['host_choice']} vs guest ${m['guest_choice']} → ${m['round_winner']} (host ${m['host_wins']}, guest ${m['guest_wins']})`,
      ),
      `game over: ${last(results)['game_winner']} wins (host ${last(results)['host_wins']}, guest ${last(results)['guest_wins']})`,
    ]);
  });

  it('coin flip: both calls and the wins per round', async () => {
    const p = await play('coin-flip', { seed: 2 });
    const lines = narrate(p);
    expectClean(lines);
    const results = of(p, 'round_result');
    expect(lines).toEqual([
      'best of 3: first to 2 wins',
      ...results.map(
        (m) =>
          `round ${m['round']}: host ${m['host_choice']} vs guest ${m['guest_choice']} → ${m['round_winner']} (host ${m['host_wins']}, guest ${m['guest_wins']})`,
      ),
      `game over: ${last(results)['game_winner']} wins (host ${last(results)['host_wins']}, guest ${last(results)['guest_wins']})`,
    ]);
  });

  it('weak wins all: both bids, the score and what each side has left', async () => {
    const p = await play('weak-wins-all', { options: { total_points: 100, total_rounds: 4 } });
    const lines = narrate(p);
    expectClean(lines);
    expect(lines[0]).toBe('4 rounds, 100 points each to bid: the lower bid scores both');
    const results = of(p, 'round_result');
    expect(results).toHaveLength(4);
    const score = (m: Message) => `score host ${m['host_score']}, guest ${m['guest_score']}; left host ${m['host_remaining']}, guest ${m['guest_remaining']}`;
    inOrder(lines, [
      ...results.map((m) => `round ${m['round']}: host bids ${m['host_bid']} vs guest bids ${m['guest_bid']} → ${m['round_winner']} (${score(m)})`),
      `game over: ${last(results)['game_winner'] === 'draw' ? 'a draw' : `${last(results)['game_winner']} wins`} (${score(last(results))})`,
    ]);
  });

  it('hero duel: the heroes, each move with the damage it did, the HP left', async () => {
    const p = await play('hero-duel', { options: { host_hero: 'mage', guest_hero: 'tank', max_rounds: 30 } });
    const lines = narrate(p);
    expectClean(lines);
    const results = of(p, 'round_result');
    const hp = (m: Message) => `HP host ${m['host_hp']}, guest ${m['guest_hp']}`;
    inOrder(lines, [
      "the host's mage against the guest's tank, at most 30 rounds",
      ...results.map(
        (m) =>
          `round ${m['round']}: host ${m['host_move']} (${m['host_damage_dealt']} damage) vs guest ${m['guest_move']} (${m['guest_damage_dealt']} damage) → ${m['round_winner']} (${hp(m)})`,
      ),
      `game over: ${last(results)['game_winner'] === 'draw' ? 'a draw' : `${last(results)['game_winner']} wins`} (${hp(last(results))})`,
    ]);
  });

  it('guess the number: each guess, the hint against that guess, the secret at the end', async () => {
    const p = await play('guess-number', { seed: 3 });
    const lines = narrate(p);
    expectClean(lines);
    const needles: string[] = ['guess a number from 1 to 100 in 7 attempts'];
    let guessed = 0;
    for (const { msg } of p.frames) {
      if (msg.action === 'guess') needles.push(`guest guesses ${(guessed = msg['number'] as number)} (attempt ${msg['attempt']})`);
      if (msg.action === 'hint') needles.push(`host: the number is ${msg['result']} than ${guessed} (${msg['attempts_used']} of 7 attempts used)`);
    }
    const end = last(of(p, 'game_over'));
    needles.push(`the number was ${end['secret_number']}`);
    inOrder(lines, needles);
    expect(last(lines)).toContain(`${end['winner']} wins`);
  });

  it('human chat: who said what, from either side', async () => {
    const p = await play('human-chat', { chat: { host: ['hello from the host'], guest: ['hi', 'bye now'] } });
    expectClean(narrate(p, 'guest'));
    inOrder(narrate(p, 'guest'), ['peer #1: hello from the host', '(peer left)']);
    inOrder(narrate(p, 'guest'), ['you #1: hi', 'you #2: bye now', '(you left)']);
    inOrder(narrate(p, 'host'), ['you #1: hello from the host', '(you left)']);
    inOrder(narrate(p, 'host'), ['peer #1: hi', 'peer #2: bye now', '(peer left)']);
  });

  it('gomoku: every stone where it went, and the five that end it', async () => {
    const p = await play('gomoku', { options: { board_size: 9 } });
    const lines = narrate(p);
    expectClean(lines);
    const needles: string[] = ['9×9 board, five in a row wins; the guest (black) moves first'];
    for (const { msg } of p.frames) {
      const at = `row ${msg['row']}, col ${msg['col']}`;
      if (msg.action === 'move') needles.push(`guest (black) plays ${at}`);
      if (msg.action === 'round_result') needles.push(msg['player'] === 'host' ? `host (white) plays ${at}` : `the guest's stone at ${at} ends the game`);
    }
    inOrder(lines, needles);
    const end = last(of(p, 'round_result'));
    expect(last(lines)).toContain(end['winner'] === 'none' ? 'the board is full: a draw' : `five in a row: ${end['winner']} wins`);
  });

  it("connect four: each column and the row the stone landed on (the guest's by the rules' own board)", async () => {
    const p = await play('connect-four', { seed: 4 });
    const lines = narrate(p);
    expectClean(lines);
    const ready = of(p, 'ready')[0]!;
    const board = new ConnectFourBoard(ready['cols'] as number, ready['rows'] as number);
    const needles: string[] = [`${ready['cols']} columns × ${ready['rows']} rows, four in a row wins; the guest (red) drops first`];
    for (const { msg } of p.frames) {
      const col = msg['col'] as number;
      if (msg.action === 'move') needles.push(`guest (red) drops into column ${col} → row ${board.drop(col, 'guest')}`);
      if (msg.action === 'round_result' && msg['player'] === 'host') {
        expect(board.drop(col, 'host')).toBe(msg['row']);
        needles.push(`host (yellow) drops into column ${col} → row ${msg['row']}`);
      }
    }
    inOrder(lines, needles);
    const end = last(protocolFrames(p)).msg;
    expect(last(lines)).toMatch(
      end['winner'] === 'host' || end['winner'] === 'guest' ? new RegExp(`(four in a row: |game over: )${end['winner']} wins$`) : /a draw$/,
    );
  });

  it("reversi: each move with its flips and the stone count, the guest's agreeing with the host's next count", async () => {
    const p = await play('reversi', { options: { board_size: 6 } });
    const lines = narrate(p);
    expectClean(lines);
    expect(lines[0]).toBe('6×6 board, most stones wins; the guest (black) moves first');
    let [black, white] = [2, 2];
    for (const { msg } of p.frames) {
      if (msg.action === 'move') {
        const line = lines.find((l) => l.startsWith(`guest (black) plays row ${msg['row']}, col ${msg['col']}, flipping`))!;
        const [, n, b, w] = /flipping (\d+) — black (\d+), white (\d+)$/.exec(line)!.map(Number) as [number, number, number, number];
        expect(n).toBeGreaterThan(0);
        expect([b, w]).toEqual([black + n + 1, white - n]);
        [black, white] = [b, w];
      }
      if (msg.action === 'round_result') {
        const flipped = msg['flipped'] as number;
        // The host's own count follows from the guest's narrated one.
        expect([msg['black'], msg['white']]).toEqual(msg['passed'] ? [black, white] : [black - flipped, white + flipped + 1]);
        [black, white] = [msg['black'] as number, msg['white'] as number];
        const move = msg['passed'] ? 'passes' : `plays row ${msg['row']}, col ${msg['col']}, flipping ${flipped}`;
        expect(lines).toContainEqual(expect.stringContaining(`host (white) ${move} — black ${black}, white ${white}`));
      }
    }
    const end = last(of(p, 'round_result'));
    expect(last(lines)).toContain(`game over: ${end['winner'] === 'none' ? 'a draw' : `${end['winner']} wins`}`);
  });

  it('crazy eights: a line per card played or drawn with the hands and stock, none for the cryptography', async () => {
    const p = await play('crazy-eights');
    const lines = narrate(p);
    expectClean(lines);
    const plays = of(p, 'mp_play');
    const draws = p.frames.filter((f) => f.msg.action === 'mp_ot_request').length - 10;
    expect(lines.length).toBeLessThanOrEqual(plays.length + draws + of(p, 'mp_pass').length + 7);
    expect(lines.join('\n')).not.toMatch(/mp_|k_inner|ot_/);
    inOrder(lines, ['the host sealed the deck (52 cards)', 'the guest shuffled it', 'dealt: host 5 cards, guest 5, stock 42']);
    inOrder(
      lines,
      plays.map((m) => {
        const call = typeof m['call_suit'] === 'number' ? `, calling ${EIGHTS_SUITS[m['call_suit']]}` : '';
        return `plays ${EIGHTS_RANKS[m['rank'] as number]}${EIGHTS_SUITS[m['suit'] as number]}${call} — `;
      }),
    );
    // Every card is somewhere: in a hand, in the stock, or played.
    let played = 0;
    for (const l of lines) {
      const m = /(host|guest) (plays|draws).* — host (\d+) cards?, guest (\d+), stock (\d+)$/.exec(l);
      if (!m) continue;
      if (m[2] === 'plays') played++;
      expect(Number(m[3]) + Number(m[4]) + Number(m[5]) + played, l).toBe(52);
    }
    expect(played).toBe(plays.length);
    expect(lines.filter((l) => l.endsWith('audited the game: passed'))).toHaveLength(2);
  });

  it('briscola: each card, who takes each trick for how many points, and the final count of 120', async () => {
    const p = await play('briscola', { seed: 2 });
    const lines = narrate(p);
    expectClean(lines);
    const plays = of(p, 'mp_play');
    expect(plays).toHaveLength(40);
    const name = (m: Message) => `${BRISCOLA_RANKS[m['rank'] as number]}${BRISCOLA_SUITS[m['suit'] as number]}`;
    inOrder(
      lines,
      plays.map((m, i) => (i % 2 === 0 ? `host leads ${name(m)}` : `guest plays ${name(m)}: `)),
    );
    const score = { host: 0, guest: 0 };
    for (const [i, l] of lines.filter((x) => x.includes('takes the trick')).entries()) {
      const [, who, won] = /: (host|guest) takes the trick \(\+(\d+)\)/.exec(l)!;
      expect(Number(won)).toBe(briscolaPoints(plays[2 * i]!['rank'] as number) + briscolaPoints(plays[2 * i + 1]!['rank'] as number));
      score[who as Role] += Number(won);
      expect(l).toContain(`points host ${score.host}, guest ${score.guest}`);
    }
    expect(score.host + score.guest).toBe(120);
    const winner = score.host === score.guest ? 'a draw' : `${score.host > score.guest ? 'host' : 'guest'} wins`;
    expect(lines).toContain(`game over: ${winner}, ${score.host} to ${score.guest}`);
    // Three lines of set-up and deal, one per card, two audits: the refills and transfers say nothing.
    expect(lines).toHaveLength(3 + 40 + 1 + 2);
  });

  it('tank battle: the hits, kills and the end, and the state every ten seconds, not a line per frame', async () => {
    const p = await play('tank-battle', { options: findBuiltin('tank-battle')!.profiles['quick']!.options });
    const lines = narrate(p);
    expectClean(lines);
    const frames = of(p, 'rt_frame').map((m) => m['frame'] as { tick: number; events: Record<string, unknown>[]; outcome: string });
    expect(lines.length).toBeLessThan(frames.length / 10);
    expect(lines[0]).toBe('battle on a 31×31 map: 3 tanks a side, at most 900 ticks (10 a second)');
    const hits = frames.flatMap((f) =>
      f.events
        .filter((e) => e['type'] === 'hit')
        .map((e) => new RegExp(`^tick ${f.tick}: .*${e['attacker']} hits ${e['victim']} \\(${e['victim_hp']} HP left\\)`)),
    );
    expect(hits.length).toBeGreaterThan(0);
    inOrder(lines, hits);
    for (const f of frames.filter(
      (x) => x.tick % 100 === 0 && !x.events.some((e) => ['hit', 'destroyed', 'pickup', 'game_over'].includes(e['type'] as string)),
    )) {
      expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^tick ${f.tick}: host \\d+ tanks? \\(\\d+ HP\\), guest \\d+ tanks? \\(\\d+ HP\\)$`)));
    }
    const end = last(frames);
    expect(last(lines)).toMatch(new RegExp(`^tick ${end.tick}: .*battle over: ${end.outcome === 'draw' ? 'a draw' : `${end.outcome} wins`}`));
  });
});

describe("protocols without a narrator: the spec's fields", () => {
  it('a turn game: each message with its declared fields, short lines', async () => {
    const p = bare(await play('connect-four'));
    const lines = narrate(p);
    expectClean(lines, MAX_GENERIC_LINE);
    expect(lines.slice(0, 3)).toEqual([
      'guest join cols=7 rows=6',
      'host ready cols=7 rows=6 first=guest',
      `guest move turn=1 col=${of(p, 'move')[0]!['col']}`,
    ]);
    expect(lines).toHaveLength(protocolFrames(p).length);
  });

  it('simultaneous rounds: no commitments, reveals without their nonce, every result', async () => {
    const p = bare(await play('rps'));
    const lines = narrate(p);
    expectClean(lines, MAX_GENERIC_LINE);
    expect(lines.join('\n')).not.toMatch(/commit|nonce|hash/);
    for (const m of of(p, 'reveal')) expect(lines.filter((l) => l.endsWith(`reveal round=${m['round']} choice=${m['choice']}`)).length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.startsWith('host round_result '))).toHaveLength(of(p, 'round_result').length);
  });

  it('mental poker: plays, draws and audits, no keys, no transfers', async () => {
    const p = bare(await play('crazy-eights'));
    const lines = narrate(p);
    expectClean(lines, MAX_GENERIC_LINE);
    expect(lines.join('\n')).not.toMatch(/k_inner|k_outer|id_b|mp_ot|blobs/);
    expect(lines.filter((l) => / mp_play rank=\d+ suit=\d+/.test(l))).toHaveLength(of(p, 'mp_play').length);
    expect(lines.filter((l) => l.endsWith('draws a card'))).toHaveLength(p.frames.filter((f) => f.msg.action === 'mp_ot_request').length - 10);
    expect(lines.filter((l) => l.endsWith('signs the audit: passed'))).toHaveLength(2);
  });

  it('realtime: the start and the end, not a line per frame', async () => {
    const p = bare(await play('tank-battle', { options: findBuiltin('tank-battle')!.profiles['short']!.options }));
    const lines = narrate(p);
    expectClean(lines, MAX_GENERIC_LINE);
    const end = last(of(p, 'rt_frame'))['frame'] as { tick: number; outcome: string };
    expect(lines[0]).toBe('host rt_ready: the match starts at 10 ticks a second');
    expect(last(lines)).toBe(`tick ${end.tick}: the match is over, outcome ${end.outcome}`);
    expect(lines.length).toBeLessThanOrEqual(2 + Math.floor(end.tick / 100));
  });

  it("a narrator that throws is replaced by the spec's lines for that message; one that cannot start, for all", async () => {
    const p = await play('connect-four');
    const generic = narrate(bare(p));
    const throwing: HooksModule = {
      ...p.hooks,
      narrator: () => (msg) => {
        if (msg.action === 'move') throw new Error('boom');
        return [];
      },
    };
    expect(narrate({ ...p, hooks: throwing })).toEqual(generic.filter((l) => l.startsWith('guest move ')));
    const broken: HooksModule = {
      ...p.hooks,
      narrator: () => {
        throw new Error('boom');
      },
    };
    expect(narrate({ ...p, hooks: broken })).toEqual(generic);
  });

  it("a daemon host's next session starts a fresh narrator (it opens with the guest's join)", async () => {
    const p = await play('reversi');
    const once = narrate(p);
    expect(narrate({ ...p, frames: [...p.frames, ...p.frames] })).toEqual([...once, ...once]);
  });
});

describe('peer text on a terminal', () => {
  const HOSTILE = '\u001b[2J\u001b]0;owned\u0007hi\r\nround 9: host rock vs guest paper → host (host 9, guest 0)\u202e\u2066txt\u0085\u2028';

  it('escapes what would drive the terminal or forge a line, and keeps the text readable', () => {
    expect(terminalSafe(HOSTILE)).toBe(
      '\\u001b[2J\\u001b]0;owned\\u0007hi\\r\\nround 9: host rock vs guest paper → host (host 9, guest 0)\\u202e\\u2066txt\\u0085\\u2028',
    );
    expect(terminalSafe('tab\there, é ü 😀 日本')).toBe('tab\\there, é ü 😀 日本');
  });

  it('cuts a huge text to a bounded line, on a character boundary', () => {
    const huge = terminalSafe('x'.repeat(1_000_000));
    expect(Array.from(huge)).toHaveLength(MAX_LINE);
    expect(huge.endsWith('x…')).toBe(true);
    const emoji = terminalSafe('😀'.repeat(5000), 11);
    expect(emoji).toBe(`${'😀'.repeat(10)}…`);
    expect(terminalSafe('\u0007'.repeat(100_000), 20)).toBe(`${'\\u0007'.repeat(3)}\\…`);
  });

  it("a hostile chat line stays one escaped line of the peer's; a whole 2000-character line is kept", async () => {
    const hooks = await hooksOf('human-chat');
    const { spec } = builtin('human-chat');
    const lines = progressLines({ spec, hooks }, 'guest');
    const said = lines('host', { action: 'chat', seq: 1, text: HOSTILE });
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^peer #1: \\u001b\[2J/);
    expect(said[0]).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u202e\u2066]/);
    const long = 'é'.repeat(2000);
    expect(lines('host', { action: 'chat', seq: 2, text: long })).toEqual([`peer #2: ${long}`]);
    expect(Array.from(lines('host', { action: 'chat', seq: 3, text: 'y'.repeat(1_000_000) })[0]!)).toHaveLength(MAX_LINE);
  });

  it("a user protocol's text field: quoted, escaped and short", () => {
    const spec = {
      name: 'notes',
      messages: [
        {
          name: 'note',
          direction: 'both',
          fields: { action: { type: 'enum', values: ['note'], required: true }, body: { type: 'text', required: true }, tag: { type: 'hash' } },
        },
      ],
      flow: { mode: 'free' },
    } as unknown as Spec;
    const lines = progressLines({ spec, hooks: {} }, 'host');
    const [line] = lines('guest', { action: 'note', body: `${HOSTILE}${'z'.repeat(1_000_000)}`, tag: 'ab'.repeat(32) });
    expect(line).toMatch(/^guest note body="\\u001b\[2J\\u001b\]0;owned\\u0007hi\\r\\nround 9/);
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u202e\u2066]/);
    expect(Array.from(line!).length).toBeLessThanOrEqual(MAX_GENERIC_LINE);
    expect(lines('guest', { action: 'note', body: 'hi', tag: 'ab'.repeat(32) })).toEqual(['guest note body="hi" tag=abababab…']);
    // JSON quoting escapes the C0 controls itself; the terminal escaping does the rest (bidi, separators, C1).
    expect(lines('guest', { action: 'note', body: '\u202e\u2066txt\u0085\u2028' })).toEqual(['guest note body="\\u202e\\u2066txt\\u0085\\u2028"']);
  });
});
