// The agent page in real Chromium against a CLI host: `aigenora host` (a separate process, the
// reference-shaped CLI) serves a session on its WebSocket address; `aigenora web` serves the page; the
// page joins from the invitation in its URL, plays, and checks its own transcript and receipt, and
// both transcripts are then checked by `aigenora receipt verify`.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../scripts/lib/chromium.js';
import { getCrypto } from '../../ts/crypto/index.js';
import type { Crypto, Ed25519Keypair } from '../../ts/crypto/backend.js';
import { encodeInvitation } from '../../ts/net/invitation.js';
import { host as hostSession } from '../../ts/net/session.js';
import { builtinDir, findBuiltin } from '../../ts/protocols/index.js';
import { loadSpec } from '../../ts/spec/index.js';
import type { HooksModule } from '../../ts/hooks/types.js';

import { BIN } from '../shared/cli.js';
const ARTIFACTS = new URL('../../artifacts/web/', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'aigenora-agent-page-'));
const children: ChildProcess[] = [];
let browser: Browser;
let pageUrl: string;

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, AIGENORA_CRYPTO: 'wasm' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A long-running CLI command, and its first stdout line that parses as JSON. */
async function start(args: string[]): Promise<{ child: ChildProcess; first: Record<string, unknown>; lines: string[]; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => void (stderr += d.toString()));
  const lines: string[] = [];
  const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
  const first = await new Promise<Record<string, unknown>>((ok, bad) => {
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (l) => {
      lines.push(l);
      if (lines.length === 1) {
        try {
          ok(JSON.parse(l) as Record<string, unknown>);
        } catch {
          bad(new Error(`not JSON: ${l}`));
        }
      }
    });
    void exited.then((code) => bad(new Error(`aigenora ${args[0]} exited (${code}): ${stderr.trim()}`)));
  });
  return { child, first, lines, exited };
}

/** `aigenora host` for one session; resolves with the invitation text once it is written. */
async function host(
  name: string,
  protocol: string,
  options: Record<string, unknown>,
): Promise<{ invitation: string; dataDir: string; exited: Promise<number | null>; child: ChildProcess }> {
  const dataDir = join(work, name);
  expect(cli(['init', '--data-dir', dataDir]).status).toBe(0);
  const invFile = join(work, `${name}.invitation`);
  const child = spawn(
    process.execPath,
    [BIN, 'host', '--protocol', protocol, '--options', JSON.stringify(options), '--data-dir', dataDir, '--invitation-file', invFile, '--json'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => void (stderr += d.toString()));
  child.stdout!.resume();
  const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
  for (let k = 0; k < 300 && !existsSync(invFile); k++) await new Promise((r) => setTimeout(r, 100));
  if (!existsSync(invFile)) throw new Error(`the host wrote no invitation: ${stderr}`);
  return { invitation: readFileSync(invFile, 'utf8').trim(), dataDir, exited, child };
}

/** The one session side a data directory holds. */
function sessionSide(dataDir: string, role: 'host' | 'guest'): string {
  const base = join(dataDir, 'sessions');
  const sids = readdirSync(base);
  expect(sids).toHaveLength(1);
  return join(base, sids[0]!, role);
}

async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `agent-${name}.png`), fullPage: true });
}

async function outcome(page: Page, timeoutMs = 60_000): Promise<string> {
  await page.waitForFunction(() => (window as unknown as { __aigenora?: { done?: boolean } }).__aigenora?.done === true, undefined, { timeout: timeoutMs });
  return (await page.textContent('#outcome')) ?? '';
}

beforeAll(async () => {
  const web = await start(['web', '--listen', '127.0.0.1:0', '--json']);
  pageUrl = String(web.first['url']);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  for (const c of children) c.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

describe('the agent page', () => {
  it("plays rock-paper-scissors (best of 3) against a CLI host by itself; both transcripts verify, the page's with the CLI", async () => {
    const h = await host('rps', 'rps-v1', { best_of: 3 });
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${pageUrl}#invitation=${encodeURIComponent(h.invitation)}&mode=autonomous`);
    const text = await outcome(page);
    await shot(page, 'rps-autonomous-ended');
    expect(text).toContain('completed');
    expect(text).toContain('receipt verified');
    expect(errors).toEqual([]);
    // Until the session is ready the page fetches the WASM core only: rps's protocol_id is recorded in
    // the page; the pyjson module comes after, for the receipt check's own protocol_id.
    const wasm = await page.evaluate(() => ({
      ready: Number(document.body.dataset['readyMs']),
      fetched: performance.getEntriesByType('resource').flatMap((e) => (e.name.endsWith('.wasm') ? [[new URL(e.name).pathname, e.startTime] as const] : [])),
    }));
    expect(wasm.fetched.filter(([, at]) => at < wasm.ready).map(([name]) => name)).toEqual(['/aigenora_wasm_bg.wasm']);
    expect(wasm.fetched.filter(([, at]) => at > wasm.ready).map(([name]) => name)).toEqual(['/aigenora_wasm_pyjson_bg.wasm']);
    expect(await h.exited).toBe(0);
    const hostSide = sessionSide(h.dataDir, 'host');
    const hv = cli(['receipt', 'verify', hostSide, '--json']);
    expect(hv.status, hv.stdout + hv.stderr).toBe(0);
    // The page's own copy, checked by the CLI as a third party would.
    const got = (await page.evaluate(() => (window as unknown as { __aigenora: { transcript: string; receipt: string | null; spec: string } }).__aigenora)) as {
      transcript: string;
      receipt: string | null;
      spec: string;
    };
    const dir = join(work, 'page-copy');
    mkdirSync(dir);
    writeFileSync(join(dir, 'transcript.jsonl'), got.transcript);
    writeFileSync(join(dir, 'spec.json'), got.spec);
    writeFileSync(join(dir, 'receipt.json'), got.receipt ?? '');
    const gv = cli(['receipt', 'verify', dir, '--json']);
    expect(gv.status, gv.stdout + gv.stderr).toBe(0);
    const header = JSON.parse(got.transcript.split('\n')[0]!) as { role: string; sid: string; guest_key: string };
    expect(header.role).toBe('guest');
    // The page kept the session in IndexedDB, under its id, with the same transcript.
    const saved = await page.evaluate(
      (sid) =>
        new Promise<{ transcript?: string } | undefined>((ok, bad) => {
          const r = indexedDB.open('aigenora');
          r.onerror = () => bad(r.error);
          r.onsuccess = () => {
            const get = r.result.transaction('sessions').objectStore('sessions').get(sid);
            get.onsuccess = () => ok(get.result as { transcript?: string } | undefined);
            get.onerror = () => bad(get.error);
          };
        }),
      header.sid,
    );
    expect(saved?.transcript).toBe(got.transcript);
    expect(JSON.parse(readFileSync(join(hostSide, 'transcript.jsonl'), 'utf8').split('\n')[0]!).sid).toBe(header.sid);
    await page.close();
  }, 90_000);

  it('lets a person play Connect Four by clicking: every move of the page is a click, to the end of the game', async () => {
    const h = await host('c4', 'connect4-v1', {});
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${pageUrl}#invitation=${encodeURIComponent(h.invitation)}&mode=human`);
    const clicked: number[] = [];
    const done = () => page.evaluate(() => (window as unknown as { __aigenora?: { done?: boolean } }).__aigenora?.done === true);
    for (let k = 0; k < 30 && !(await done()); k++) {
      // The next window: the board's column buttons, enabled where a stone can still drop.
      await page.waitForFunction(
        () =>
          (window as unknown as { __aigenora?: { done?: boolean } }).__aigenora?.done === true ||
          document.querySelector('#decision button.column:not([disabled])') !== null,
        undefined,
        { timeout: 30_000 },
      );
      if (await done()) break;
      if (k === 0) await shot(page, 'c4-human-first-window');
      if (k === 3) await shot(page, 'c4-human-midgame');
      const free = await page.$$eval('#decision button.column:not([disabled])', (bs) => bs.map((b) => Number(b.getAttribute('data-key')!.split(':')[1])));
      // One stone a column, edges first, never blocking: the host's hooks (win, else block, else centre)
      // stack the centre column and win with their fourth stone, so the game ends in a win, not a draw.
      const col = [0, 6, 1, 5, 2, 4, 3].find((c) => free.includes(c) && !clicked.includes(c))!;
      await page.click(`#decision button.column[data-key="column:${col}"]`);
      clicked.push(col);
      // The window closes once the engine took the move.
      await page.waitForFunction(
        (n) => (window as unknown as { __aigenora?: { done?: boolean } }).__aigenora?.done === true || document.querySelectorAll('#log li').length > n,
        clicked.length * 2,
        { timeout: 30_000 },
      );
    }
    const text = await outcome(page);
    await shot(page, 'c4-human-ended');
    expect(text).toContain('completed');
    expect(text).toContain('receipt verified');
    expect(errors).toEqual([]);
    expect(await h.exited).toBe(0);
    const got = (await page.evaluate(() => (window as unknown as { __aigenora: { transcript: string } }).__aigenora)) as { transcript: string };
    const frames = got.transcript
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => JSON.parse(l) as { from: string; msg: Record<string, unknown> });
    const moves = frames.filter((f) => f.from === 'guest' && f.msg['action'] === 'move').map((f) => f.msg['col']);
    expect(moves).toEqual(clicked);
    const last = frames
      .filter((f) => f.from === 'host' && (f.msg['action'] === 'round_result' || f.msg['action'] === 'end'))
      .map((f) => f.msg)
      .at(-1)!;
    expect(last).toMatchObject({ game_over: true, winner: 'host', col: 3 });
    expect(clicked).toEqual([0, 6, 1, 5]);
    expect(cli(['receipt', 'verify', sessionSide(h.dataDir, 'host'), '--json']).status).toBe(0);
    await page.close();
  }, 120_000);

  it("ends a person's open window at once when the host dies, rather than at its deadline", async () => {
    const h = await host('c4-dies', 'connect4-v1', {});
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${pageUrl}#invitation=${encodeURIComponent(h.invitation)}&mode=human`);
    await page.waitForSelector('#decision button.column:not([disabled])', { timeout: 30_000 });
    // The window's deadline, from its countdown, is minutes away: far past the 30 s the page gets below
    // to end, so an end in that time is an end before the deadline, with the connection's.
    const left = /Time left: (\d+):(\d\d)/.exec((await page.textContent('#decision p.deadline')) ?? '');
    expect(left, 'the window counts down to its deadline').not.toBeNull();
    const leftMs = (Number(left![1]) * 60 + Number(left![2]) - 1) * 1000;
    expect(leftMs).toBeGreaterThan(2 * 30_000);
    const deadline = Date.now() + leftMs;
    h.child.kill('SIGKILL');
    const text = await outcome(page, 30_000);
    await shot(page, 'c4-human-host-died');
    expect(Date.now()).toBeLessThan(deadline);
    expect(text).toContain('peer_disconnected');
    expect(await page.$('#decision button.column:not([disabled])')).toBeNull();
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);

  it('ends with bad_signature when the host sends a frame whose signature does not verify', async () => {
    // A host that signs its sixth signature wrong: the handshake passes, a session frame is forged.
    const c = getCrypto('wasm');
    let signed = 0;
    const forging: Crypto = new Proxy(c, {
      get(target, prop) {
        if (prop === 'ed25519Keypair') {
          return (seed: Uint8Array): Ed25519Keypair => {
            const k = target.ed25519Keypair(seed);
            const sign = (m: Uint8Array) => {
              const sig = k.sign(m);
              if (++signed === 6) sig[10] = sig[10]! ^ 0x01;
              return sig;
            };
            return {
              publicKey: k.publicKey,
              sign,
              signMany: (ms: readonly Uint8Array[]) => ms.map(sign),
              dispose: () => k.dispose(),
            };
          };
        }
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const b = findBuiltin('rps-v1')!;
    const l = loadSpec(c, builtinDir(b));
    const hooks = (await import('../../ts/protocols/rps/hooks.js')).default as HooksModule;
    const h = await hostSession({
      crypto: forging,
      seed: new Uint8Array(32).fill(7),
      protocol: { spec: l.spec, specText: l.text, protocolId: l.protocolId!, hooks },
      options: { best_of: 3 },
      sessionsDir: join(work, 'forging-host'),
    });
    const page = await browser.newPage();
    await page.goto(`${pageUrl}#invitation=${encodeURIComponent(encodeInvitation(c, h.invitation))}&mode=autonomous`);
    const text = await outcome(page);
    await shot(page, 'forged-frame');
    expect(text).toContain('bad_signature');
    expect(text).not.toContain('receipt verified');
    await h.done.catch(() => undefined);
    await h.stop();
    await page.close();
  }, 90_000);

  it('carries a chat (free mode) between a person in the page and a person at the CLI host, both deciding their lines', async () => {
    const dataDir = join(work, 'chat');
    expect(cli(['init', '--data-dir', dataDir]).status).toBe(0);
    const invFile = join(work, 'chat.invitation');
    const child = spawn(
      process.execPath,
      [BIN, 'host', '--protocol', 'human-chat-v1', '--control-mode', 'human', '--data-dir', dataDir, '--invitation-file', invFile, '--json'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    children.push(child);
    const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
    for (let k = 0; k < 300 && !existsSync(invFile); k++) await new Promise((r) => setTimeout(r, 100));
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${pageUrl}#invitation=${encodeURIComponent(readFileSync(invFile, 'utf8').trim())}&mode=human`);
    // The host's person speaks first, through `aigenora session decide` on the host's session side.
    await page.waitForSelector('#decision [data-key="chat.text"]', { timeout: 30_000 });
    const hostSide = sessionSide(dataDir, 'host');
    const hostSays = async (message: Record<string, unknown>) => {
      for (let k = 0; k < 100; k++) {
        const r = cli(['session', 'decide', hostSide, '--message', JSON.stringify(message)]);
        if (r.status === 0) return;
        await new Promise((ok) => setTimeout(ok, 100));
      }
      throw new Error('the host never opened a window');
    };
    await hostSays({ action: 'chat', text: 'hello from the CLI <b>not bold</b>' });
    await page.waitForFunction(() => document.querySelector('#decision')?.textContent?.includes('hello from the CLI <b>not bold</b>') === true, undefined, {
      timeout: 30_000,
    });
    expect(await page.$('#decision b')).toBeNull();
    // The peer's line is announced once, in a live region that outlives the redraws.
    const said = () => page.$eval('#said', (e) => [e.getAttribute('aria-live'), e.textContent]);
    expect(await said()).toEqual(['polite', 'peer: hello from the CLI <b>not bold</b>']);
    await page.fill('#decision [data-key="chat.text"]', 'hi from the page');
    await page.click('#decision [data-key="chat.send"]');
    await shot(page, 'chat-human');
    // The host's end ends the page's session too (end_when: either_ends): the page answers it and
    // completes, with nothing left for its person to click.
    await hostSays({ action: 'end' });
    await page.waitForFunction(() => document.querySelector('#said')?.textContent === 'the peer left the conversation', undefined, { timeout: 30_000 });
    const text = await outcome(page);
    await shot(page, 'chat-ended');
    expect(text).toContain('completed');
    expect(text).toContain('receipt verified');
    expect(errors).toEqual([]);
    expect(await exited).toBe(0);
    const lines = readFileSync(join(hostSide, 'transcript.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => JSON.parse(l) as { from: string; msg: Record<string, unknown> });
    expect(lines.filter((f) => f.msg['action'] === 'chat').map((f) => [f.from, f.msg['text']])).toEqual([
      ['host', 'hello from the CLI <b>not bold</b>'],
      ['guest', 'hi from the page'],
    ]);
    expect(cli(['receipt', 'verify', hostSide, '--json']).status).toBe(0);
    await page.close();
  }, 120_000);

  it('refuses what it cannot join with one typed line: a garbled invitation, an unknown mode, a host that is gone', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${pageUrl}#invitation=aigenora1.not-an-invitation&mode=autonomous`);
    expect(await outcome(page, 20_000)).toMatch(/^INVITATION_INVALID: /);
    const c = getCrypto('wasm');
    const b = findBuiltin('rps-v1')!;
    const l = loadSpec(c, builtinDir(b));
    const hooks = (await import('../../ts/protocols/rps/hooks.js')).default as HooksModule;
    const h = await hostSession({
      crypto: c,
      seed: new Uint8Array(32).fill(9),
      protocol: { spec: l.spec, specText: l.text, protocolId: l.protocolId!, hooks },
      options: { best_of: 1 },
      sessionsDir: join(work, 'gone-host'),
    });
    const text = encodeInvitation(c, h.invitation);
    await page.goto(`${pageUrl}#invitation=${encodeURIComponent(text)}&mode=sideways`);
    await page.reload();
    expect(await outcome(page, 20_000)).toMatch(/^INVITATION_INVALID: mode must be one of/);
    await h.stop();
    await page.goto(`${pageUrl}#invitation=${encodeURIComponent(text)}&mode=autonomous`);
    await page.reload();
    const gone = await outcome(page, 60_000);
    await shot(page, 'host-gone');
    expect(gone).toMatch(/^HOST_UNREACHABLE: cannot reach the host/);
    expect(gone.split('\n')).toHaveLength(1);
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);

  it("in hybrid mode plays what the person picks within the window, and the hooks' move when the person lets a window pass", async () => {
    // Windows of 4 s (the spec's min_think_seconds, an option), long enough for a script on a busy machine.
    const h = await host('hybrid', 'rps-v1', { best_of: 3, termination: 'fixed_rounds', min_think_seconds: 4 });
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${pageUrl}#invitation=${encodeURIComponent(h.invitation)}&mode=hybrid`);
    // Rounds 0 and 2: the person picks paper; round 1: nobody picks, the window passes.
    const picked: number[] = [];
    for (const round of [0, 2]) {
      await page.waitForSelector(`body[data-window="round:${round}"]`, { timeout: 30_000 });
      await page.locator('#decision').getByRole('button', { name: 'paper' }).click();
      picked.push(round);
    }
    const text = await outcome(page);
    await shot(page, 'rps-hybrid-ended');
    expect(text).toContain('completed');
    expect(text).toContain('receipt verified');
    expect(errors).toEqual([]);
    expect(await h.exited).toBe(0);
    const got = (await page.evaluate(() => (window as unknown as { __aigenora: { transcript: string; events: string[] } }).__aigenora)) as {
      transcript: string;
      events: string[];
    };
    expect(got.events.filter((e) => e === 'local_decision_consumed')).toHaveLength(2);
    expect(got.events.filter((e) => e === 'local_decision_fallback')).toHaveLength(1);
    const reveals = got.transcript
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => JSON.parse(l) as { from: string; msg: Record<string, unknown> })
      .filter((f) => f.from === 'guest' && f.msg['action'] === 'reveal');
    expect(reveals.map((f) => f.msg['round'])).toEqual([0, 1, 2]);
    for (const r of picked) expect(reveals[r]!.msg['choice']).toBe('paper');
    expect(['rock', 'paper', 'scissors']).toContain(reveals[1]!.msg['choice']);
    await page.close();
  }, 120_000);
});
