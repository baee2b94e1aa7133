// The decision form and boards in Debian's headless Chromium: each protocol's decision is rendered
// from its spec and frames, a person's clicks (or keys) give the answer the engine takes, and every
// message answer passes the spec's own validator here on the Node side. Board frames come from the
// protocols' real hooks playing each other; expected boards are replayed with the protocols' own
// Board classes, not with the renderer's code. Screenshots go to artifacts/web/.
import { build } from 'esbuild';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, serveStatic, type StaticServer } from '../../scripts/lib/chromium.js';
import { toHookResult, type HookContext, type HooksModule, type Message, type Role } from '../../ts/hooks/types.js';
import c4Hooks, { Board as C4Board } from '../../ts/protocols/connect-four/hooks.js';
import gomokuHooks from '../../ts/protocols/gomoku/hooks.js';
import reversiHooks, { Board as ReversiBoard } from '../../ts/protocols/reversi/hooks.js';
import { messageValidator } from '../../ts/spec/messages.js';
import type { Spec } from '../../ts/spec/types.js';
import type { DecisionAnswer, DecisionView } from '../../ts/web/decide-form.js';

const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const ART = join(ROOT, 'artifacts/web');
type Frame = { from: Role; msg: Message };

function spec(name: string): { spec: Spec; text: string } {
  const text = readFileSync(join(ROOT, 'ts/protocols', name, 'spec.json'), 'utf8');
  return { spec: JSON.parse(text) as Spec, text };
}
/** The spec's own verdict on a message this side sends. */
function validates(name: string, role: Role, msg: unknown) {
  const s = spec(name);
  return messageValidator(`test-web-${name}`, s.spec, s.text).check(msg, role === 'host' ? 'host_to_guest' : 'guest_to_host');
}

/** A guest and a host playing `turns` full turns with the protocol's hooks: every frame, in order. */
async function play(mod: HooksModule<'session_loop'>, turns: number, options: Record<string, unknown> = {}, seed = 7): Promise<Frame[]> {
  const ctx = (role: Role): HookContext => ({
    role,
    options,
    args: [],
    stateDir: '',
    decision: null,
    random: () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31,
  });
  const guest = mod.create(ctx('guest'));
  const host = mod.create(ctx('host'));
  const frames: Frame[] = [];
  const join = (await guest.proto_guest_join_message()) ?? { action: 'join' };
  frames.push({ from: 'guest', msg: join });
  const ready = toHookResult(await host.proto_host_handle_join(join)).response!;
  frames.push({ from: 'host', msg: ready });
  await guest.proto_guest_handle_ready(ready);
  let step = toHookResult(await guest.proto_guest_first_action());
  for (let t = 0; t < turns; t++) {
    frames.push({ from: 'guest', msg: step.response! });
    const r = toHookResult(await host.proto_host_handle(step.response!));
    frames.push({ from: 'host', msg: r.response! });
    step = toHookResult(await guest.proto_guest_handle(r.response!));
  }
  return frames;
}

const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();
const win = (w: DecisionView['window']['expects'], key: string, value: number, deadline: string | null = inSeconds(90)): DecisionView['window'] => ({
  match_key: key,
  match_value: value,
  expects: w,
  deadline_at: deadline,
});

let browser: Browser;
let server: StaticServer;

beforeAll(async () => {
  mkdirSync(ART, { recursive: true });
  const bundle = await build({
    entryPoints: [join(ROOT, 'test/web/fixtures/entry.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'warning',
  });
  const code = bundle.outputFiles[0]!.text;
  if (/(from|import|require\()\s*["']node:/.test(code)) throw new Error('the page bundle pulls in a node: module');
  server = await serveStatic(undefined, {
    '/': [
      'text/html',
      '<!doctype html><meta charset="utf-8"><title>aigenora decisions</title><main id="app"></main><script type="module" src="/entry.js"></script>',
    ],
    '/entry.js': ['text/javascript', code],
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function open(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
  page.setDefaultTimeout(5000);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  // Anything other than our own server is a request the renderer must never make.
  page.on('request', (r) => {
    if (!r.url().startsWith(server.url)) errors.push(`request to ${r.url()}`);
  });
  await page.goto(`${server.url}/`);
  await page.waitForFunction(() => '__decide' in window);
  (page as Page & { errors: string[] }).errors = errors;
  return page;
}
const errorsOf = (page: Page) => (page as Page & { errors: string[] }).errors;
const decide = (page: Page, v: DecisionView) => page.evaluate((view) => (window as unknown as { __decide(v: DecisionView): void }).__decide(view), v);
const showState = (page: Page, v: Omit<DecisionView, 'window'>) =>
  page.evaluate((view) => (window as unknown as { __state(v: Omit<DecisionView, 'window'>): void }).__state(view), v);
const submitted = (page: Page) => page.evaluate(() => (window as unknown as { __submitted: DecisionAnswer[] }).__submitted);
const shot = (page: Page, name: string) => page.screenshot({ path: join(ART, `decide-${name}.png`), fullPage: true });

const H = (c: string) => c.repeat(64);
const rpsFrames: Frame[] = [
  { from: 'guest', msg: { action: 'join', best_of: 3 } },
  { from: 'host', msg: { action: 'ready', best_of: 3, rounds_to_win: 2, termination: 'first_to_win', round_delay_seconds: 0 } },
  { from: 'host', msg: { action: 'commit', round: 0, hash: H('a') } },
  { from: 'guest', msg: { action: 'commit', round: 0, hash: H('b') } },
  { from: 'host', msg: { action: 'reveal', round: 0, choice: 'rock', nonce: 'c'.repeat(16) } },
  { from: 'guest', msg: { action: 'reveal', round: 0, choice: 'scissors', nonce: 'd'.repeat(16) } },
  {
    from: 'host',
    msg: {
      action: 'round_result',
      round: 0,
      host_choice: 'rock',
      guest_choice: 'scissors',
      round_winner: 'host',
      host_wins: 1,
      guest_wins: 0,
      game_over: false,
      game_winner: 'none',
    },
  },
];
const rpsView = (extra: Partial<DecisionView> = {}): DecisionView => ({
  spec: spec('rps').spec,
  role: 'guest',
  options: { best_of: 3 },
  window: win('value', 'round', 1),
  frames: rpsFrames,
  ...extra,
});

describe('decision form in Chromium', () => {
  it('the RPS frames used below are messages the spec accepts', () => {
    for (const f of rpsFrames) expect(validates('rps', f.from, f.msg).ok, JSON.stringify(f.msg)).toBe(true);
  });

  it('RPS: three buttons from the spec; clicking paper answers {value: "paper"} once; a countdown; earlier rounds without their hashes', async () => {
    const page = await open();
    await decide(page, rpsView());
    const choices = page.getByRole('group', { name: 'your choice' }).getByRole('button');
    expect(await choices.allInnerTexts()).toEqual(['rock', 'paper', 'scissors']);
    expect(await page.getByRole('timer').innerText()).toMatch(/^Time left: 1:(29|30)$/);
    const log = await page.getByRole('list', { name: 'Frames so far' }).innerText();
    expect(log).toContain('round_result: round 0, host_choice rock, guest_choice scissors');
    expect(log).not.toContain(H('a'));
    await shot(page, 'rps-decision');
    await page.getByRole('button', { name: 'paper' }).click();
    await page
      .getByRole('button', { name: 'rock' })
      .click({ force: true, timeout: 2000 })
      .catch(() => {});
    expect(await submitted(page)).toEqual([{ value: 'paper' }]);
    expect(await page.getByRole('button', { name: 'rock' }).isDisabled()).toBe(true);
    expect(await page.getByRole('status').filter({ hasText: 'Sent' }).innerText()).toContain('Sent: paper');
    await shot(page, 'rps-sent');
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  it('keyboard only: Tab then Enter picks the first choice; Tab x3 then Enter the third; the timer says when time is up', async () => {
    const page = await open();
    await decide(page, rpsView({ window: win('value', 'round', 1, inSeconds(-1)) }));
    expect(await page.getByRole('timer').innerText()).toBe('Time is up.');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await decide(page, rpsView({ window: win('value', 'round', 2, null) }));
    expect(await page.getByRole('timer').innerText()).toBe('No time limit.');
    for (let i = 0; i < 3; i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    expect(await submitted(page)).toEqual([{ value: 'rock' }, { value: 'scissors' }]);
    await page.close();
  });

  it('a round value that is a number (weak-wins-all bid): a bounded number input, an out-of-range bid refused in the page, {value: 300} sent', async () => {
    const page = await open();
    await decide(page, { spec: spec('weak-wins-all').spec, role: 'host', options: {}, window: win('value', 'round', 0), frames: [] });
    const bid = page.getByRole('spinbutton', { name: 'bid' });
    expect([await bid.getAttribute('min'), await bid.getAttribute('max'), await bid.inputValue()]).toEqual(['0', '1000', '']);
    expect(await page.getByRole('heading', { level: 2 }).innerText()).toMatch(/: Round 1, your choice$/);
    await bid.fill('1001');
    await page.getByRole('button', { name: 'Choose' }).click();
    expect(await page.getByRole('alert').innerText()).toBe('bid must be from 0 to 1000');
    await bid.fill('300');
    await bid.press('Enter');
    expect(await submitted(page)).toEqual([{ value: 300 }]);
    await page.close();
  });

  it('a refused choice is shown with the engine reason, as text even when it looks like markup', async () => {
    const page = await open();
    const reason = 'not a valid choice: MESSAGE_ENUM <img src=x onerror="window.__pwned=1">';
    await decide(page, rpsView({ refused: reason }));
    const alert = page.getByRole('alert').filter({ hasText: 'refused' });
    expect(await alert.innerText()).toBe(`Your previous choice was refused: ${reason}`);
    expect(await page.locator('#app img').count()).toBe(0);
    expect(await page.evaluate(() => '__pwned' in window)).toBe(false);
    await shot(page, 'rps-refused');
    await page.close();
  });

  it('Connect Four mid-game from real frames: the pieces where the hooks put them; clicking column 4 sends the move the spec expects', async () => {
    const frames = await play(c4Hooks as HooksModule<'session_loop'>, 2);
    const board = new C4Board(7, 6);
    for (const f of frames) if (f.msg.action === 'move' || f.msg.action === 'round_result') board.drop(f.msg['col'] as number, f.from);
    // The host's answer carries the cell of its stone, the latest on the board.
    const lastResult = frames.at(-1)!.msg;
    const expected: string[] = [];
    // The page names rows from the bottom ("row 1"); the protocol, like the hooks' board, counts them from the top.
    for (let r = 5; r >= 0; r--)
      for (let c = 0; c < 7; c++) {
        const who = board.cells[c]![5 - r];
        const last = c === lastResult['col'] && 5 - r === lastResult['row'] ? ', last move' : '';
        expected.push(`column ${c + 1}, row ${r + 1}: ${who === 'guest' ? 'red (you)' : who === 'host' ? `yellow${last}` : 'empty'}`);
      }
    expect(expected.filter((l) => l.endsWith('last move'))).toHaveLength(1);
    expect(expected.filter((l) => !l.endsWith('empty'))).toHaveLength(4);
    const page = await open();
    await decide(page, { spec: spec('connect-four').spec, role: 'guest', options: {}, window: win('message', 'turn', 2), frames });
    const grid = page.getByRole('group', { name: 'Connect Four board, 7 columns by 6 rows' });
    const labels = await grid.locator('button.cell').evaluateAll((bs) => bs.map((b) => b.getAttribute('aria-label')));
    expect(labels).toEqual(expected);
    expect(await grid.locator('button.cell').count()).toBe(42);
    await shot(page, 'connect-four-decision');
    await page.getByRole('button', { name: 'column 4', exact: true }).click();
    const got = await submitted(page);
    // The reference's turns: guest 1, host 2, guest 3, host 4, so the guest's next is 5.
    expect(got).toEqual([{ message: { action: 'move', turn: 5, col: 3 } }]);
    const answer = got[0] as { message: Message };
    expect(validates('connect-four', 'guest', answer.message).ok).toBe(true);
    // The host's hooks take it as the next move (its turn number and column are what they expect).
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });

  it('Connect Four by keyboard: Tab reaches the column buttons in order, Enter drops; a full column cannot be chosen', async () => {
    const frames: Frame[] = [
      { from: 'guest', msg: { action: 'join', cols: 7, rows: 4 } },
      { from: 'host', msg: { action: 'ready', cols: 7, rows: 4, first: 'guest' } },
    ];
    for (let t = 1; t <= 2; t++) {
      // The reference's turns: the host answers guest turn 2t-1 with 2t.
      frames.push({ from: 'guest', msg: { action: 'move', turn: 2 * t - 1, col: 0 } });
      // Rows from the top: the host's stones land on rows 2 and 0 of this 4-row column.
      frames.push({ from: 'host', msg: { action: 'round_result', turn: 2 * t, col: 0, row: 4 - 2 * t, player: 'host', game_over: false, winner: 'none' } });
    }
    for (const f of frames) expect(validates('connect-four', f.from, f.msg).ok).toBe(true);
    const page = await open();
    await decide(page, { spec: spec('connect-four').spec, role: 'guest', options: {}, window: win('message', 'turn', 2), frames });
    expect(await page.getByRole('button', { name: 'column 1', exact: true }).isDisabled()).toBe(true);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('column 2');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    expect(await submitted(page)).toEqual([{ message: { action: 'move', turn: 5, col: 2 } }]);
    await page.close();
  });

  it('Reversi from real frames: the legal cells the rules allow, one tab stop and arrow keys, a click sends a valid move', async () => {
    const frames = await play(reversiHooks as HooksModule<'session_loop'>, 2, { board_size: 8 });
    const board = new ReversiBoard(8);
    for (const f of frames) {
      if (f.msg.action === 'move') board.play(f.msg['row'] as number, f.msg['col'] as number, f.from);
      if (f.msg.action === 'round_result' && !f.msg['passed']) board.play(f.msg['row'] as number, f.msg['col'] as number, 'host');
    }
    const legal = board.legal('guest').map(([r, c]) => `row ${r + 1}, column ${c + 1}: empty`);
    expect(legal.length).toBeGreaterThan(0);
    const page = await open();
    await decide(page, { spec: spec('reversi').spec, role: 'guest', options: { board_size: 8 }, window: win('message', 'turn', 2), frames });
    const cells = page.locator('button.cell');
    const enabled = await cells.evaluateAll((bs) => bs.filter((b) => b.getAttribute('aria-disabled') !== 'true').map((b) => b.getAttribute('aria-label')));
    expect(enabled.sort()).toEqual([...legal].sort());
    expect(await page.getByText(`Black ● ${board.count('guest')}, White ○ ${board.count('host')}.`).count()).toBe(1);
    expect(await cells.evaluateAll((bs) => bs.filter((b) => b.getAttribute('tabindex') === '0').length)).toBe(1);
    await shot(page, 'reversi-decision');
    // Keyboard: Tab lands on the first legal cell (reading order), the arrow keys move the one tab stop.
    await page.keyboard.press('Tab');
    const first = await page.evaluate(() => document.activeElement?.getAttribute('aria-label'));
    expect(first).toBe([...enabled].sort((a, b) => order(a!) - order(b!))[0]);
    await page.keyboard.press('ArrowDown');
    const moved = await page.evaluate(() => document.activeElement?.getAttribute('aria-label'));
    expect(moved).toMatch(/^row \d+, column \d+: /);
    expect(moved).not.toBe(first);
    expect(await cells.evaluateAll((bs) => bs.filter((b) => b.getAttribute('tabindex') === '0').map((b) => b.getAttribute('aria-label')))).toEqual([moved]);
    // An occupied cell says why and sends nothing.
    // Playwright holds back clicks on aria-disabled elements; a person's mouse does not.
    await page.getByRole('button', { name: /^row 4, column 4: / }).click({ force: true });
    expect(await submitted(page)).toEqual([]);
    expect(await page.getByRole('status').filter({ hasText: 'not a legal move' }).count()).toBe(1);
    await page.getByRole('button', { name: first!, exact: true }).focus();
    await page.keyboard.press('Enter');
    const got = await submitted(page);
    const m = /^row (\d+), column (\d+)/.exec(first!)!;
    expect(got).toEqual([{ message: { action: 'move', turn: 5, row: Number(m[1]) - 1, col: Number(m[2]) - 1 } }]);
    expect(validates('reversi', 'guest', (got[0] as { message: Message }).message).ok).toBe(true);
    expect(board.flips(Number(m[1]) - 1, Number(m[2]) - 1, 'guest').length).toBeGreaterThan(0);
    await page.close();
  });

  it('Reversi as the host (the referee): the board is drawn and the generic form asks for the round_result', async () => {
    const frames: Frame[] = [
      { from: 'guest', msg: { action: 'join', board_size: 6 } },
      { from: 'host', msg: { action: 'ready', board_size: 6, first: 'guest' } },
    ];
    const page = await open();
    await decide(page, { spec: spec('reversi').spec, role: 'host', options: {}, window: win('message', 'turn', 0), frames });
    // The host referees with round_results: the board is shown and the generic form asks for the result.
    expect(await page.getByRole('group', { name: 'Reversi board, 6 by 6' }).count()).toBe(1);
    expect(await page.locator('button.cell').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Send round_result' }).count()).toBe(1);
    await page.close();
  });

  it('Gomoku from real frames: an empty cell sends its row and column, a taken one does not', async () => {
    const frames = await play(gomokuHooks as HooksModule<'session_loop'>, 2, { board_size: 9 });
    const page = await open();
    await decide(page, { spec: spec('gomoku').spec, role: 'guest', options: { board_size: 9 }, window: win('message', 'turn', 2), frames });
    const taken = frames
      .filter((f) => f.msg.action === 'move' || f.msg.action === 'round_result')
      .map((f) => [f.msg['row'] as number, f.msg['col'] as number] as const);
    for (const [r, c] of taken)
      expect(await page.getByRole('button', { name: new RegExp(`^row ${r + 1}, column ${c + 1}: (black|white)`) }).getAttribute('aria-disabled')).toBe('true');
    expect(await page.locator('button.cell').count()).toBe(81);
    await shot(page, 'gomoku-decision');
    const free = [0, 0];
    expect(taken.some(([r, c]) => r === free[0] && c === free[1])).toBe(false);
    await page.getByRole('button', { name: 'row 1, column 1: empty', exact: true }).click();
    const got = await submitted(page);
    expect(got).toEqual([{ message: { action: 'move', turn: 5, row: 0, col: 0 } }]);
    expect(validates('gomoku', 'guest', (got[0] as { message: Message }).message).ok).toBe(true);
    await page.close();
  });

  it('chat: the transcript shows peer text as text; Send and Enter each say a numbered line the spec accepts; Leave ends', async () => {
    const peer = '<b>bold?</b> <img src=x onerror="window.__pwned=1">';
    const frames: Frame[] = [
      { from: 'guest', msg: { action: 'join' } },
      { from: 'host', msg: { action: 'ready' } },
      { from: 'host', msg: { action: 'chat', text: peer, seq: 1 } },
      { from: 'guest', msg: { action: 'chat', text: 'hello', seq: 1 } },
    ];
    const page = await open();
    await decide(page, { spec: spec('human-chat').spec, role: 'guest', options: {}, window: win('message', 'chat', 0, null), frames });
    const log = page.getByRole('list', { name: 'Conversation' });
    expect(await log.getByRole('listitem').allInnerTexts()).toEqual([`peer: ${peer}`, 'you: hello']);
    expect(await log.locator('img, b').count()).toBe(0);
    expect(await log.locator('bdi').allInnerTexts()).toEqual([peer, 'hello']);
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('second line');
    await page.getByRole('button', { name: 'Send' }).click();
    await box.fill('third line');
    await box.press('Enter');
    await shot(page, 'chat-decision');
    await page.getByRole('button', { name: 'Leave' }).click();
    const got = await submitted(page);
    expect(got).toEqual([
      { message: { action: 'chat', text: 'second line', seq: 2 } },
      { message: { action: 'chat', text: 'third line', seq: 3 } },
      { message: { action: 'end' } },
    ]);
    for (const a of got) expect(validates('human-chat', 'guest', (a as { message: Message }).message).ok).toBe(true);
    expect(await page.evaluate(() => '__pwned' in window)).toBe(false);
    await page.close();
  });

  it('generic form (guess-number): inputs from the spec, the counter prefilled, a bad number refused in the page, a good one sent', async () => {
    const frames: Frame[] = [
      { from: 'guest', msg: { action: 'join', max_attempts: 5 } },
      { from: 'host', msg: { action: 'ready', range_min: 1, range_max: 100, max_attempts: 5 } },
      { from: 'guest', msg: { action: 'guess', attempt: 1, number: 50 } },
      { from: 'host', msg: { action: 'hint', attempt: 1, result: 'higher', attempts_used: 1 } },
    ];
    for (const f of frames) expect(validates('guess-number', f.from, f.msg).ok).toBe(true);
    const page = await open();
    await decide(page, { spec: spec('guess-number').spec, role: 'guest', options: {}, window: win('message', 'turn', 1), frames });
    const guess = page.getByRole('group', { name: 'guess' });
    expect(await guess.getByRole('spinbutton', { name: 'attempt' }).inputValue()).toBe('2');
    expect(await guess.getByRole('spinbutton', { name: 'attempt' }).getAttribute('min')).toBe('1');
    // The error message is there too, its reason as buttons; join (the opening) is not offered.
    expect(await page.getByRole('group', { name: 'error: reason' }).getByRole('button').allInnerTexts()).toEqual([
      'invalid_guess',
      'unexpected_action',
      'invalid_message',
    ]);
    expect(await page.getByRole('group', { name: 'join' }).count()).toBe(0);
    await guess.getByRole('spinbutton', { name: 'number' }).fill('');
    await guess.getByRole('button', { name: 'Send guess' }).click();
    expect(await guess.getByRole('alert').innerText()).toBe('number is required');
    await guess.getByRole('spinbutton', { name: 'attempt' }).fill('0');
    await guess.getByRole('spinbutton', { name: 'number' }).fill('75');
    await guess.getByRole('button', { name: 'Send guess' }).click();
    expect(await guess.getByRole('alert').innerText()).toBe('attempt must be at least 1');
    expect(await submitted(page)).toEqual([]);
    await guess.getByRole('spinbutton', { name: 'attempt' }).fill('2');
    await shot(page, 'guess-number-decision');
    await guess.getByRole('button', { name: 'Send guess' }).click();
    const got = await submitted(page);
    expect(got).toEqual([{ message: { action: 'guess', attempt: 2, number: 75 } }]);
    expect(validates('guess-number', 'guest', (got[0] as { message: Message }).message).ok).toBe(true);
    await page.close();
  });

  it('Reversi with no legal move: every cell refused and a Pass button that sends the pass (real frames, seed found by playing)', async () => {
    const frames = await play(reversiHooks as HooksModule<'session_loop'>, 15, { board_size: 6 }, 2);
    const board = new ReversiBoard(6);
    for (const f of frames) {
      if (f.msg.action === 'move') board.play(f.msg['row'] as number, f.msg['col'] as number, f.from);
      if (f.msg.action === 'round_result' && !f.msg['passed']) board.play(f.msg['row'] as number, f.msg['col'] as number, 'host');
    }
    expect(board.legal('guest')).toEqual([]);
    expect(board.over()).toBe(false);
    const page = await open();
    await decide(page, { spec: spec('reversi').spec, role: 'guest', options: { board_size: 6 }, window: win('message', 'turn', 15), frames });
    expect(await page.locator('button.cell:not([aria-disabled="true"])').count()).toBe(0);
    await shot(page, 'reversi-pass');
    await page.getByRole('button', { name: 'Pass (no legal move)' }).click();
    const got = await submitted(page);
    expect(got).toEqual([{ message: { action: 'pass', turn: 31 } }]);
    expect(validates('reversi', 'guest', (got[0] as { message: Message }).message).ok).toBe(true);
    await page.close();
  });

  it('Connect Four as the host (the referee): a form with toggle buttons for the enums and booleans, a missing choice named, a valid round_result sent', async () => {
    const frames = await play(c4Hooks as HooksModule<'session_loop'>, 1);
    frames.push({ from: 'guest', msg: { action: 'move', turn: 2, col: 0 } });
    const page = await open();
    await decide(page, { spec: spec('connect-four').spec, role: 'host', options: {}, window: win('message', 'turn', 1), frames });
    expect(await page.getByRole('group', { name: 'Connect Four board, 7 columns by 6 rows' }).count()).toBe(1);
    const form = page.getByRole('group', { name: 'round_result' });
    expect(await form.getByRole('spinbutton', { name: 'turn' }).inputValue()).toBe('3');
    expect(await form.getByRole('spinbutton', { name: 'col' }).getAttribute('max')).toBe('9');
    await form.getByRole('spinbutton', { name: 'turn' }).fill('2');
    await form.getByRole('spinbutton', { name: 'col' }).fill('6');
    await form.getByRole('spinbutton', { name: 'row' }).fill('0');
    await form.getByRole('group', { name: 'player' }).getByRole('button', { name: 'host' }).click();
    await form.getByRole('group', { name: 'game_over' }).getByRole('button', { name: 'false' }).click();
    await form.getByRole('button', { name: 'Send round_result' }).click();
    expect(await form.getByRole('alert').innerText()).toBe('choose a winner');
    expect(await submitted(page)).toEqual([]);
    await form.getByRole('group', { name: 'winner' }).getByRole('button', { name: 'none' }).click();
    expect(await form.getByRole('group', { name: 'winner' }).getByRole('button', { name: 'none' }).getAttribute('aria-pressed')).toBe('true');
    await shot(page, 'connect-four-host-form');
    await form.getByRole('button', { name: 'Send round_result' }).click();
    const got = await submitted(page);
    expect(got).toEqual([{ message: { action: 'round_result', turn: 2, col: 6, row: 0, player: 'host', game_over: false, winner: 'none' } }]);
    expect(validates('connect-four', 'host', (got[0] as { message: Message }).message).ok).toBe(true);
    await page.close();
  });

  it('a redraw of the same window (a new chat line, a refusal) keeps the typed text and the focus; a new window moves the focus to its heading', async () => {
    const frames: Frame[] = [
      { from: 'guest', msg: { action: 'join' } },
      { from: 'host', msg: { action: 'ready' } },
    ];
    const chat = (fs: Frame[]): DecisionView => ({
      spec: spec('human-chat').spec,
      role: 'guest',
      options: {},
      window: win('message', 'chat', 0, null),
      frames: fs,
    });
    const page = await open();
    await decide(page, chat(frames));
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('half a sentence');
    await decide(page, chat([...frames, { from: 'host', msg: { action: 'chat', text: 'are you there?', seq: 1 } }]));
    expect(await box.inputValue()).toBe('half a sentence');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-key'))).toBe('chat.text');
    expect(await page.getByRole('list', { name: 'Conversation' }).innerText()).toContain('are you there?');

    const guess = {
      spec: spec('guess-number').spec,
      role: 'guest' as const,
      options: {},
      frames: [
        { from: 'guest' as const, msg: { action: 'join' } },
        { from: 'host' as const, msg: { action: 'ready', range_min: 1, range_max: 100, max_attempts: 5 } },
      ],
    };
    await decide(page, { ...guess, window: win('message', 'turn', 0) });
    const form = page.getByRole('group', { name: 'guess' });
    await form.getByRole('spinbutton', { name: 'number' }).fill('101');
    await form.getByRole('button', { name: 'Send guess' }).click();
    expect(await submitted(page)).toEqual([{ message: { action: 'guess', attempt: 1, number: 101 } }]);
    await decide(page, { ...guess, window: win('message', 'turn', 0), refused: 'out of range' });
    expect(await form.getByRole('spinbutton', { name: 'number' }).inputValue()).toBe('101');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-key'))).toBe('send:guess');
    await decide(page, { ...guess, window: win('message', 'turn', 1) });
    expect(await form.getByRole('spinbutton', { name: 'number' }).inputValue()).toBe('');
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('H2');
    await page.close();
  });

  it('a page that redraws from inside submit (a refusal): the chat box is left empty, a form keeps its text and focus and is usable again', async () => {
    const page = await open();
    const refusing = (v: DecisionView, why: string) =>
      page.evaluate(([view, w]) => (window as unknown as { __decideRefusing(v: DecisionView, why: string): void }).__decideRefusing(view, w), [
        v,
        why,
      ] as const);
    await refusing({ spec: spec('human-chat').spec, role: 'guest', options: {}, window: win('message', 'chat', 0, null), frames: [] }, 'not now');
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('sent once');
    await box.press('Enter');
    expect(await box.inputValue()).toBe('');
    expect(await page.getByRole('alert').innerText()).toContain('not now');

    const frames: Frame[] = [
      { from: 'guest', msg: { action: 'join' } },
      { from: 'host', msg: { action: 'ready', range_min: 1, range_max: 100, max_attempts: 5 } },
    ];
    await refusing({ spec: spec('guess-number').spec, role: 'guest', options: {}, window: win('message', 'turn', 0), frames }, 'out of range');
    const form = page.getByRole('group', { name: 'guess' });
    await form.getByRole('spinbutton', { name: 'number' }).fill('500');
    await form.getByRole('spinbutton', { name: 'number' }).press('Enter');
    expect(await page.getByRole('alert').filter({ hasText: 'refused' }).innerText()).toBe('Your previous choice was refused: out of range');
    expect(await form.getByRole('spinbutton', { name: 'number' }).inputValue()).toBe('500');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-key'))).toBe('guess.number');
    await form.getByRole('spinbutton', { name: 'number' }).fill('50');
    await form.getByRole('spinbutton', { name: 'number' }).press('Enter');
    expect(await submitted(page)).toEqual([
      { message: { action: 'chat', text: 'sent once', seq: 1 } },
      { message: { action: 'guess', attempt: 1, number: 500 } },
      { message: { action: 'guess', attempt: 1, number: 50 } },
    ]);
    await shot(page, 'refused-redraw');
    await page.close();
  });

  it('state view: a finished Connect Four shows the board and the outcome, with nothing to click', async () => {
    const frames: Frame[] = [
      { from: 'guest', msg: { action: 'join' } },
      { from: 'host', msg: { action: 'ready', cols: 7, rows: 6, first: 'guest' } },
    ];
    for (let t = 1; t <= 3; t++) {
      frames.push({ from: 'guest', msg: { action: 'move', turn: t, col: 0 } });
      frames.push({ from: 'host', msg: { action: 'round_result', turn: t, col: 1, row: 6 - t, player: 'host', game_over: false, winner: 'none' } });
    }
    frames.push({ from: 'guest', msg: { action: 'move', turn: 4, col: 0 } });
    frames.push({ from: 'host', msg: { action: 'end', winner: 'guest' } });
    for (const f of frames) expect(validates('connect-four', f.from, f.msg).ok).toBe(true);
    const page = await open();
    await showState(page, { spec: spec('connect-four').spec, role: 'guest', options: {}, frames });
    expect(await page.getByRole('button').count()).toBe(0);
    expect(await page.getByText('Game over: Red (you) wins.').count()).toBe(1);
    expect(await page.getByRole('img', { name: 'column 1, row 4: red (you)' }).count()).toBe(1);
    await shot(page, 'connect-four-state');
    await page.close();
  });

  it('board sizes outside what a page should draw (or an odd Reversi side) fall back to the defaults instead of thousands of cells or a throw', async () => {
    const page = await open();
    const ready = (fields: Record<string, unknown>): Frame[] => [
      { from: 'guest', msg: { action: 'join' } },
      { from: 'host', msg: { action: 'ready', first: 'guest', ...fields } },
    ];
    await showState(page, { spec: spec('gomoku').spec, role: 'guest', options: {}, frames: ready({ board_size: 100000 }) });
    expect(await page.getByRole('group', { name: 'Gomoku board, 15 by 15' }).locator('.cell').count()).toBe(225);
    await showState(page, { spec: spec('reversi').spec, role: 'guest', options: {}, frames: ready({ board_size: 7 }) });
    expect(await page.getByRole('group', { name: 'Reversi board, 8 by 8' }).count()).toBe(1);
    await showState(page, { spec: spec('connect-four').spec, role: 'guest', options: {}, frames: ready({ cols: 1e6, rows: 5 }) });
    expect(await page.getByRole('group', { name: 'Connect Four board, 7 columns by 5 rows' }).locator('.cell').count()).toBe(35);
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  });
});

/** Reading order of a cell label (row-major). */
function order(label: string): number {
  const m = /^row (\d+), column (\d+)/.exec(label)!;
  return Number(m[1]) * 100 + Number(m[2]);
}
