// `aigenora session web` as a person meets it: the CLI spawned on a session side, its URL opened in
// real Chromium, and a running human-controlled rock-paper-scissors guest decided by clicks. What the
// engine did is read back from the session's own files (events.jsonl, transcript.jsonl), not from the
// page. Around it, the server's refusals: no or a wrong token, a non-loopback --listen, a wrong Host,
// bodies that are too large or not JSON, each a typed 4xx after which the server still serves.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../scripts/lib/chromium.js';
import { latestSessionSide, MAX_FRAMES, serveSessionView, TAIL_BYTES } from '../../ts/cli/session-web.js';
import { runLocal } from '../../ts/engine/local.js';
import type { Frame } from '../../ts/engine/frame.js';
import { builtin, c, hooksOf } from '../engine/harness.js';
import { tempDir } from '../shared/tmp.js';

import { BIN } from '../shared/cli.js';
const ARTIFACTS = new URL('../../artifacts/web/', import.meta.url).pathname;

interface View {
  url: string;
  proc: ChildProcess;
  /** SIGTERM, then the exit status. */
  stop(): Promise<number | null>;
}

/** Spawns `aigenora session web … --json` and waits for the {url} line. */
function startView(args: string[]): Promise<View> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [BIN, 'session', 'web', ...args, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const exited = new Promise<number | null>((ok) => proc.on('exit', (code) => ok(code)));
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      const { url } = JSON.parse(out.slice(0, nl)) as { url: string };
      resolve({
        url,
        proc,
        stop: () => {
          proc.kill('SIGTERM');
          return exited;
        },
      });
    });
    void exited.then((code) => reject(new Error(`session web exited ${code}: ${err}`)));
  });
}

/**
 * A local session of built-in `folder` whose guest waits for a person on every decision (human control, no
 * think time) while the host plays its hooks, from the moment the guest's first window is open: its files,
 * `done` (settling with the result or with what the session threw), and `result` (the result, or that throw).
 */
async function humanGuestSession(prefix: string, folder: string, options?: Record<string, unknown>) {
  const out = tempDir(prefix);
  const guestDir = join(out, 'guest');
  const session = runLocal({
    crypto: c,
    ...builtin(folder),
    hooks: await hooksOf(folder),
    ...(options ? { options } : {}),
    outDir: out,
    guestControl: 'human',
    minThinkMs: 0,
    decisionTimeoutMs: 25_000,
    timeoutMs: 30_000,
  });
  const done = session.then(
    (r) => r,
    (e: unknown) => e,
  );
  const result = async () => {
    const r = await done;
    if (r instanceof Error) throw r;
    return r as Awaited<typeof session>;
  };
  for (let i = 0; !existsSync(join(guestDir, 'decision', 'state.json')) && i < 200; i++) await new Promise((r) => setTimeout(r, 25));
  return { guestDir, done, result };
}

function cli(args: string[]): Promise<{ status: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('close', (status) => resolve({ status, out, err }));
  });
}

/** A raw request, so that the Host header and the body are exactly what the test says. */
function raw(
  url: string,
  opts: { method?: string; host?: string; body?: Buffer | string; type?: string } = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: opts.method ?? 'GET',
        headers: {
          host: opts.host ?? u.host,
          ...(opts.type && { 'content-type': opts.type }),
          ...(opts.body !== undefined && { 'content-length': Buffer.byteLength(opts.body) }),
        },
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

const errorCode = (body: string) => (JSON.parse(body) as { error: { code: string } }).error.code;
const lines = (path: string) => readFileSync(path, 'utf8').trim().split('\n').filter(Boolean);
const events = (dir: string) => lines(join(dir, 'events.jsonl')).map((l) => JSON.parse(l) as { type: string; data?: Record<string, unknown> });
const frames = (dir: string) =>
  lines(join(dir, 'transcript.jsonl'))
    .slice(1)
    .map((l) => JSON.parse(l) as Frame);

describe('session web refuses what it must', () => {
  let dir: string;
  let view: View;
  beforeAll(async () => {
    // A finished session: no window is open.
    const out = tempDir('web-refusals');
    const r = await runLocal({ crypto: c, ...builtin('rps'), hooks: await hooksOf('rps'), options: { best_of: 1 }, outDir: out });
    expect(r.guest.completed).toBe(true);
    dir = r.guest.dir;
    view = await startView([dir, '--listen', '127.0.0.1:0']);
  });
  afterAll(async () => {
    expect(await view?.stop()).toBe(0);
  });

  it('serves only under its 32-byte token, and only to a loopback Host', async () => {
    const u = new URL(view.url);
    const token = u.pathname.split('/')[1]!;
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(u.hostname).toBe('127.0.0.1');
    const wrong = token.replace(/^./, (ch) => (ch === '0' ? '1' : '0'));
    for (const path of [
      '/',
      '/state',
      '/favicon.ico',
      `/${wrong}/`,
      `/${wrong}/state`,
      `/${token.slice(0, 63)}/state`,
      `/x${token}/state`,
      '/state?token=' + token,
    ]) {
      const r = await raw(`${u.origin}${path}`);
      expect(r.status, path).toBe(403);
      expect(errorCode(r.body)).toBe('FORBIDDEN');
      expect(r.body).not.toContain(token);
    }
    const post = await raw(`${u.origin}/${wrong}/decide`, { method: 'POST', type: 'application/json', body: '{"value":"rock"}' });
    expect(post.status).toBe(403);
    // The right token through a name that is not loopback (a rebinding page) is refused too.
    expect((await raw(`${view.url}state`, { host: `attacker.example:${u.port}` })).status).toBe(403);
    expect((await raw(`${view.url}state`, { host: `localhost:${u.port}` })).status).toBe(200);
    const bare = await raw(`${u.origin}/${token}`);
    expect([bare.status, bare.headers['location']]).toEqual([308, `/${token}/`]);
    expect(existsSync(join(dir, 'decision', 'decisions.jsonl'))).toBe(false);
  });

  it('serves the page under a nonce CSP, and state as JSON of the finished session', async () => {
    const page = await raw(view.url);
    expect(page.status).toBe(200);
    const csp = String(page.headers['content-security-policy']);
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(csp).toContain("default-src 'self'");
    expect(page.body).toContain(`<script nonce="${nonce}">`);
    // Every script on the page carries the nonce; none is loaded from elsewhere.
    expect(page.body.match(/<script/g)).toHaveLength(1);
    expect(page.body).not.toMatch(/https?:\/\//);
    const s = JSON.parse((await raw(`${view.url}state`)).body) as {
      role: string;
      snapshot: { phase: string };
      window: unknown;
      frames: { action: string; from: string; fields: Record<string, unknown> }[];
      events: { type: string }[];
    };
    expect(s.role).toBe('guest');
    expect(s.snapshot.phase).toBe('ended');
    expect(s.window).toBeNull();
    const transcript = frames(dir);
    expect(s.frames.map((f) => f.action)).toEqual(transcript.map((f) => f.msg.action));
    const result = s.frames.find((f) => f.action === 'round_result')!;
    const fromFile = transcript.find((f) => f.msg.action === 'round_result')!.msg;
    expect(result.fields['guest_choice']).toBe(fromFile['guest_choice']);
    expect(s.events.at(-1)!.type).toBe(events(dir).at(-1)!.type);
  });

  it('answers bad requests with a typed 4xx and keeps serving', async () => {
    const cases: [string, Parameters<typeof raw>[1], number, string][] = [
      ['decide', { method: 'POST', type: 'application/json', body: Buffer.alloc(100 << 10, 0x20) }, 413, 'BODY_TOO_LARGE'],
      ['decide', { method: 'POST', type: 'application/json', body: '{"value": rock' }, 400, 'BAD_JSON'],
      ['decide', { method: 'POST', type: 'application/json', body: '"rock"' }, 400, 'BAD_DECISION'],
      ['decide', { method: 'POST', type: 'application/json', body: '{"value":"rock","message":{}}' }, 400, 'BAD_DECISION'],
      ['decide', { method: 'POST', type: 'text/plain', body: '{"value":"rock"}' }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
      ['decide', { method: 'POST', type: 'application/json', body: '{"value":"rock"}' }, 409, 'NO_WINDOW'],
      ['decide', { method: 'GET' }, 405, 'METHOD_NOT_ALLOWED'],
      ['state', { method: 'POST', type: 'application/json', body: '{}' }, 405, 'METHOD_NOT_ALLOWED'],
      ['nothing-here', {}, 404, 'NOT_FOUND'],
    ];
    for (const [path, opts, status, code] of cases) {
      const r = await raw(`${view.url}${path}`, opts);
      expect([path, r.status, errorCode(r.body)], r.body).toEqual([path, status, code]);
      expect(r.body.trim().split('\n')).toHaveLength(1);
      expect((await raw(`${view.url}state`)).status).toBe(200);
    }
    expect(existsSync(join(dir, 'decision', 'decisions.jsonl'))).toBe(false);
  });

  it('refuses a --listen that is not loopback, in one line', async () => {
    for (const listen of ['0.0.0.0:0', '192.168.1.10:8080', 'example.com:80', '127.0.0.1']) {
      const r = await cli(['session', 'web', dir, '--listen', listen]);
      expect(r.status, listen).toBe(2);
      expect(r.err.split('\n')[0]).toMatch(/^aigenora session web: USAGE: --listen must be a loopback HOST:PORT/);
      expect(r.out).toBe('');
    }
  });
});

describe('session web in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
    mkdirSync(ARTIFACTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("shows a running human-controlled guest's rounds and hands the clicked choice to its engine", async () => {
    // The guest waits for a person on every round (human control, no think time); the host plays its hooks.
    const { guestDir, done, result: finished } = await humanGuestSession('web-human', 'rps', { best_of: 3 });
    const view = await startView([guestDir, '--listen', '127.0.0.1:0']);
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    const outside: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(m.text());
    });
    page.on('request', (r) => {
      if (!r.url().startsWith(new URL(view.url).origin)) outside.push(r.url());
    });
    try {
      const denied = await page.goto(new URL(view.url).origin + '/');
      expect(denied?.status()).toBe(403);
      await page.screenshot({ path: join(ARTIFACTS, 'session-web-0-no-token.png') });

      await page.goto(view.url);
      await expect.poll(() => page.textContent('#role')).toBe('guest');
      const clicks = ['paper', 'scissors', 'rock', 'paper', 'scissors', 'rock', 'paper', 'scissors', 'rock'];
      const played: string[] = [];
      for (let round = 0; ; round++) {
        // Either the next round's window opens, or the session ends.
        await page.waitForFunction(
          (n) =>
            document.body.dataset['phase'] === 'ended' ||
            document.body.dataset['phase'] === 'aborted' ||
            (!document.getElementById('decision')!.hidden && (document.getElementById('window-title')!.textContent ?? '').endsWith(`round ${n}`)),
          round,
          { timeout: 20_000 },
        );
        if (await page.evaluate(() => document.getElementById('decision')!.hidden)) break;
        expect(round, 'more rounds than a best of 3 can take').toBeLessThan(clicks.length);
        if (round === 0) await page.screenshot({ path: join(ARTIFACTS, 'session-web-1-window-open.png'), fullPage: true });
        if (round === 1) {
          // The session is still running, and the page lists the round decided before.
          expect(await page.textContent('#phase')).not.toMatch(/ended|aborted/);
          const first = page.locator('#results li[data-round="0"]');
          await expect.poll(() => first.textContent()).toContain(`guest_choice=${played[0]} `);
          await page.screenshot({ path: join(ARTIFACTS, 'session-web-2-running-round-1.png'), fullPage: true });
        }
        const choice = clicks[round]!;
        const button = page.getByRole('button', { name: choice, exact: true });
        expect(await page.getByRole('group').getByRole('button').allTextContents()).toEqual(['rock', 'paper', 'scissors']);
        await button.click();
        played.push(choice);
        await expect.poll(() => page.textContent('#decide-result'), { timeout: 10_000 }).toMatch(new RegExp(`^(Sent|The engine took) ${choice}`));
      }
      const result = await finished();
      expect([result.host.completed, result.guest.completed]).toEqual([true, true]);
      await expect.poll(() => page.textContent('#phase')).toBe('ended');
      await expect.poll(() => page.locator('#results li').count()).toBe(played.length);
      await page.screenshot({ path: join(ARTIFACTS, 'session-web-3-ended.png'), fullPage: true });

      // The engine took every click: one consumed web decision per round, and each reveal it signed
      // carries the clicked choice.
      const consumed = events(guestDir).filter((e) => e.type === 'local_decision_consumed');
      expect(consumed.map((e) => [e.data!['match_key'], e.data!['match_value']])).toEqual(played.map((_, i) => ['round', i]));
      for (const e of consumed) expect(String(e.data!['decision_id'])).toMatch(/^web:/);
      expect(events(guestDir).filter((e) => e.type === 'local_decision_rejected')).toEqual([]);
      const reveals = frames(guestDir).filter((f) => f.from === 'guest' && f.msg.action === 'reveal');
      expect(reveals.map((f) => f.msg['choice'])).toEqual(played);
      const decisions = lines(join(guestDir, 'decision', 'decisions.jsonl')).map((l) => JSON.parse(l) as { value: string; _meta: { origin: string } });
      expect(decisions.map((d) => [d.value, d._meta.origin])).toEqual(played.map((p) => [p, 'web']));
      expect(pageErrors.filter((e) => !/403/.test(e))).toEqual([]);
      expect(outside).toEqual([]);
    } finally {
      await page.close();
      expect(await view.stop()).toBe(0);
      await done;
    }
  });

  it('takes whole messages for session_loop windows, from the templates the spec gives, and shows a refusal', async () => {
    // Guess the number as a person: each guess is typed into the page, each hint read from its frames.
    const { guestDir, done, result: finished } = await humanGuestSession('web-message', 'guess-number');
    const view = await startView([guestDir]);
    const page = await browser.newPage();
    try {
      await page.goto(view.url);
      const box = page.getByLabel('Message (JSON)');
      await expect.poll(() => box.inputValue()).not.toBe('');
      // One template per message a guest may send, the flow's move first, required fields at their least values.
      expect(await page.getByLabel('Message kind (fills the template)').locator('option').allTextContents()).toEqual(['guess', 'error']);
      expect(JSON.parse(await box.inputValue())).toEqual({ action: 'guess', attempt: 1, number: 0 });
      await page.getByLabel('Message kind (fills the template)').selectOption({ label: 'error' });
      expect(JSON.parse(await box.inputValue())).toEqual({ action: 'error', reason: 'invalid_guess' });
      await page.screenshot({ path: join(ARTIFACTS, 'session-web-4-message-window.png'), fullPage: true });

      // An attempt the spec does not allow (min 1): the engine refuses it, the page says so, and the window stays open.
      await box.fill(JSON.stringify({ action: 'guess', attempt: 0, number: 50 }));
      await page.getByRole('button', { name: 'Send message' }).click();
      await expect.poll(() => page.textContent('#decide-result'), { timeout: 10_000 }).toMatch(/^The engine refused guess: .*attempt.*Decide again\.$/);
      await page.screenshot({ path: join(ARTIFACTS, 'session-web-5-refused.png'), fullPage: true });

      let [lo, hi] = [1, 100];
      const guesses: number[] = [];
      for (let turn = 0; ; turn++) {
        if (turn > 0) {
          await page.waitForFunction(
            (n) =>
              document.body.dataset['phase'] === 'ended' ||
              document.body.dataset['phase'] === 'aborted' ||
              (!document.getElementById('decision')!.hidden && (document.getElementById('window-title')!.textContent ?? '').endsWith(`turn ${n}`)),
            turn,
            { timeout: 20_000 },
          );
          if (await page.evaluate(() => document.getElementById('decision')!.hidden)) break;
          const hint = await page.locator('#frames-body tr[data-action="hint"]').last().textContent();
          const result = /result=(higher|lower)/.exec(hint ?? '')?.[1];
          expect(hint).toContain(`attempt=${turn} `);
          if (result === 'higher') lo = guesses.at(-1)! + 1;
          else hi = guesses.at(-1)! - 1;
        }
        expect(turn, 'bisection needs at most 7 guesses').toBeLessThan(7);
        const n = Math.floor((lo + hi) / 2);
        await box.fill(JSON.stringify({ action: 'guess', attempt: turn + 1, number: n }));
        await page.getByRole('button', { name: 'Send message' }).click();
        guesses.push(n);
        await expect
          .poll(() => page.textContent('#decide-result'), { timeout: 10_000 })
          .toMatch(new RegExp(`^(Sent guess for turn ${turn};|The engine took guess for turn ${turn}\\.)`));
      }
      const result = await finished();
      expect([result.host.completed, result.guest.completed]).toEqual([true, true]);
      await expect.poll(() => page.textContent('#phase')).toBe('ended');
      await page.screenshot({ path: join(ARTIFACTS, 'session-web-6-message-ended.png'), fullPage: true });

      const sent = frames(guestDir)
        .filter((f) => f.from === 'guest' && f.msg.action === 'guess')
        .map((f) => f.msg);
      expect(sent).toEqual(guesses.map((number, i) => ({ action: 'guess', attempt: i + 1, number })));
      const over = frames(guestDir).find((f) => f.msg.action === 'game_over')!.msg;
      expect([over['winner'], over['secret_number']]).toEqual(['guest', guesses.at(-1)]);
      const ev = events(guestDir);
      expect(ev.filter((e) => e.type === 'local_decision_rejected')).toHaveLength(1);
      expect(ev.filter((e) => e.type === 'local_decision_consumed').map((e) => [e.data!['match_key'], e.data!['match_value']])).toEqual(
        guesses.map((_, i) => ['turn', i]),
      );
    } finally {
      await page.close();
      expect(await view.stop()).toBe(0);
      await done;
    }
  });
});

/** A session side written by hand: the view reads files, it does not verify them. */
function fakeSide(dir: string, msgs: Record<string, unknown>[], pad = 0): void {
  mkdirSync(join(dir, 'decision'), { recursive: true });
  const header = {
    _transcript: 1,
    sid: 'ab'.repeat(32),
    post_id: 'local',
    protocol_id: 'cd'.repeat(32),
    host_key: '01'.repeat(32),
    guest_key: '02'.repeat(32),
    nonce: '00'.repeat(16),
    role: 'guest',
  };
  const body = msgs.map((msg, i) =>
    JSON.stringify({
      v: 2,
      sid: header.sid,
      from: i % 2 ? 'guest' : 'host',
      seq: Math.floor(i / 2),
      prev: '00'.repeat(32),
      ack: '00'.repeat(32),
      msg: { ...msg, ...(pad && { pad: 'x'.repeat(pad) }) },
      sig: '00'.repeat(64),
    }),
  );
  writeFileSync(join(dir, 'transcript.jsonl'), `${[JSON.stringify(header), ...body].join('\n')}\n`);
  writeFileSync(join(dir, 'events.jsonl'), `${JSON.stringify({ ts: new Date().toISOString(), type: 'session_started', data: { role: 'guest' } })}\n`);
  writeFileSync(join(dir, 'snapshot.json'), JSON.stringify({ phase: 'in_progress', role: 'guest', sid: header.sid }));
  writeFileSync(join(dir, 'spec.json'), JSON.stringify({ name: '<i>spec</i>', messages: [] }));
}

describe('session web reads only the end of large files', () => {
  it('sends the newest frames of a transcript larger than its read limit, with the header and the cut said', async () => {
    const dir = join(tempDir('web-large'), 'guest');
    const n = 3000;
    // Each frame ~2.3 KiB: the transcript is well past the read limit.
    fakeSide(
      dir,
      Array.from({ length: n }, (_, i) => ({ action: 'note', i })),
      2000,
    );
    expect(readFileSync(join(dir, 'transcript.jsonl')).length).toBeGreaterThan(TAIL_BYTES);
    const view = await serveSessionView(dir, '127.0.0.1', 0);
    try {
      const s = JSON.parse((await raw(`${view.url}state`)).body) as {
        sid: string;
        frames: { action: string; fields: Record<string, unknown>; cut?: string[] }[];
        frames_truncated: boolean;
      };
      expect(s.sid).toBe('ab'.repeat(32));
      expect(s.frames_truncated).toBe(true);
      expect(s.frames).toHaveLength(MAX_FRAMES);
      expect(s.frames.map((f) => f.fields['i'])).toEqual(Array.from({ length: MAX_FRAMES }, (_, k) => n - MAX_FRAMES + k));
      // A long field goes out cut, and says so.
      expect(s.frames[0]!.cut).toEqual(['pad']);
      expect(String(s.frames[0]!.fields['pad']).length).toBeLessThan(200);
    } finally {
      await view.close();
    }
  });
});

describe('session web without a directory', () => {
  it('follows the session side written last under the data directory', () => {
    const data = tempDir('web-data');
    const a = join(data, 'sessions', 'aaaa', 'host');
    const b = join(data, 'sessions', 'bbbb', 'guest');
    fakeSide(a, []);
    fakeSide(b, []);
    const old = new Date(Date.now() - 60_000);
    for (const f of ['snapshot.json', 'events.jsonl']) utimesSync(join(b, f), old, old);
    expect(latestSessionSide(data)).toBe(a);
    for (const f of ['snapshot.json', 'events.jsonl']) utimesSync(join(a, f), new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
    expect(latestSessionSide(data)).toBe(b);
    expect(latestSessionSide(join(data, 'nothing'))).toBeUndefined();
  });
});

describe('session web never interprets peer text', () => {
  it('shows markup in a frame, an event and the spec name as text, and runs none of it', async () => {
    const dir = join(tempDir('web-markup'), 'guest');
    const evil = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
    fakeSide(dir, [
      { action: '<b>join</b>', text: evil },
      { action: 'chat', text: evil },
    ]);
    writeFileSync(join(dir, 'events.jsonl'), `${JSON.stringify({ ts: '<i>t</i>', type: `<img src=x onerror="window.__pwned=3">`, data: { text: evil } })}\n`);
    const view = await serveSessionView(dir, '127.0.0.1', 0);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const requests: string[] = [];
      page.on('request', (r) => requests.push(new URL(r.url()).pathname));
      await page.goto(view.url);
      await expect.poll(() => page.locator('#frames-body tr').count()).toBe(2);
      await expect.poll(() => page.locator('#events li').count()).toBe(1);
      expect(await page.textContent('#frames-body')).toContain(evil);
      expect(await page.textContent('#frames-body tr >> nth=0 >> td >> nth=2')).toBe('<b>join</b>');
      expect(await page.textContent('#protocol')).toBe('<i>spec</i>');
      expect(await page.locator('main img, main b, main i, main script').count()).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
      // The page asked its server only (the token path), never for x.
      const token = new URL(view.url).pathname;
      expect(requests.filter((p) => !p.startsWith(token))).toEqual([]);
      await page.screenshot({ path: join(ARTIFACTS, 'session-web-7-markup-as-text.png'), fullPage: true });
    } finally {
      await browser.close();
      await view.close();
    }
  });
});
