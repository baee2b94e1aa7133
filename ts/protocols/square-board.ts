/**
 * The NxN board the stone-placing games (Gomoku, Reversi) keep on both sides: guest is black and moves
 * first, host is white. Cells are addressed [row][col] as their messages' row and col fields. Also the
 * words both games' narrators share.
 */
export type Side = 'host' | 'guest';
export type Cell = Side | null;
export type Move = readonly [row: number, col: number];

export const other = (s: Side): Side => (s === 'host' ? 'guest' : 'host');

/** The board_size option when it is an integer in [min, max], else the game's default. */
export const boardSize = (v: unknown, min: number, max: number, fallback: number) =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : fallback;

export class SquareBoard {
  /** cells[row][col]. */
  readonly cells: Cell[][];
  constructor(readonly n: number) {
    this.cells = Array.from({ length: n }, () => Array<Cell>(n).fill(null));
  }
  /** A board drawn as rows of `B` (guest), `W` (host) and anything else for empty. */
  static from<T extends SquareBoard>(this: new (n: number) => T, rows: string[]): T {
    const b = new this(rows.length);
    rows.forEach((line, r) => [...line].forEach((ch, c) => (b.cells[r]![c] = ch === 'B' ? 'guest' : ch === 'W' ? 'host' : null)));
    return b;
  }
  /** The cell, or undefined off the board. */
  at(r: number, c: number): Cell | undefined {
    return r >= 0 && r < this.n && c >= 0 && c < this.n ? this.cells[r]![c] : undefined;
  }
  count(who: Side): number {
    return this.cells.reduce((s, row) => s + row.filter((v) => v === who).length, 0);
  }
  full(): boolean {
    return this.cells.every((row) => !row.includes(null));
  }
}

/** A side with the colour it plays, as the narrators name it: "guest (black)". */
export const player = (s: Side): string => `${s} (${s === 'guest' ? 'black' : 'white'})`;
/** A cell in its messages' own numbering, so that a person can answer with the same numbers. */
export const cellText = (row: unknown, col: unknown): string => `row ${String(row)}, col ${String(col)}`;
/** A winner field as said: "none" (after the game ended) and "draw" both mean nobody won. */
export const outcomeText = (winner: unknown): string => (winner === 'none' || winner === 'draw' ? 'a draw' : `${String(winner)} wins`);
/** The host's error message: it refused the guest's move and ends the game. */
export const refusalText = (msg: Record<string, unknown>): string =>
  `host refuses ${typeof msg['turn'] === 'number' ? `turn ${msg['turn']}` : 'the move'}: ${String(msg['reason'])}`;
