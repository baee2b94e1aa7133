/**
 * Gomoku (session_loop). The guest (black) moves first on an empty NxN board; the host (white) records
 * the move and, unless it made five in a row or filled the board, answers with its own stone in a
 * round_result carrying the win check. A game the guest's stone ends is answered with that stone
 * echoed (player "guest"). The guest keeps its own board and aborts on any result that disagrees with
 * it. Both sides play the reference's greedy player: among empty cells next to a stone, the best sum
 * of own line weights plus 0.9 of the opponent's, nearer the centre on equal scores (random among
 * full ties); the first stone goes to the centre.
 */
import type { HooksModule, Message, Narrator } from 'aigenora/hooks';
import { boardSize, cellText, other, outcomeText, player, refusalText, SquareBoard, type Move, type Side } from '../square-board.js';

const DIRS = [
  [0, 1],
  [1, 0],
  [1, 1],
  [1, -1],
] as const;
/** A line of this many stones (after the move) is worth this much; five or more wins. */
const LINE_WEIGHT = [0, 1, 10, 100, 1000, 100000];

export class Board extends SquareBoard {
  /** Why `(r, c)` cannot take a stone, or null if it can. */
  refuse(r: number, c: number): 'out_of_bounds' | 'occupied' | null {
    const v = this.at(r, c);
    return v === undefined ? 'out_of_bounds' : v ? 'occupied' : null;
  }
  /** The run of `who`'s stones through (r, c) along (dr, dc), counting (r, c) as theirs. */
  line(r: number, c: number, dr: number, dc: number, who: Side): number {
    let n = 1;
    for (const s of [1, -1]) for (let k = 1; this.at(r + s * k * dr, c + s * k * dc) === who; k++) n++;
    return n;
  }
  /** Whether the stone at (r, c) is part of five or more in a line. */
  wins(r: number, c: number): boolean {
    const who = this.at(r, c);
    return !!who && DIRS.some(([dr, dc]) => this.line(r, c, dr, dc, who) >= 5);
  }
  /** The greedy move for `who`: own attack plus 0.9 of the opponent's threat, then nearness to the centre. */
  choose(who: Side, random: () => number): Move {
    const mid = (this.n - 1) / 2;
    if (this.cells.every((row) => row.every((v) => !v))) return [this.n >> 1, this.n >> 1];
    const opp = other(who);
    const worth = (r: number, c: number, s: Side) => DIRS.reduce((sum, [dr, dc]) => sum + LINE_WEIGHT[Math.min(5, this.line(r, c, dr, dc, s))]!, 0);
    let best: [number, number] = [-1, 0];
    let top: Move[] = [];
    for (let r = 0; r < this.n; r++) {
      for (let c = 0; c < this.n; c++) {
        if (this.cells[r]![c] || !this.nextToStone(r, c)) continue;
        const key: [number, number] = [worth(r, c, who) + Math.trunc(worth(r, c, opp) * 0.9), -(Math.abs(r - mid) + Math.abs(c - mid))];
        if (key[0] > best[0] || (key[0] === best[0] && key[1] > best[1])) [best, top] = [key, [[r, c]]];
        else if (key[0] === best[0] && key[1] === best[1]) top.push([r, c]);
      }
    }
    if (top.length) return top[Math.floor(random() * top.length)]!;
    for (let r = 0; r < this.n; r++) for (let c = 0; c < this.n; c++) if (!this.cells[r]![c]) return [r, c];
    return [this.n >> 1, this.n >> 1];
  }
  private nextToStone(r: number, c: number): boolean {
    for (let dr = -1; dr <= 1; dr++) for (let dc = -1; dc <= 1; dc++) if ((dr || dc) && this.at(r + dr, c + dc)) return true;
    return false;
  }
}

const size = (v: unknown) => boardSize(v, 5, 19, 15);

/** Each stone where it went and, on the last, why the game ended; every message carries all of it. */
const narrator = (): Narrator => (msg) => {
  switch (msg.action) {
    case 'ready':
      return `${String(msg['board_size'])}×${String(msg['board_size'])} board, five in a row wins; the ${player('guest')} moves first`;
    case 'move':
      return `${player('guest')} plays ${cellText(msg['row'], msg['col'])}`;
    case 'round_result': {
      const at = cellText(msg['row'], msg['col']);
      const end = msg['winner'] === 'none' ? 'the board is full: a draw' : `five in a row: ${outcomeText(msg['winner'])}`;
      // A game the guest's stone ended comes back as that stone, echoed.
      if (msg['player'] === 'guest') return `the guest's stone at ${at} ends the game — ${end}`;
      return `${player('host')} plays ${at}${msg['game_over'] === true ? ` — ${end}` : ''}`;
    }
    case 'end':
      return `game over: ${outcomeText(msg['winner'])}`;
    case 'error':
      return refusalText(msg);
    default:
      return undefined;
  }
};

const hooks: HooksModule<'session_loop'> = {
  mode: 'session_loop',
  narrator,
  create(ctx) {
    let board = new Board(size(ctx.options['board_size']));
    /** The guest's next turn number (the guest plays odd turns, the host the even ones). */
    let turn = 1;
    /** Guest: its latest stone, so that a person's different choice can replace it. */
    let mine: Move = [0, 0];
    const guestMove = (): Message => {
      mine = board.choose('guest', ctx.random);
      board.cells[mine[0]]![mine[1]] = 'guest';
      return { action: 'move', turn, row: mine[0], col: mine[1] };
    };
    const outcome = (r: number, c: number) => (board.wins(r, c) ? board.at(r, c)! : board.full() ? 'none' : null);
    return {
      proto_guest_join_message: () => ({ action: 'join', board_size: board.n }),
      proto_host_handle_join(msg) {
        board = new Board(size(msg['board_size'] ?? board.n));
        return { action: 'ready', board_size: board.n, first: 'guest' };
      },
      proto_host_handle(msg) {
        const t = msg['turn'] as number;
        if (msg.action !== 'move' || t !== turn)
          return { response: { action: 'error', ...(typeof t === 'number' && { turn: t }), reason: 'not_your_turn' }, abort: true };
        const [gr, gc] = [msg['row'] as number, msg['col'] as number];
        const why = board.refuse(gr, gc);
        if (why) return { response: { action: 'error', turn: t, reason: why }, abort: true };
        board.cells[gr]![gc] = 'guest';
        const g = outcome(gr, gc);
        if (g) return { response: { action: 'round_result', turn: t, row: gr, col: gc, player: 'guest', game_over: true, winner: g }, completed: true };
        const [hr, hc] = board.choose('host', ctx.random);
        board.cells[hr]![hc] = 'host';
        const h = outcome(hr, hc);
        turn = t + 2;
        return { response: { action: 'round_result', turn: t + 1, row: hr, col: hc, player: 'host', game_over: !!h, winner: h ?? 'none' }, completed: !!h };
      },
      proto_guest_handle_ready(msg) {
        board = new Board(msg['board_size'] as number);
        return null;
      },
      proto_guest_first_action: () => guestMove(),
      supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
      // A person put the stone elsewhere: move it there on our board.
      proto_on_decision(decided) {
        if (decided.action !== 'move') return;
        board.cells[mine[0]]![mine[1]] = null;
        mine = [decided['row'] as number, decided['col'] as number];
        if (board.refuse(mine[0], mine[1]) === null) board.cells[mine[0]]![mine[1]] = 'guest';
      },
      proto_guest_handle(msg) {
        const [r, c] = [msg['row'] as number, msg['col'] as number];
        if (msg.action === 'end') {
          const w = msg['winner'] === 'draw' ? 'none' : msg['winner'];
          return outcome(mine[0], mine[1]) === w ? { completed: true } : { abort: true };
        }
        if (msg.action !== 'round_result') return { abort: true };
        if (msg['player'] === 'guest') {
          // The host says our own stone ended the game: it must be that stone, and it must have.
          const g = outcome(mine[0], mine[1]);
          return msg['turn'] === turn && r === mine[0] && c === mine[1] && msg['game_over'] === true && g && msg['winner'] === g
            ? { completed: true }
            : { abort: true };
        }
        if (msg['turn'] !== turn + 1 || board.refuse(r, c) || outcome(mine[0], mine[1])) return { abort: true };
        board.cells[r]![c] = 'host';
        const h = outcome(r, c);
        if (msg['game_over'] !== !!h || msg['winner'] !== (h ?? 'none')) return { abort: true };
        if (h) return { completed: true };
        turn += 2;
        return guestMove();
      },
    };
  },
};

export default hooks;
