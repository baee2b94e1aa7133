/**
 * Custom renderers for the protocols a generic form serves badly: Connect Four (click a column),
 * Reversi and Gomoku (click a cell) and chat (a transcript and a text box). Each board is derived from
 * the frames alone, so a page that only holds the session's frames can draw it, and the move it
 * submits is the message the spec expects (with the turn number the host checks).
 *
 * Pieces are told apart by shape and by their accessible names (● the guest, ○ the host), never by
 * colour alone. Peer data only ever reaches the page as text nodes.
 */
import type { Message, Role } from '../hooks/types.js';
import type { Spec } from '../spec/types.js';
import { Board as ReversiBoard } from '../protocols/reversi/hooks.js';
import type { DecisionAnswer, DecisionView } from './decide-form.js';

export type StateView = Omit<DecisionView, 'window'>;

/** An element with attributes and children; strings become text nodes (never parsed as markup). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return e;
}

let ids = 0;
/** A page-unique element id (several roots may be drawn in one page). */
export const uid = (what: string) => `aigenora-${what}-${++ids}`;

export interface BoardKit {
  /** A short name for headings ("Connect Four"). */
  title: string;
  /** Whether this kit's controls can make `role`'s decision (else the generic form does, under the board). */
  decides(spec: Spec, role: Role): boolean;
  /** Draws the board or transcript into `parent`; with `submit`, the controls that make the choice. */
  render(parent: HTMLElement, v: StateView, submit?: (a: DecisionAnswer) => void): void;
}

const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);
/** A board dimension from the frames or options; anything outside 1..32 (no built-in spec allows it) takes the default, so a page never builds thousands of cells. */
const dim = (v: unknown): number | undefined => {
  const n = int(v);
  return n !== undefined && n >= 1 && n <= 32 ? n : undefined;
};
const sendsMove = (spec: Spec, role: Role, name: string) =>
  spec.messages.some((m) => m.name === name && (m.direction === 'both' || m.direction === (role === 'host' ? 'host_to_guest' : 'guest_to_host')));
const hasFields = (spec: Spec, name: string, fields: string[]) => {
  const m = spec.messages.find((x) => x.name === name);
  return !!m && fields.every((f) => f in m.fields);
};
const ready = (v: StateView): Message | undefined => v.frames.find((f) => f.from === 'host' && f.msg.action === 'ready')?.msg;
const PIECE: Record<Role, string> = { guest: '●', host: '○' };
/** The latest stone: a thick inner ring, seen without colour (its name says "last move"). */
const lastMark = (cell: HTMLElement) => {
  cell.style.outline = '3px double currentColor';
  cell.style.outlineOffset = '-5px';
};
const centre = (cell: HTMLElement) => {
  cell.style.display = 'flex';
  cell.style.alignItems = 'center';
  cell.style.justifyContent = 'center';
};

/** The outcome a frame announces (an `end`, or a result with game_over), as text. */
function outcome(msg: Message, names: Record<Role, string>, me: Role): string | undefined {
  const over = msg.action === 'end' || msg['game_over'] === true;
  if (!over) return undefined;
  const w = msg['winner'];
  if (w === 'host' || w === 'guest') return `Game over: ${names[w]}${w === me ? ' (you)' : ''} wins.`;
  return 'Game over: a draw.';
}

function status(parent: HTMLElement, text: string): HTMLElement {
  const p = el('p', { class: 'board-status' }, text);
  parent.append(p);
  return p;
}

// ---------------------------------------------------------------- Connect Four

interface C4 {
  cols: number;
  rows: number;
  /** cells[col][row], row 0 at the bottom (as the protocol counts). */
  cells: (Role | null)[][];
  next: number;
  /** The cell the latest stone went to, "col,row". */
  last?: string;
  over?: string;
}

function connectFour(v: StateView): C4 {
  const r = ready(v);
  const cols = dim(r?.['cols']) ?? dim(v.options['cols']) ?? 7;
  const rows = dim(r?.['rows']) ?? dim(v.options['rows']) ?? 6;
  const cells: (Role | null)[][] = Array.from({ length: cols }, () => Array<Role | null>(rows).fill(null));
  let last: string | undefined;
  const put = (col: number, row: number, who: Role) => {
    cells[col]![row] = who;
    last = `${col},${row}`;
  };
  const drop = (col: number, who: Role) => {
    const row = cells[col]?.indexOf(null) ?? -1;
    if (row >= 0) put(col, row, who);
  };
  // The wire counts rows from the top (the reference's numbering: row rows-1 is the bottom); cells
  // count them from the bottom. Turns: the host answers guest turn t with t+1, the guest's next is t+2.
  let next = 1;
  let over: string | undefined;
  for (const { from, msg } of v.frames) {
    const col = int(msg['col']);
    if (msg.action === 'move' && col !== undefined) {
      drop(col, from);
      const turn = int(msg['turn']);
      if (turn !== undefined) next = Math.max(next, turn + 1);
    } else if (msg.action === 'round_result' && col !== undefined) {
      const who: Role = msg['player'] === 'guest' ? 'guest' : 'host';
      const wire = int(msg['row']);
      const row = wire === undefined ? undefined : rows - 1 - wire;
      // A guest stone echoed back (the winning one) is already on the board from the guest's move.
      if (who === 'guest' && row !== undefined && cells[col]?.[row] === 'guest') last = `${col},${row}`;
      else if (row !== undefined && row >= 0 && cells[col]?.[row] === null) put(col, row, who);
      else drop(col, who);
      const turn = int(msg['turn']);
      if (turn !== undefined) next = Math.max(next, turn + 1);
    }
    over = outcome(msg, { guest: 'Red', host: 'Yellow' }, v.role) ?? over;
  }
  return { cols, rows, cells, next, ...(last && { last }), ...(over && { over }) };
}

const c4Names: Record<Role, string> = { guest: 'red', host: 'yellow' };

const connectFourKit: BoardKit = {
  title: 'Connect Four',
  decides: (spec, role) => sendsMove(spec, role, 'move'),
  render(parent, v, submit) {
    const b = connectFour(v);
    const you = v.role === 'guest' ? 'Red (●), moving first' : 'Yellow (○)';
    status(parent, `You are ${you}.`);
    const grid = el('div', { class: 'board connect-four', role: 'group', 'aria-label': `Connect Four board, ${b.cols} columns by ${b.rows} rows` });
    grid.style.display = 'grid';
    grid.style.gridTemplateColumns = `repeat(${b.cols}, 2.6em)`;
    grid.style.gridAutoRows = '2.6em';
    grid.style.gap = '2px';
    const full = (c: number) => !b.cells[c]!.includes(null);
    const live = submit && !b.over;
    const pick = (c: number) => {
      if (!live || full(c)) return;
      submit({ message: { action: 'move', turn: b.next, col: c } });
    };
    if (live)
      for (let c = 0; c < b.cols; c++) {
        const btn = el('button', { type: 'button', class: 'column', 'aria-label': `column ${c + 1}`, 'data-key': `column:${c}` }, `↓ ${c + 1}`);
        if (full(c)) btn.disabled = true;
        btn.addEventListener('click', () => pick(c));
        grid.append(btn);
      }
    for (let r = b.rows - 1; r >= 0; r--)
      for (let c = 0; c < b.cols; c++) {
        const who = b.cells[c]![r] ?? null;
        const isLast = b.last === `${c},${r}`;
        const label = `column ${c + 1}, row ${r + 1}: ${who ? `${c4Names[who]}${who === v.role ? ' (you)' : ''}${isLast ? ', last move' : ''}` : 'empty'}`;
        const cell = live
          ? el('button', { type: 'button', tabindex: '-1', class: 'cell', 'aria-label': label, 'data-key': `cell:${r},${c}` })
          : el('span', { role: 'img', class: 'cell', 'aria-label': label });
        cell.textContent = who ? PIECE[who] : '·';
        cell.style.fontSize = '1.4em';
        cell.style.padding = '0';
        cell.style.border = '1px solid #888';
        centre(cell);
        if (who) cell.style.color = who === 'guest' ? '#c00' : '#a80';
        if (isLast) lastMark(cell);
        if (cell instanceof HTMLButtonElement) {
          if (full(c)) cell.disabled = true;
          cell.addEventListener('click', () => pick(c));
        }
        grid.append(cell);
      }
    parent.append(grid);
    if (b.over) status(parent, b.over);
  },
};

// ---------------------------------------------------------------- Reversi and Gomoku

interface Square {
  n: number;
  /** cells[row][col]. */
  cells: (Role | null)[][];
  next: number;
  /** Cells this side may take now (Reversi: the bracketing ones; Gomoku: the empty ones). */
  legal: (r: number, c: number) => boolean;
  mustPass: boolean;
  /** The cell the latest stone went to, "row,col". */
  last?: string;
  score?: string;
  over?: string;
}

function reversi(v: StateView): Square {
  const size = dim(ready(v)?.['board_size']) ?? dim(v.options['board_size']) ?? 8;
  // The opening cross needs an even side of at least 4.
  const n = size >= 4 && size % 2 === 0 ? size : 8;
  const b = new ReversiBoard(n);
  let acts = 0;
  let last: string | undefined;
  let over: string | undefined;
  for (const { from, msg } of v.frames) {
    const [row, col] = [int(msg['row']), int(msg['col'])];
    if ((msg.action === 'move' || msg.action === 'pass') && from === 'guest') acts++;
    const placed = row !== undefined && col !== undefined && (msg.action === 'move' || (msg.action === 'round_result' && msg['passed'] !== true));
    if (placed && b.play(row, col, msg.action === 'move' ? from : msg['player'] === 'guest' ? 'guest' : 'host')) last = `${row},${col}`;
    over = outcome(msg, { guest: 'Black', host: 'White' }, v.role) ?? over;
  }
  const legal = b.legal(v.role);
  return {
    n,
    cells: b.cells,
    next: 2 * acts + 1,
    legal: (r, c) => legal.some(([lr, lc]) => lr === r && lc === c),
    mustPass: legal.length === 0,
    ...(last && { last }),
    score: `Black ● ${b.count('guest')}, White ○ ${b.count('host')}.`,
    ...(over && { over }),
  };
}

function gomoku(v: StateView): Square {
  const n = dim(ready(v)?.['board_size']) ?? dim(v.options['board_size']) ?? 15;
  const cells: (Role | null)[][] = Array.from({ length: n }, () => Array<Role | null>(n).fill(null));
  let moves = 0;
  let last: string | undefined;
  let over: string | undefined;
  for (const { from, msg } of v.frames) {
    over = outcome(msg, { guest: 'Black', host: 'White' }, v.role) ?? over;
    const [row, col] = [int(msg['row']), int(msg['col'])];
    if (row === undefined || col === undefined || !cells[row] || col < 0 || col >= n) continue;
    if (msg.action === 'move') {
      cells[row][col] = from;
      last = `${row},${col}`;
      if (from === 'guest') moves++;
    } else if (msg.action === 'round_result') {
      cells[row][col] = msg['player'] === 'guest' ? 'guest' : 'host';
      last = `${row},${col}`;
    }
  }
  return { n, cells, next: 2 * moves + 1, legal: (r, c) => cells[r]?.[c] === null, mustPass: false, ...(last && { last }), ...(over && { over }) };
}

/** A square board whose cells are buttons in one tab stop; the arrow keys move between them. */
function squareKit(title: string, derive: (v: StateView) => Square): BoardKit {
  return {
    title,
    decides: (spec, role) => sendsMove(spec, role, 'move'),
    render(parent, v, submit) {
      const b = derive(v);
      const live = submit && !b.over;
      status(parent, `You are ${v.role === 'guest' ? 'Black (●), moving first' : 'White (○)'}.${b.score ? ` ${b.score}` : ''}`);
      const grid = el('div', { class: `board ${title.toLowerCase()}`, role: 'group', 'aria-label': `${title} board, ${b.n} by ${b.n}` });
      grid.style.display = 'grid';
      grid.style.gridTemplateColumns = `repeat(${b.n}, 2em)`;
      grid.style.gridAutoRows = '2em';
      grid.style.gap = '1px';
      const buttons: HTMLButtonElement[] = [];
      const note = el('p', { class: 'board-note', role: 'status' });
      let first = -1;
      for (let r = 0; r < b.n; r++)
        for (let c = 0; c < b.n; c++) {
          const who = b.cells[r]![c] ?? null;
          const ok = !!live && b.legal(r, c);
          const isLast = b.last === `${r},${c}`;
          const label = `row ${r + 1}, column ${c + 1}: ${who ? `${who === 'guest' ? 'black' : 'white'}${who === v.role ? ' (you)' : ''}${isLast ? ', last move' : ''}` : ok ? 'empty' : 'empty, not playable'}`;
          const cell = live
            ? el('button', { type: 'button', tabindex: '-1', class: 'cell', 'aria-label': label, 'data-key': `cell:${r},${c}` })
            : el('span', { role: 'img', class: 'cell', 'aria-label': label });
          // Playable empty cells carry a dot, so they are visible without colour.
          cell.textContent = who ? PIECE[who] : ok && title === 'Reversi' ? '·' : '';
          cell.style.fontSize = '1.3em';
          cell.style.padding = '0';
          cell.style.border = '1px solid #1b5e20';
          centre(cell);
          cell.style.background = '#2e7d32';
          cell.style.color = who === 'host' ? '#fff' : '#000';
          if (isLast) lastMark(cell);
          if (cell instanceof HTMLButtonElement) {
            const i = buttons.length;
            if (ok && first < 0) first = i;
            // Unplayable cells stay focusable (aria-disabled) so the arrow keys can cross them.
            if (!ok) cell.setAttribute('aria-disabled', 'true');
            cell.addEventListener('click', () => {
              if (ok) submit({ message: { action: 'move', turn: b.next, row: r, col: c } });
              else note.textContent = `Row ${r + 1}, column ${c + 1} is not a legal move.`;
            });
            cell.addEventListener('keydown', (e) => {
              const step = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] }[e.key];
              if (!step) return;
              e.preventDefault();
              const [nr, nc] = [Math.min(b.n - 1, Math.max(0, r + step[0]!)), Math.min(b.n - 1, Math.max(0, c + step[1]!))];
              const next = buttons[nr * b.n + nc]!;
              cell.tabIndex = -1;
              next.tabIndex = 0;
              next.focus();
            });
            buttons.push(cell);
          }
          grid.append(cell);
        }
      const entry = buttons[first >= 0 ? first : Math.floor(buttons.length / 2)];
      if (entry) entry.tabIndex = 0;
      parent.append(grid);
      if (live && b.mustPass) {
        const pass = el('button', { type: 'button', class: 'pass', 'data-key': 'pass' }, 'Pass (no legal move)');
        pass.addEventListener('click', () => submit({ message: { action: 'pass', turn: b.next } }));
        parent.append(pass);
      }
      parent.append(note);
      if (b.over) status(parent, b.over);
    },
  };
}

// ---------------------------------------------------------------- chat

const chatKit: BoardKit = {
  title: 'Chat',
  decides: (spec, role) => sendsMove(spec, role, 'chat'),
  // Peer text is isolated (<bdi>) so right-to-left overrides in it cannot reorder the rest of the line.
  render(parent, v, submit) {
    // Not a live region: it is drawn anew on every change, so a page announces new lines itself.
    const log = el('ol', { class: 'transcript', 'aria-label': 'Conversation' });
    let mine = 0;
    let ended = '';
    for (const { from, msg } of v.frames) {
      if (from === v.role && msg.action === 'chat') mine = Math.max(mine, int(msg['seq']) ?? mine + 1);
      if (msg.action === 'chat')
        log.append(
          el(
            'li',
            { class: from === v.role ? 'me' : 'peer' },
            el('strong', {}, from === v.role ? 'you' : 'peer'),
            ': ',
            el('bdi', {}, String(msg['text'] ?? '')),
          ),
        );
      if (msg.action === 'end') log.append(el('li', { class: 'left' }, from === v.role ? '(you left)' : '(peer left)'));
      if (msg.action === 'end' && from === v.role) ended = 'You left the conversation.';
    }
    if (!log.children.length) log.append(el('li', { class: 'empty' }, 'No messages yet.'));
    parent.append(log);
    if (!submit || ended) {
      if (ended) status(parent, ended);
      return;
    }
    const max = v.spec.messages.find((m) => m.name === 'chat')?.fields['text']?.max_length;
    const form = el('form', { class: 'chat-form' });
    const id = uid('chat');
    const input = el('input', {
      type: 'text',
      id,
      name: 'text',
      required: '',
      autocomplete: 'off',
      'data-key': 'chat.text',
      ...(max !== undefined && { maxlength: String(max) }),
    });
    const send = el('button', { type: 'submit', 'data-key': 'chat.send' }, 'Send');
    const leave = el('button', { type: 'button', 'data-key': 'chat.leave' }, 'Leave');
    form.append(el('label', { for: id }, 'Message'), ' ', input, ' ', send, ' ', leave);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const text = input.value;
      if (!text) return;
      // Cleared first: a page may redraw from inside submit, and the redraw keeps what the box holds.
      input.value = '';
      // Numbered here as well as by the frames, so two sends before the next redraw do not share a number.
      submit({ message: { action: 'chat', text, seq: ++mine } });
    });
    leave.addEventListener('click', () => submit({ message: { action: 'end' } }));
    parent.append(form);
  },
};

/**
 * The custom renderer for a spec, by its name, family or tags and the shape of its messages (a spec
 * named like a board game whose move lacks the board's fields gets the generic form); null for the
 * generic form.
 */
export function boardFor(spec: Spec): BoardKit | null {
  const tag = [spec.name, spec.family ?? '', ...(spec.tags ?? [])].join(' ').toLowerCase();
  if (/connect.?(four|4)/.test(tag) && hasFields(spec, 'move', ['col'])) return connectFourKit;
  if (/reversi|othello/.test(tag) && hasFields(spec, 'move', ['row', 'col'])) return squareKit('Reversi', reversi);
  if (/gomoku|five.in.a.row/.test(tag) && hasFields(spec, 'move', ['row', 'col'])) return squareKit('Gomoku', gomoku);
  if ((spec.flow?.mode === 'free' || spec.type === 'chat') && hasFields(spec, 'chat', ['text'])) return chatKit;
  return null;
}
