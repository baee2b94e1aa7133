/**
 * Connect four (session_loop). The guest (red) moves first by naming a column; the host (yellow)
 * records it, drops its own stone and answers with a round_result carrying its cell and the win check.
 * Both sides keep the board; each player looks for a winning drop, then a block, then the most central
 * column (random among ties), which makes a reasonable opponent for tests and demos.
 *
 * Numbering follows the reference's connect4 hooks, because peers read it off the wire: rows count from
 * the top (row 0 is the top row, rows-1 the bottom one, where a first stone lands); turns count both
 * players' stones (the guest plays 1, 3, 5…, the host answers turn t with t+1); and a guest stone that
 * wins is echoed as a round_result with player "guest" rather than an `end`.
 */
import type { HooksModule, Message, Narrator } from 'aigenora/hooks';

export type Cell = 'host' | 'guest' | null;

export class Board {
  readonly cells: Cell[][];
  constructor(
    readonly cols: number,
    readonly rows: number,
  ) {
    this.cells = Array.from({ length: cols }, () => Array<Cell>(rows).fill(null));
  }
  /**
   * The row a stone dropped in `col` lands on, or -1 if the column is full (or off the board). Rows count
   * from the top, so the landing row is the lowest empty one: the last null of the column.
   */
  landing(col: number): number {
    return this.cells[col]?.lastIndexOf(null) ?? -1;
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

/**
 * Each stone with the cell it landed in and, on the last, why the game ended. The guest's move names
 * only its column, so the narrator keeps a board to say where that stone landed.
 */
function narrator(): Narrator {
  let board: Board | undefined;
  const ending = (winner: unknown) => (winner === 'host' || winner === 'guest' ? `four in a row: ${winner} wins` : 'the board is full: a draw');
  return (msg) => {
    const col = msg['col'] as number;
    switch (msg.action) {
      case 'ready':
        board = new Board(msg['cols'] as number, msg['rows'] as number);
        return `${String(msg['cols'])} columns × ${String(msg['rows'])} rows, four in a row wins; the guest (red) drops first`;
      case 'move': {
        const row = board?.drop(col, 'guest') ?? -1;
        return `guest (red) drops into column ${col}${row >= 0 ? ` → row ${row}` : ''}`;
      }
      case 'round_result':
        // A game the guest's stone ended comes back as that stone, echoed.
        if (msg['player'] === 'guest') return `the guest's stone in column ${col}, row ${String(msg['row'])} ends the game — ${ending(msg['winner'])}`;
        board?.drop(col, 'host');
        return `host (yellow) drops into column ${col} → row ${String(msg['row'])}${msg['game_over'] === true ? ` — ${ending(msg['winner'])}` : ''}`;
      case 'end':
        return `game over: ${msg['winner'] === 'draw' ? 'a draw' : `${String(msg['winner'])} wins`}`;
      case 'error':
        return `host refuses ${typeof msg['turn'] === 'number' ? `turn ${msg['turn']}` : 'the move'}: ${String(msg['reason'])}`;
      default:
        return undefined;
    }
  };
}

const hooks: HooksModule<'session_loop'> = {
  mode: 'session_loop',
  narrator,
  create(ctx) {
    let board = new Board(dim(ctx.options['cols'], 7), dim(ctx.options['rows'], 6));
    // The guest's turn number: 1 for the first stone, then one more than the host's last round_result
    // (the reference's guest does the same and never checks the host's number, nor does this one).
    let turn = 1;
    /** The guest's latest stone, which a host that ends the game on it echoes back. */
    let last: { col: number; row: number } | null = null;
    const guestMove = (): Message => {
      const col = board.choose('guest', ctx.random);
      last = { col, row: board.drop(col, 'guest') };
      return { action: 'move', turn, col };
    };
    return {
      proto_guest_join_message: () => ({ action: 'join', cols: board.cols, rows: board.rows }),
      proto_host_handle_join: () => ({ action: 'ready', cols: board.cols, rows: board.rows, first: 'guest' }),
      proto_host_handle(msg) {
        const t = msg['turn'] as number;
        const col = msg['col'] as number;
        if (msg.action !== 'move') return { response: { action: 'error', reason: 'not_your_turn' }, abort: true };
        if (col < 0 || col >= board.cols) return { response: { action: 'error', turn: t, reason: 'invalid_column' }, abort: true };
        const row = board.drop(col, 'guest');
        if (row < 0) return { response: { action: 'error', turn: t, reason: 'column_full' }, abort: true };
        const echo = { action: 'round_result', turn: t, col, row, player: 'guest', game_over: true };
        if (board.wins(col, row)) return { response: { ...echo, winner: 'guest' }, completed: true };
        // Only a board with an odd number of cells fills on a guest stone. The reference's host has no
        // answer there (it fails looking for a column of its own); echoing the stone as a draw is the
        // message its guest, and ours, read as the end of the game.
        if (board.full()) return { response: { ...echo, winner: 'none' }, completed: true };
        const hc = board.choose('host', ctx.random);
        const hr = board.drop(hc, 'host');
        const won = board.wins(hc, hr);
        const over = won || board.full();
        return {
          response: { action: 'round_result', turn: t + 1, col: hc, row: hr, player: 'host', game_over: over, winner: won ? 'host' : 'none' },
          completed: over,
        };
      },
      proto_guest_handle_ready(msg) {
        board = new Board(msg['cols'] as number, msg['rows'] as number);
        turn = 1;
        last = null;
        return null;
      },
      proto_guest_first_action: () => guestMove(),
      supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
      // A person dropped the stone in another column: move it there on our board.
      proto_on_decision(decided, suggested) {
        if (decided.action !== 'move' || suggested.action !== 'move') return;
        const col = suggested['col'] as number;
        // Our suggested stone is the column's topmost one, just above its landing row.
        const top = board.landing(col) + 1;
        if (top < board.rows && board.cells[col]![top] === 'guest') board.cells[col]![top] = null;
        const dc = decided['col'] as number;
        last = { col: dc, row: board.drop(dc, 'guest') };
      },
      proto_guest_handle(msg) {
        if (msg.action === 'end') return { completed: true };
        if (msg.action !== 'round_result') return { abort: true };
        const col = msg['col'] as number;
        const row = msg['row'] as number;
        if (msg['player'] === 'guest') {
          // The host ended the game on our stone: it must be that stone, and the outcome must be what it made.
          if (!last || last.col !== col || last.row !== row || msg['game_over'] !== true) return { abort: true };
          const outcome = board.wins(col, row) ? 'guest' : board.full() ? 'none' : null;
          return outcome !== null && msg['winner'] === outcome ? { completed: true } : { abort: true };
        }
        // The host's cell must be where its stone actually lands on our copy of the board.
        if (board.landing(col) !== row) return { abort: true };
        board.drop(col, 'host');
        const won = board.wins(col, row);
        const over = won || board.full();
        if (msg['winner'] !== (won ? 'host' : 'none') || msg['game_over'] !== over) return { abort: true };
        if (over) return { completed: true };
        turn = (msg['turn'] as number) + 1;
        return guestMove();
      },
    };
  },
};

export default hooks;
