// Reversi, Gomoku and Connect Four: their rules on hand-built boards, the host's refusals with the spec's
// reasons, the guest catching a host that misreports, and, where the reference's Python hooks can be
// imported, the same legality, flips, counts, wins and autonomous moves as the reference's own functions;
// for Connect Four, whose hooks pick their moves differently, the reference's own host and guest answer
// our guest's and host's messages of whole games with exactly our messages (rows, turns, outcomes).
import { describe, expect, it } from 'vitest';
import { needReferencePython } from '../shared/require.js';
import type { HooksModule, Message, SessionLoopHooks } from '../../ts/hooks/types.js';
import connectFour from '../../ts/protocols/connect-four/hooks.js';
import gomoku, { Board as Gomoku } from '../../ts/protocols/gomoku/hooks.js';
import reversi, { Board as Reversi, type Side } from '../../ts/protocols/reversi/hooks.js';
import { MessageValidator } from '../../ts/spec/index.js';
import { loadBuiltinSpec, play } from './play.js';
import { build, buildAsync, referenceRequests, type Built } from './reference-batch.js';

const sorted = (ms: readonly (readonly number[])[]) => ms.map((m) => m.join(',')).sort();

/** A host session of `module` that has accepted a join, with every reply checked against the spec. */
function host(module: HooksModule, folder: string, options: Record<string, unknown>) {
  const h = module.create({ role: 'host', options, args: [], stateDir: '', decision: null, random: () => 0 }) as unknown as SessionLoopHooks;
  const v = new MessageValidator(loadBuiltinSpec(folder));
  const ask = (msg: Message) => {
    const r = h.proto_host_handle(msg) as { response: Message; abort?: boolean; completed?: boolean };
    expect(v.check(r.response, 'host_to_guest').ok, JSON.stringify(r.response)).toBe(true);
    return r;
  };
  h.proto_host_handle_join({ action: 'join', ...options });
  return ask;
}

/** The module with the host's round_results passed through `bend`. */
const lyingHost = (module: HooksModule, bend: (m: Message) => Message): HooksModule => ({
  mode: module.mode,
  create: (ctx) => {
    const h = module.create(ctx) as unknown as SessionLoopHooks;
    if (ctx.role !== 'host') return h as never;
    return {
      ...h,
      proto_host_handle: (m: Message) => {
        const r = h.proto_host_handle(m) as { response: Message };
        return r.response.action === 'round_result' ? { ...r, response: bend(r.response) } : r;
      },
    } as never;
  },
});

describe('reversi rules', () => {
  it('starts from the central cross with four moves for black', () => {
    const b = new Reversi(8);
    expect([b.count('guest'), b.count('host')]).toEqual([2, 2]);
    expect(sorted(b.legal('guest'))).toEqual(
      sorted([
        [2, 3],
        [3, 2],
        [4, 5],
        [5, 4],
      ]),
    );
    expect(sorted(new Reversi(6).legal('host'))).toEqual(
      sorted([
        [1, 3],
        [2, 4],
        [3, 1],
        [4, 2],
      ]),
    );
  });

  it('flips every bracketed line at once and nothing past a gap or the edge', () => {
    const b = Reversi.from(['B.B...', '.WW...', 'BW.WWB', '.W....', '.B....', '......']);
    // (2,2): up to (0,2) over (1,2); left to (2,0) over (2,1); right to (2,5) over (2,3),(2,4);
    // up-left to (0,0) over (1,1); down-left over (3,1) reaches (4,0), empty: no flip.
    expect(sorted(b.flips(2, 2, 'guest'))).toEqual(
      sorted([
        [1, 2],
        [2, 1],
        [2, 3],
        [2, 4],
        [1, 1],
      ]),
    );
    expect(b.play(2, 2, 'guest')).toBe(5);
    expect(b.cells[3]![1]).toBe('host');
    expect([b.count('guest'), b.count('host')]).toEqual([11, 1]);
  });

  it('refuses an occupied cell, a cell that brackets nothing and a cell off the board, changing nothing', () => {
    const b = new Reversi(8);
    const before = JSON.stringify(b.cells);
    for (const [r, c] of [
      [3, 3],
      [0, 0],
      [2, 2],
      [-1, 3],
      [8, 3],
      [3, 8],
    ] as const)
      expect(b.play(r, c, 'guest'), `${r},${c}`).toBe(0);
    expect(JSON.stringify(b.cells)).toBe(before);
  });

  it('forces a pass on the side with no move, and ends when neither can move or the board is full', () => {
    const pass = Reversi.from(['WB....', '......', '......', '......', '......', '......']);
    expect(pass.legal('guest')).toEqual([]);
    expect(pass.choose('guest', () => 0)).toBeNull();
    expect(pass.legal('host')).toEqual([[0, 2]]);
    expect(pass.over()).toBe(false);
    const stuck = Reversi.from(['B.....', '......', '......', '......', '......', 'W.....']);
    expect([stuck.over(), stuck.leader()]).toEqual([true, 'none']);
    const full = Reversi.from(['BBBBBB', 'BBBBBB', 'BBBBBB', 'WWWWWW', 'WWWWWW', 'WWWWWW']);
    expect([full.over(), full.leader(), full.count('guest'), full.count('host')]).toEqual([true, 'none', 18, 18]);
    expect(Reversi.from(['BBBBBB', 'BBBBBB', 'BBBBBB', 'BWWWWW', 'WWWWWW', 'WWWWWW']).leader()).toBe('guest');
  });

  it('prefers a corner, then more flips', () => {
    const b = Reversi.from(['.WB.....', '........', '..BWW...', '........', '........', '........', '........', '........']);
    expect(b.choose('guest', () => 0)).toEqual([0, 0]); // a corner flipping one rather than (2,5) flipping two
    expect(b.choose('host', () => 0)).toEqual([0, 3]);
    // 6x6: every inner cell is worth the same, so the two-stone flip wins.
    const m = Reversi.from(['......', '......', '.BWW..', '.BW...', '......', '......']);
    expect(m.flips(3, 3, 'guest')).toHaveLength(1);
    expect(m.choose('guest', () => 0)).toEqual([2, 4]);
  });

  it('the host refuses an illegal move, a pass while a move exists and a wrong turn, with the spec reasons', () => {
    expect(host(reversi, 'reversi', { board_size: 8 })({ action: 'move', turn: 1, row: 0, col: 0 })).toMatchObject({
      response: { action: 'error', turn: 1, reason: 'illegal_move' },
      abort: true,
    });
    expect(host(reversi, 'reversi', { board_size: 6 })({ action: 'move', turn: 1, row: 7, col: 7 })).toMatchObject({
      response: { reason: 'illegal_move' },
      abort: true,
    });
    expect(host(reversi, 'reversi', { board_size: 8 })({ action: 'pass', turn: 1 })).toMatchObject({ response: { reason: 'illegal_move' }, abort: true });
    const ask = host(reversi, 'reversi', { board_size: 8 });
    expect(ask({ action: 'move', turn: 1, row: 2, col: 3 })).toMatchObject({
      response: { action: 'round_result', turn: 2, player: 'host', passed: false, flipped: 1, black: 3, white: 3, game_over: false },
    });
    expect(ask({ action: 'move', turn: 1, row: 2, col: 3 })).toMatchObject({ response: { reason: 'not_your_turn' }, abort: true });
  });

  it('the guest aborts when the host misreports flips, counts or the winner, or plays an illegal cell', async () => {
    const spec = loadBuiltinSpec('reversi');
    const bends: ((m: Message) => Message)[] = [
      (m) => ({ ...m, flipped: (m['flipped'] as number) + 1 }),
      (m) => ({ ...m, white: (m['white'] as number) + 1 }),
      (m) => (m['game_over'] ? { ...m, winner: m['winner'] === 'host' ? 'guest' : 'host' } : m),
      (m) => (m['turn'] === 4 ? { ...m, row: 0, col: 0 } : m),
      (m) => (m['turn'] === 4 ? { ...m, passed: true } : m),
    ];
    for (const bend of bends) expect((await play(spec, lyingHost(reversi, bend), { board_size: 6 }, 1)).outcome).toBe('aborted');
    expect((await play(spec, reversi, { board_size: 6 }, 1)).outcome).toBe('completed');
  });
});

describe('gomoku rules', () => {
  it('five in a row wins in all four directions, six too; four or a broken line does not', () => {
    for (const [dr, dc] of [
      [0, 1],
      [1, 0],
      [1, 1],
      [1, -1],
    ] as const) {
      const b = new Gomoku(9);
      const at = (k: number) => [4 + k * dr, 4 + k * dc] as const;
      for (const k of [-2, -1, 1]) b.cells[at(k)[0]]![at(k)[1]] = 'guest';
      b.cells[4]![4] = 'guest';
      expect(b.wins(4, 4), `four along ${dr},${dc}`).toBe(false);
      b.cells[at(3)[0]]![at(3)[1]] = 'guest'; // a gap at k=2
      expect(b.wins(4, 4), `broken along ${dr},${dc}`).toBe(false);
      b.cells[at(2)[0]]![at(2)[1]] = 'host';
      expect(b.wins(4, 4)).toBe(false);
      b.cells[at(2)[0]]![at(2)[1]] = 'guest';
      expect(b.wins(4, 4), `six along ${dr},${dc}`).toBe(true);
      expect(b.wins(...at(-2)), `from the end along ${dr},${dc}`).toBe(true);
    }
    const edge = Gomoku.from(['BBBBB', '.....', '.....', '.....', 'WWWW.']);
    expect([edge.wins(0, 4), edge.wins(4, 0), edge.wins(1, 1)]).toEqual([true, false, false]);
  });

  it('knows a full board and refuses cells off the board or taken', () => {
    const b = Gomoku.from(['BWBWB', 'BWBWB', 'WBWBW', 'BWBWB', 'BWBW.']);
    expect(b.full()).toBe(false);
    expect([b.refuse(4, 4), b.refuse(0, 0), b.refuse(5, 0), b.refuse(0, -1)]).toEqual([null, 'occupied', 'out_of_bounds', 'out_of_bounds']);
    b.cells[4]![4] = 'guest';
    expect(b.full()).toBe(true);
  });

  it('opens in the centre, wins when it can, else blocks a four', () => {
    expect(new Gomoku(15).choose('guest', () => 0)).toEqual([7, 7]);
    const b = Gomoku.from(['.........', '.BBBB....', '.........', '.........', '..WWW....', '.........', '.........', '.........', '.........']);
    expect(b.choose('host', () => 0)).toEqual([1, 5]); // a block, the end nearer the centre
    b.cells[4]![5] = 'host';
    for (const x of [0, 0.99]) {
      const [r, c] = b.choose('host', () => x);
      b.cells[r]![c] = 'host';
      expect(b.wins(r, c), `${r},${c}`).toBe(true);
      b.cells[r]![c] = null;
    }
  });

  it('the host refuses cells off the board, taken cells and wrong turns, with the spec reasons', () => {
    expect(host(gomoku, 'gomoku', { board_size: 9 })({ action: 'move', turn: 1, row: 9, col: 0 })).toMatchObject({
      response: { action: 'error', turn: 1, reason: 'out_of_bounds' },
      abort: true,
    });
    const ask = host(gomoku, 'gomoku', { board_size: 9 });
    const r = ask({ action: 'move', turn: 1, row: 4, col: 4 });
    expect(r).toMatchObject({ response: { action: 'round_result', turn: 2, player: 'host', game_over: false, winner: 'none' } });
    expect(ask({ action: 'move', turn: 3, row: r.response['row'] as number, col: r.response['col'] as number })).toMatchObject({
      response: { reason: 'occupied' },
      abort: true,
    });
    expect(host(gomoku, 'gomoku', { board_size: 9 })({ action: 'move', turn: 3, row: 0, col: 0 })).toMatchObject({
      response: { reason: 'not_your_turn' },
      abort: true,
    });
  });

  it("the host echoes the guest's winning stone and the guest aborts on a false win or a taken cell", async () => {
    const spec = loadBuiltinSpec('gomoku');
    const games = await Promise.all([1, 2, 3, 4, 5, 6].map((seed) => play(spec, gomoku, { board_size: 9 }, seed)));
    const last = games.map((g) => g.frames.at(-1)!.msg);
    expect(last.every((m) => m['game_over'] === true)).toBe(true);
    for (const m of last.filter((m) => m['player'] === 'guest')) expect(m['winner']).toBe('guest');
    const bends: ((m: Message) => Message)[] = [
      (m) => (m['turn'] === 4 ? { ...m, game_over: true, winner: 'host' } : m),
      (m) => (m['turn'] === 4 ? { ...m, row: 4, col: 4 } : m),
      (m) => (m['game_over'] ? { ...m, game_over: false, winner: 'none' } : m),
    ];
    for (const bend of bends) expect((await play(spec, lyingHost(gomoku, bend), { board_size: 9 }, 1)).outcome).toBe('aborted');
  });

  it("a 5x5 board fills on the guest's 13th stone: the host echoes it as a draw, and a host that claims it is caught", async () => {
    const spec = loadBuiltinSpec('gomoku');
    const g = await play(spec, gomoku, { board_size: 5 }, 1);
    expect(g.outcome).toBe('completed');
    expect(g.frames.filter((f) => f.msg.action === 'move')).toHaveLength(13);
    expect(g.frames.at(-1)!.msg).toMatchObject({ action: 'round_result', turn: 25, player: 'guest', game_over: true, winner: 'none' });
    const claim = lyingHost(gomoku, (m) => (m['turn'] === 25 ? { ...m, winner: 'guest' } : m));
    expect((await play(spec, claim, { board_size: 5 }, 1)).outcome).toBe('aborted');
  });
});

describe('connect four rules', () => {
  it('counts rows from the top, as the reference does: a first stone lands on the last row', () => {
    const ask = host(connectFour, 'connect-four', { cols: 7, rows: 6 });
    // random() = 0 and nothing to win or block: the host takes the centre, on top of the guest's stone.
    expect(ask({ action: 'move', turn: 1, col: 3 })).toMatchObject({
      response: { action: 'round_result', turn: 2, col: 3, row: 4, player: 'host', game_over: false, winner: 'none' },
    });
    expect(host(connectFour, 'connect-four', { cols: 4, rows: 4 })({ action: 'move', turn: 1, col: 0 }).response).toMatchObject({ row: 3 });
  });

  it('the host refuses a column off the board and a full column, with the spec reasons', () => {
    expect(host(connectFour, 'connect-four', { cols: 7, rows: 6 })({ action: 'move', turn: 1, col: 7 })).toMatchObject({
      response: { action: 'error', turn: 1, reason: 'invalid_column' },
      abort: true,
    });
    const ask = host(connectFour, 'connect-four', { cols: 4, rows: 4 });
    // Column 0 (with random() = 0 the host never blocks there before the guest could win in it).
    let t = 1;
    for (; t < 9; t += 2) {
      const r = ask({ action: 'move', turn: t, col: 0 });
      if (r.response['action'] === 'error') break;
      expect(r.abort).toBeFalsy();
    }
    expect(ask({ action: 'move', turn: t, col: 0 })).toMatchObject({ response: { action: 'error', reason: 'column_full' }, abort: true });
  });

  it("the host echoes the guest's winning stone as a round_result; the guest aborts on a misplaced or misreported stone", async () => {
    const spec = loadBuiltinSpec('connect-four');
    const games = await Promise.all([1, 2, 3, 4, 5, 6].map((seed) => play(spec, connectFour, { cols: 7, rows: 6 }, seed)));
    expect(games.every((g) => g.outcome === 'completed')).toBe(true);
    const guestWins = games.map((g) => g.frames.at(-1)!.msg).filter((m) => m['player'] === 'guest');
    expect(guestWins.length).toBeGreaterThan(0);
    for (const m of guestWins) expect(m).toMatchObject({ action: 'round_result', game_over: true, winner: 'guest' });
    const rows = 6;
    const bends: ((m: Message) => Message)[] = [
      // A row counted from the bottom (what this file's hooks once sent), and a stone one row too high.
      (m) => (m['turn'] === 4 ? { ...m, row: rows - 1 - (m['row'] as number) } : m),
      (m) => (m['turn'] === 4 ? { ...m, row: (m['row'] as number) - 1 } : m),
      (m) => (m['game_over'] ? { ...m, winner: m['winner'] === 'host' ? 'none' : 'host' } : m),
      (m) => (m['game_over'] ? { ...m, game_over: false, winner: 'none' } : m),
      (m) => (m['turn'] === 4 ? { ...m, game_over: true, winner: 'host' } : m),
      (m) => (m['player'] === 'guest' ? { ...m, col: ((m['col'] as number) + 1) % 7 } : m),
    ];
    for (const bend of bends) expect((await play(spec, lyingHost(connectFour, bend), { cols: 7, rows }, 1)).outcome, String(bend)).toBe('aborted');
  });

  it('a 5x5 board can fill on a guest stone: the host echoes it as a draw and the guest agrees', async () => {
    const g = await play(loadBuiltinSpec('connect-four'), connectFour, { cols: 5, rows: 5 }, 2);
    expect(g.outcome).toBe('completed');
    expect(g.frames.at(-1)!.msg).toMatchObject({ action: 'round_result', turn: 25, player: 'guest', game_over: true, winner: 'none' });
  });
});

// The reference's own rule functions, run on the same games. Every request of this file is built before its
// first test and answered by one python3 process, which runs while the other tests do; each test below
// then compares its own answer.
const haveRef = needReferencePython(['aigenora.proto.hooks'], 'the reference cross-check of reversi/gomoku/connect four');
type Step = [Side, number, number] | [Side, 'pass'];

/** The autonomous players against themselves on each board size: our moves, and the request for the reference's. */
function reversiSelfplay(n: number) {
  const b = new Reversi(n);
  const ours: Step[] = [];
  for (let side: Side = 'guest'; !b.over(); side = side === 'guest' ? 'host' : 'guest') {
    const m = b.choose(side, () => 0);
    if (m) b.play(m[0], m[1], side);
    ours.push(m ? [side, m[0], m[1]] : [side, 'pass']);
  }
  return { n, ours, request: { game: 'reversi', n, selfplay: true } };
}
function gomokuSelfplay(n: number) {
  const b = new Gomoku(n);
  const ours: Step[] = [];
  for (let side: Side = 'guest'; ; side = side === 'guest' ? 'host' : 'guest') {
    const [r, c] = b.choose(side, () => 0);
    b.cells[r]![c] = side;
    ours.push([side, r, c]);
    if (b.wins(r, c) || b.full()) break;
  }
  return { n, ours, request: { game: 'gomoku', n, selfplay: true } };
}

/** Seeded games through the hosts and guests: the game, and the request for the reference's rulings on its moves. */
async function reversiGame(n: number, seed: number) {
  const g = await play(loadBuiltinSpec('reversi'), reversi, { board_size: n }, seed);
  const moves: Step[] = [];
  const results: Message[] = [];
  for (const { msg } of g.frames) {
    if (msg.action === 'move') moves.push(['guest', msg['row'] as number, msg['col'] as number]);
    if (msg.action === 'pass') moves.push(['guest', 'pass']);
    if (msg.action === 'round_result') {
      moves.push(msg['passed'] ? ['host', 'pass'] : ['host', msg['row'] as number, msg['col'] as number]);
      results.push(msg);
    }
  }
  return { seed, outcome: g.outcome, moves, results, request: { game: 'reversi', n, moves } };
}
async function gomokuGame(n: number, seed: number) {
  const g = await play(loadBuiltinSpec('gomoku'), gomoku, { board_size: n }, seed);
  const moves = g.frames
    .filter(({ msg }) => msg.action === 'move' || (msg.action === 'round_result' && msg['player'] === 'host'))
    .map(({ msg }) => [msg.action === 'move' ? 'guest' : 'host', msg['row'], msg['col']]);
  return { seed, outcome: g.outcome, moves, last: g.frames.at(-1)!.msg, request: { game: 'gomoku', n, moves } };
}

/** A seeded game through our host and guest: its frames, and the request for the reference's answers to them. */
async function connectFourGame(cols: number, rows: number, seed: number) {
  const g = await play(loadBuiltinSpec('connect-four'), connectFour, { cols, rows }, seed);
  return { cols, rows, seed, outcome: g.outcome, frames: g.frames, request: { game: 'connect4', cols, rows, frames: g.frames } };
}

const REVERSI_SIZES = [6, 7, 8];
const GOMOKU_SIZES = [5, 9, 15];
const REVERSI_GAMES = [6, 8].flatMap((n) => [1, 2, 3, 4, 5].map((seed) => [n, seed] as const));
const GOMOKU_GAMES = [5, 9, 15].flatMap((n) => [1, 2, 3, 4, 5].map((seed) => [n, seed] as const));
// Boards with an even number of cells only: the reference's host fails when the guest fills the board.
const CONNECT_FOUR_GAMES = (
  [
    [7, 6],
    [6, 5],
    [4, 5],
    [10, 10],
  ] as const
).flatMap(([c, r]) => [1, 2, 3, 4].map((seed) => [c, r, seed] as const));

const cases: {
  reversiSelf: Built<ReturnType<typeof reversiSelfplay>>[];
  gomokuSelf: Built<ReturnType<typeof gomokuSelfplay>>[];
  reversiGames: Built<Awaited<ReturnType<typeof reversiGame>>>[];
  gomokuGames: Built<Awaited<ReturnType<typeof gomokuGame>>>[];
  connectFourGames: Built<Awaited<ReturnType<typeof connectFourGame>>>[];
} = { reversiSelf: [], gomokuSelf: [], reversiGames: [], gomokuGames: [], connectFourGames: [] };

const reference = referenceRequests(haveRef, 'board-rules-ref.py', async (requests) => {
  cases.reversiSelf = REVERSI_SIZES.map((n) => build(() => reversiSelfplay(n)));
  cases.gomokuSelf = GOMOKU_SIZES.map((n) => build(() => gomokuSelfplay(n)));
  for (const [n, seed] of REVERSI_GAMES) cases.reversiGames.push(await buildAsync(() => reversiGame(n, seed)));
  for (const [n, seed] of GOMOKU_GAMES) cases.gomokuGames.push(await buildAsync(() => gomokuGame(n, seed)));
  for (const [c, r, seed] of CONNECT_FOUR_GAMES) cases.connectFourGames.push(await buildAsync(() => connectFourGame(c, r, seed)));
  requests.addBuilt([...cases.reversiSelf, ...cases.gomokuSelf, ...cases.reversiGames, ...cases.gomokuGames, ...cases.connectFourGames]);
});

/** Our side of a case and the reference's answer to it. */
const answered = <T, A = unknown[]>(c: Built<T>) => reference.answered<T, A>(c);

describe.skipIf(!haveRef)("against the reference's rules", () => {
  it("reversi: the autonomous player makes the reference's moves, passes included", async () => {
    for (const c of cases.reversiSelf) {
      const { mine, theirs } = await answered(c);
      expect(mine.ours, `n=${mine.n}`).toEqual(theirs);
    }
  });

  it("gomoku: the autonomous player makes the reference's moves", async () => {
    for (const c of cases.gomokuSelf) {
      const { mine, theirs } = await answered(c);
      expect(mine.ours, `n=${mine.n}`).toEqual(theirs);
    }
  });

  it("reversi: every host round_result of seeded games says what the reference's rules say", async () => {
    for (const c of cases.reversiGames) {
      const { mine, theirs } = await answered<
        Awaited<ReturnType<typeof reversiGame>>,
        { legal: boolean; flipped: number; black: number; white: number; over: boolean; winner: string }[]
      >(c);
      const { seed, outcome, moves, results } = mine;
      expect(outcome).toBe('completed');
      expect(
        theirs.every((s) => s.legal),
        `seed ${seed}`,
      ).toBe(true);
      const hostSteps = theirs.filter((_, i) => moves[i]![0] === 'host');
      expect(results.map((m) => [m['flipped'], m['black'], m['white'], m['game_over'], m['winner']])).toEqual(
        hostSteps.map((s) => [s.flipped, s.black, s.white, s.over, s.winner]),
      );
    }
  });

  it("gomoku: every result of seeded games says what the reference's rules say", async () => {
    for (const c of cases.gomokuGames) {
      const { mine, theirs } = await answered<Awaited<ReturnType<typeof gomokuGame>>, { legal: boolean; win: boolean; full: boolean }[]>(c);
      const { outcome, moves, last } = mine;
      expect(outcome).toBe('completed');
      expect(theirs.every((s) => s.legal)).toBe(true);
      expect(theirs.slice(0, -1).some((s) => s.win || s.full)).toBe(false);
      const end = theirs.at(-1)!;
      expect([last['game_over'], last['winner'], last['player']]).toEqual([true, end.win ? moves.at(-1)![0] : 'none', moves.at(-1)![0]]);
    }
  });

  it("connect four: the reference's own host and guest, meeting our guest and host, send exactly our messages", async () => {
    type Answer = { response: Message | null; completed: boolean; abort: boolean };
    type Theirs = { rules: { row: number | null; win: boolean; full: boolean }[]; host: Answer[]; guest: { join: Message; first: Message; answers: Answer[] } };
    const endings = new Set<string>();
    for (const c of cases.connectFourGames) {
      const { mine, theirs } = await answered<Awaited<ReturnType<typeof connectFourGame>>, Theirs>(c);
      const at = `${mine.cols}x${mine.rows} seed ${mine.seed}`;
      expect(mine.outcome, at).toBe('completed');
      const msgs = mine.frames.map((f) => f.msg);
      const fromHost = mine.frames.filter((f) => f.from === 'host').map((f) => f.msg);
      const moves = msgs.filter((m) => m.action === 'move');
      const results = msgs.filter((m) => m.action === 'round_result');
      const last = results.at(-1)!;
      endings.add(`${last['player']}/${last['winner']}`);
      // The reference's rules on the same stones: where each lands (rows from the top) and when the game ends.
      const stones = msgs.filter((m) => m.action === 'move' || (m.action === 'round_result' && m['player'] === 'host'));
      expect(
        theirs.rules.every((r) => r.row !== null),
        at,
      ).toBe(true);
      expect(
        results.filter((m) => m['player'] === 'host').map((m) => m['row']),
        at,
      ).toEqual(theirs.rules.filter((_, i) => stones[i]!.action === 'round_result').map((r) => r.row));
      expect(
        theirs.rules.slice(0, -1).some((r) => r.win || r.full),
        at,
      ).toBe(false);
      // The reference's host, given our guest's moves (and told to drop its stones where ours did): our ready and every round_result, field for field.
      expect(theirs.host, at).toEqual(fromHost.map((m) => ({ response: m, completed: m['game_over'] === true, abort: false })));
      // The reference's guest, given our host's messages (and told to drop its stones where ours did): our join and every move, then the end.
      expect(theirs.guest.join, at).toEqual(msgs[0]);
      expect(theirs.guest.first, at).toEqual(moves[0]);
      expect(theirs.guest.answers, at).toEqual(
        results.map((m, i) =>
          m['game_over'] ? { response: null, completed: true, abort: false } : { response: moves[i + 1], completed: false, abort: false },
        ),
      );
    }
    // Every way a game ends went through both: the guest's winning stone echoed, the host's win, and a draw.
    expect([...endings].sort()).toEqual(['guest/guest', 'host/host', 'host/none']);
  });
});

describe("a person's move in place of the suggested one", () => {
  // The guest's board follows the decided move, so the host's answer to it is accepted.
  const session = (module: HooksModule, options: Record<string, unknown>) => {
    const make = (role: 'host' | 'guest') =>
      module.create({ role, options, args: [], stateDir: '', decision: null, random: () => 0 }) as unknown as SessionLoopHooks;
    const [h, g] = [make('host'), make('guest')];
    g.proto_guest_handle_ready(h.proto_host_handle_join(g.proto_guest_join_message() as Message) as Message);
    return { h, g };
  };
  it.each([
    ['reversi', reversi, { board_size: 8 }, { action: 'move', turn: 1, row: 5, col: 4 }],
    ['gomoku', gomoku, { board_size: 9 }, { action: 'move', turn: 1, row: 0, col: 0 }],
    ['connect four', connectFour, { cols: 7, rows: 6 }, { action: 'move', turn: 1, col: 0 }],
  ] as const)('%s', (_name, module, options, decided) => {
    const { h, g } = session(module, options);
    const suggested = g.proto_guest_first_action() as Message;
    expect(suggested).not.toEqual(decided);
    g.proto_on_decision!(decided, suggested);
    const reply = h.proto_host_handle(decided) as { response: Message; abort?: boolean };
    expect(reply.abort).toBeFalsy();
    // Then the game plays on to its end with neither side refusing the other.
    let r = reply as { response: Message; abort?: boolean; completed?: boolean };
    for (;;) {
      const step = g.proto_guest_handle(r.response) as Message | { completed?: boolean; abort?: boolean } | null;
      if (r.completed || !step || !('action' in step)) {
        expect(step).toEqual({ completed: true });
        break;
      }
      r = h.proto_host_handle(step as Message) as typeof r;
      expect(r.abort, JSON.stringify(r.response)).toBeFalsy();
    }
  });
});
