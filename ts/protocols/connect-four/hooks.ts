/**
 * Connect four (session_loop). The guest (red) moves first by naming a column; the host (yellow)
 * records it, drops its own stone and answers with a round_result carrying its cell and the win check.
 * Both sides keep the board; each player looks for a winning drop, then a block, then the most central
 * column (random among ties), which makes a reasonable opponent for tests and demos.
 */
import type { HooksModule, Message } from 'aigenora/hooks';

export type Cell = 'host' | 'guest' | null;

export class Board {
  readonly cells: Cell[][];
  constructor(
    readonly cols: number,
    readonly rows: number,
  ) {
    this.cells = Array.from({ length: cols }, () => Array<Cell>(rows).fill(null));
  }
  /** The row a stone dropped in `col` lands on (0 = bottom), or -1 if the column is full. */
  landing(col: number): number {
    return this.cells[col]?.indexOf(null) ?? -1;
  }
  drop(col: number, who: 'host' | 'guest'): number {
    const row = this.landing(col);
    if (row >= 0) this.cells[col]![row] = who;
    return row;
  }
  full(): boolean {
    return this.cells.every((c) => !c.includes(null));
  }
  /** Whether the stone at (col, row) completes four in a line. */
  wins(col: number, row: number): boolean {
    const who = this.cells[col]?.[row];
    if (!who) return false;
    const at = (c: number, r: number) => (c >= 0 && c < this.cols && r >= 0 && r < this.rows ? this.cells[c]![r] : null);
    return [
      [1, 0],
      [0, 1],
      [1, 1],
      [1, -1],
    ].some(([dc, dr]) => {
      let n = 1;
      for (const s of [1, -1]) for (let k = 1; at(col + s * k * dc!, row + s * k * dr!) === who; k++) n++;
      return n >= 4;
    });
  }
  /** A column for `who`: win now, else block the opponent, else the most central legal column. */
  choose(who: 'host' | 'guest', random: () => number): number {
    const legal = [...Array(this.cols).keys()].filter((c) => this.landing(c) >= 0);
    const other: 'host' | 'guest' = who === 'host' ? 'guest' : 'host';
    for (const target of [who, other] as const) {
      for (const c of legal) {
        const r = this.drop(c, target);
        const w = this.wins(c, r);
        this.cells[c]![r] = null;
        if (w) return c;
      }
    }
    const mid = (this.cols - 1) / 2;
    const best = Math.min(...legal.map((c) => Math.abs(c - mid)));
    const central = legal.filter((c) => Math.abs(c - mid) === best);
    return central[Math.floor(random() * central.length)]!;
  }
}

const dim = (v: unknown, d: number) => (typeof v === 'number' && v >= 4 && v <= 10 ? v : d);

const hooks: HooksModule<'session_loop'> = {
  mode: 'session_loop',
  create(ctx) {
    let board = new Board(dim(ctx.options['cols'], 7), dim(ctx.options['rows'], 6));
    let turn = 0;
    const guestMove = (): Message => {
      turn += 1;
      const col = board.choose('guest', ctx.random);
      board.drop(col, 'guest');
      return { action: 'move', turn, col };
    };
    return {
      proto_guest_join_message: () => ({ action: 'join', cols: board.cols, rows: board.rows }),
      proto_host_handle_join: () => ({ action: 'ready', cols: board.cols, rows: board.rows, first: 'guest' }),
      proto_host_handle(msg) {
        const t = msg['turn'] as number;
        const col = msg['col'] as number;
        if (msg.action !== 'move') return { response: { action: 'error', reason: 'not_your_turn' }, abort: true };
        if (col >= board.cols) return { response: { action: 'error', turn: t, reason: 'invalid_column' }, abort: true };
        const row = board.drop(col, 'guest');
        if (row < 0) return { response: { action: 'error', turn: t, reason: 'column_full' }, abort: true };
        if (board.wins(col, row)) return { response: { action: 'end', winner: 'guest' }, completed: true };
        if (board.full()) return { response: { action: 'end', winner: 'draw' }, completed: true };
        const hc = board.choose('host', ctx.random);
        const hr = board.drop(hc, 'host');
        const won = board.wins(hc, hr);
        const over = won || board.full();
        return { response: { action: 'round_result', turn: t, col: hc, row: hr, player: 'host', game_over: over, winner: won ? 'host' : 'none' }, completed: over };
      },
      proto_guest_handle_ready(msg) {
        board = new Board(msg['cols'] as number, msg['rows'] as number);
        return null;
      },
      proto_guest_first_action: () => guestMove(),
      supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
      // A person dropped the stone in another column: move it there on our board.
      proto_on_decision(decided, suggested) {
        if (decided.action !== 'move' || suggested.action !== 'move') return;
        const col = suggested['col'] as number;
        const top = board.landing(col) < 0 ? board.rows - 1 : board.landing(col) - 1;
        if (top >= 0 && board.cells[col]![top] === 'guest') board.cells[col]![top] = null;
        board.drop(decided['col'] as number, 'guest');
      },
      proto_guest_handle(msg) {
        if (msg.action === 'end') return { completed: true };
        if (msg.action !== 'round_result') return { abort: true };
        const col = msg['col'] as number;
        // The host's cell must be where its stone actually lands on our copy of the board.
        if (board.landing(col) !== msg['row']) return { abort: true };
        const row = board.drop(col, 'host');
        if ((msg['winner'] === 'host') !== board.wins(col, row)) return { abort: true };
        if (msg['game_over']) return { completed: true };
        return guestMove();
      },
    };
  },
};

export default hooks;
