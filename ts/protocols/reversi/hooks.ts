/**
 * Reversi (session_loop). The guest (black) moves first; a move must bracket a straight line of the
 * opponent's stones, which flip. A side with no legal move passes (and only then). The host referees:
 * it applies the guest's move or pass, plays its own (or passes) and answers with a round_result
 * carrying its cell, the flips, the stone counts and whether the game is over (neither side can move,
 * or the board is full; most stones wins, equal counts give winner "none"). The guest keeps its own
 * board and aborts on any round_result that disagrees with it. Both sides pick the move with the best
 * positional value plus flips (random among ties), the reference's autonomous player.
 */
import type { HooksModule, Message, Narrator } from 'aigenora/hooks';
import { boardSize, cellText, other, outcomeText, player, refusalText, SquareBoard, type Move, type Side } from '../square-board.js';

export type { Side } from '../square-board.js';

const DIRS = [
  [-1, -1],
  [-1, 0],
  [-1, 1],
  [0, -1],
  [0, 1],
  [1, -1],
  [1, 0],
  [1, 1],
] as const;

/** Corners good, the cells next to them bad (the reference's weights for 8x8). */
const POSITIONAL_8 = [
  [120, -20, 20, 5, 5, 20, -20, 120],
  [-20, -40, -5, -5, -5, -5, -40, -20],
  [20, -5, 15, 3, 3, 15, -5, 20],
  [5, -5, 3, 3, 3, 3, -5, 5],
  [5, -5, 3, 3, 3, 3, -5, 5],
  [20, -5, 15, 3, 3, 15, -5, 20],
  [-20, -40, -5, -5, -5, -5, -40, -20],
  [120, -20, 20, 5, 5, 20, -20, 120],
];

export class Board extends SquareBoard {
  constructor(n: number) {
    super(n);
    const m = n >> 1;
    this.cells[m - 1]![m - 1] = 'host';
    this.cells[m - 1]![m] = 'guest';
    this.cells[m]![m - 1] = 'guest';
    this.cells[m]![m] = 'host';
  }
  clone(): Board {
    const b = new Board(this.n);
    this.cells.forEach((row, r) => row.forEach((v, c) => (b.cells[r]![c] = v)));
    return b;
  }
  /** The stones `who` would flip by playing (r, c); none if the cell is off the board, taken or brackets nothing. */
  flips(r: number, c: number, who: Side): Move[] {
    if (this.at(r, c) !== null) return [];
    const out: Move[] = [];
    for (const [dr, dc] of DIRS) {
      const run: Move[] = [];
      let k = 1;
      while (this.at(r + k * dr, c + k * dc) === other(who)) (run.push([r + k * dr, c + k * dc]), k++);
      if (run.length && this.at(r + k * dr, c + k * dc) === who) out.push(...run);
    }
    return out;
  }
  legal(who: Side): Move[] {
    const out: Move[] = [];
    for (let r = 0; r < this.n; r++) for (let c = 0; c < this.n; c++) if (this.flips(r, c, who).length) out.push([r, c]);
    return out;
  }
  /** Places the stone and flips; returns the number flipped (0: illegal, nothing changed). */
  play(r: number, c: number, who: Side): number {
    const f = this.flips(r, c, who);
    if (!f.length) return 0;
    this.cells[r]![c] = who;
    for (const [fr, fc] of f) this.cells[fr]![fc] = who;
    return f.length;
  }
  over(): boolean {
    return this.full() || (!this.legal('guest').length && !this.legal('host').length);
  }
  /** Who has more stones ("none" when equal). */
  leader(): Side | 'none' {
    const [g, h] = [this.count('guest'), this.count('host')];
    return g > h ? 'guest' : h > g ? 'host' : 'none';
  }
  /** The legal move with the best positional value plus flips, random among ties; null when `who` must pass. */
  choose(who: Side, random: () => number): Move | null {
    const value = (r: number, c: number) => {
      if (this.n === 8) return POSITIONAL_8[r]![c]!;
      const edgeR = r === 0 || r === this.n - 1;
      const edgeC = c === 0 || c === this.n - 1;
      return edgeR && edgeC ? 100 : edgeR || edgeC ? 10 : 1;
    };
    const scored = this.legal(who).map((m) => [m, value(m[0], m[1]) + this.flips(m[0], m[1], who).length] as const);
    if (!scored.length) return null;
    const best = Math.max(...scored.map(([, s]) => s));
    const top = scored.filter(([, s]) => s === best);
    return top[Math.floor(random() * top.length)]![0];
  }
}

const size = (v: unknown) => boardSize(v, 6, 8, 8);

/**
 * Each move with the stones it flipped and the count after it. The host's round_result states its own
 * flips and the counts; the guest's move states only its cell, so the narrator keeps a board to count
 * what it flipped (and says nothing of flips it could not place, e.g. having missed the ready).
 */
function narrator(): Narrator {
  let board: Board | undefined;
  const counts = (black: unknown, white: unknown) => `black ${String(black)}, white ${String(white)}`;
  return (msg) => {
    switch (msg.action) {
      case 'ready':
        board = new Board(msg['board_size'] as number);
        return `${String(msg['board_size'])}×${String(msg['board_size'])} board, most stones wins; the ${player('guest')} moves first`;
      case 'move': {
        const flipped = board?.play(msg['row'] as number, msg['col'] as number, 'guest') ?? 0;
        const after = board && flipped ? `, flipping ${flipped} — ${counts(board.count('guest'), board.count('host'))}` : '';
        return `${player('guest')} plays ${cellText(msg['row'], msg['col'])}${after}`;
      }
      case 'pass':
        return `${player('guest')} passes: no legal move`;
      case 'round_result': {
        if (msg['passed'] !== true) board?.play(msg['row'] as number, msg['col'] as number, 'host');
        const move = msg['passed'] === true ? 'passes' : `plays ${cellText(msg['row'], msg['col'])}, flipping ${String(msg['flipped'])}`;
        const end = msg['game_over'] === true ? ` — game over: ${outcomeText(msg['winner'])}` : '';
        return `${player('host')} ${move} — ${counts(msg['black'], msg['white'])}${end}`;
      }
      case 'end':
        return `game over: ${outcomeText(msg['winner'])} (${counts(msg['black'], msg['white'])})`;
      case 'error':
        return refusalText(msg);
      default:
        return undefined;
    }
  };
}

const hooks: HooksModule<'session_loop'> = {
  mode: 'session_loop',
  narrator,
  create(ctx) {
    let board = new Board(size(ctx.options['board_size']));
    /** The guest's next turn number (the guest plays odd turns, the host the even ones). */
    let turn = 1;
    /** Guest: the board before its latest move, so that a person's different choice can replace it. */
    let before = board;
    const guestAction = (): Message => {
      before = board.clone();
      const m = board.choose('guest', ctx.random);
      if (!m) return { action: 'pass', turn };
      board.play(m[0], m[1], 'guest');
      return { action: 'move', turn, row: m[0], col: m[1] };
    };
    const counts = () => ({ black: board.count('guest'), white: board.count('host') });
    return {
      proto_guest_join_message: () => ({ action: 'join', board_size: board.n }),
      proto_host_handle_join(msg) {
        board = new Board(size(msg['board_size'] ?? board.n));
        return { action: 'ready', board_size: board.n, first: 'guest' };
      },
      proto_host_handle(msg) {
        const t = msg['turn'] as number;
        if ((msg.action !== 'move' && msg.action !== 'pass') || t !== turn)
          return { response: { action: 'error', ...(typeof t === 'number' && { turn: t }), reason: 'not_your_turn' }, abort: true };
        if (msg.action === 'move' ? !board.play(msg['row'] as number, msg['col'] as number, 'guest') : board.legal('guest').length > 0) {
          return { response: { action: 'error', turn: t, reason: 'illegal_move' }, abort: true };
        }
        const m = board.choose('host', ctx.random);
        const flipped = m ? board.play(m[0], m[1], 'host') : 0;
        const over = board.over();
        turn = t + 2;
        const result = {
          action: 'round_result',
          turn: t + 1,
          row: m?.[0] ?? 0,
          col: m?.[1] ?? 0,
          player: 'host',
          flipped,
          passed: !m,
          game_over: over,
          winner: over ? board.leader() : 'none',
          ...counts(),
        };
        return { response: result, completed: over };
      },
      proto_guest_handle_ready(msg) {
        board = new Board(msg['board_size'] as number);
        return null;
      },
      proto_guest_first_action: () => guestAction(),
      supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
      // A person chose another move (or the pass): replay it on the board as it was.
      proto_on_decision(decided) {
        board = before.clone();
        if (decided.action === 'move') board.play(decided['row'] as number, decided['col'] as number, 'guest');
      },
      proto_guest_handle(msg) {
        const over = board.over();
        if (msg.action === 'end') {
          const w = msg['winner'] === 'draw' ? 'none' : msg['winner'];
          const c = counts();
          return over && w === board.leader() && msg['black'] === c.black && msg['white'] === c.white ? { completed: true } : { abort: true };
        }
        if (msg.action !== 'round_result' || msg['player'] !== 'host' || msg['turn'] !== turn + 1) return { abort: true };
        // The host's move (or pass) must be legal on our copy, and everything it reports must follow.
        let flipped = 0;
        if (msg['passed']) {
          if (board.legal('host').length) return { abort: true };
        } else {
          flipped = board.play(msg['row'] as number, msg['col'] as number, 'host');
          if (!flipped) return { abort: true };
        }
        const now = board.over();
        const c = counts();
        if (msg['flipped'] !== flipped || msg['black'] !== c.black || msg['white'] !== c.white) return { abort: true };
        if (msg['game_over'] !== now || msg['winner'] !== (now ? board.leader() : 'none')) return { abort: true };
        if (now) return { completed: true };
        turn += 2;
        return guestAction();
      },
    };
  },
};

export default hooks;
