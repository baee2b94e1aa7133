/**
 * `aigenora server` as a real process: the URL line, persistence of the embedded database across a
 * restart, and two processes on one PostgreSQL serving the same data (migrations started concurrently,
 * replays refused across processes).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Crypto } from '../../ts/crypto/backend.js';
import { toHex, utf8 } from '../../ts/crypto/encoding.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { registrationBody, restHeaders, signRegistration } from '../../ts/registry/auth.js';
import { buildInvitation } from '../../ts/registry/invitation.js';
import { freshPgDatabase, needPg, PG_SKIPPED, PG_URL } from './harness.js';

import { BIN } from '../shared/cli.js';
const crypto: Crypto = getCrypto();
const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function startServer(args: string[]): Promise<{ url: string; line: string; child: ChildProcess; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, 'server', '--listen', '127.0.0.1:0', '--pow-difficulty', '1', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const { url, line } = await new Promise<{ url: string; line: string }>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /^.*(http:\/\/127\.0\.0\.1:\d+).*$/m.exec(out);
      if (m) resolve({ url: m[1]!, line: m[0] });
    });
    // stderr's last chunk may still be in flight at 'exit'; 'close' comes after all output.
    child.once('close', (code) => reject(new Error(`server exited ${code} before listening: ${stderr}`)));
  });
  const stop = () =>
    new Promise<number | null>((resolve) => {
      if (child.exitCode !== null) return resolve(child.exitCode);
      child.once('exit', (code) => resolve(code));
      child.kill('SIGTERM');
    });
  return { url, line, child, stop };
}

async function call(
  url: string,
  seed: Uint8Array,
  method: string,
  path: string,
  body?: unknown,
  requestId = toHex(randomBytes(16)),
): Promise<{ status: number; body: Record<string, unknown> }> {
  const raw = utf8(body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body));
  const headers = restHeaders(crypto, seed, { timestamp: Math.floor(Date.now() / 1000), method, path, requestId, body: raw });
  const res = await fetch(url + path, { method, headers, body: raw.length > 0 ? (raw as Uint8Array<ArrayBuffer>) : undefined });
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

async function register(url: string, seed: Uint8Array, nickname: string): Promise<number> {
  const ch = await call(url, seed, 'GET', '/api/v1/auth/challenge');
  const nonce = ch.body['nonce'] as string;
  const pub = toHex(crypto.ed25519PublicKey(seed));
  const counter = crypto.powSolve(nonce, pub, ch.body['difficulty'] as number);
  return (await call(url, seed, 'POST', '/api/v1/auth/register', registrationBody(signRegistration(crypto, seed, nonce, nickname, counter)))).status;
}

describe('aigenora server [pglite]', () => {
  it('prints its URL, keeps its data in <data-dir>/db across a restart, and exits 0 on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aigenora-server-cli-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const seed = randomBytes(32);
    const first = await startServer(['--data-dir', dir]);
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await register(first.url, seed, 'persisted')).toBe(201);
    // A second process on the same embedded database is refused before it opens it.
    await expect(startServer(['--data-dir', dir])).rejects.toThrow(/DB_UNAVAILABLE.*in use by process/);
    expect(await first.stop()).toBe(0);
    const second = await startServer(['--data-dir', dir, '--json']);
    expect(second.line).toBe(JSON.stringify({ url: second.url, database: `pglite ${join(dir, 'db')}` }));
    expect(await register(second.url, seed, 'persisted')).toBe(409);
    expect(await second.stop()).toBe(0);
  }, 300_000);
});

const pgUrl = PG_URL;
if (!needPg() || pgUrl === undefined) {
  describe.skip(`aigenora server [postgres]${PG_SKIPPED}`, () => {
    it('two processes on one PostgreSQL', () => {});
  });
} else {
  describe('aigenora server [postgres]', () => {
    it('two processes started together on one PostgreSQL serve the same data and share replay protection', async () => {
      const fresh = await freshPgDatabase(pgUrl);
      cleanups.push(fresh.drop);
      // Started at once: both race to migrate, the advisory lock makes one wait.
      const [a, b] = await Promise.all([startServer(['--db', fresh.url]), startServer(['--db', fresh.url])]);
      const host = randomBytes(32);
      const guest = randomBytes(32);
      expect(await register(a.url, host, 'host')).toBe(201);
      expect(await register(b.url, guest, 'guest')).toBe(201);
      expect(await register(b.url, host, 'host')).toBe(409);

      const protocolId = toHex(randomBytes(32));
      const inv = buildInvitation(crypto, host, { message: 'm', ticket: 'ticket-1', protocolId, controlMode: 'autonomous' });
      const posted = await call(a.url, host, 'POST', '/api/v1/invitations', inv);
      expect(posted.status).toBe(201);
      const listed = await call(b.url, guest, 'GET', `/api/v1/invitations?protocol_id=${protocolId}`);
      expect(listed.body['total']).toBe(1);
      expect((listed.body['results'] as { post_id: string }[])[0]!.post_id).toBe(posted.body['post_id']);

      const requestId = toHex(randomBytes(16));
      expect((await call(a.url, guest, 'GET', '/api/v1/invitations', undefined, requestId)).status).toBe(200);
      const replay = await call(b.url, guest, 'GET', '/api/v1/invitations', undefined, requestId);
      expect(replay.status).toBe(401);
      expect(replay.body['code']).toBe('REQUEST_REPLAYED');

      // The host cancels through the other process.
      expect((await call(b.url, host, 'DELETE', `/api/v1/invitations/${posted.body['post_id'] as string}`)).status).toBe(204);
      expect((await call(a.url, guest, 'GET', `/api/v1/invitations?protocol_id=${protocolId}`)).body['total']).toBe(0);
      expect(await a.stop()).toBe(0);
      expect(await b.stop()).toBe(0);
    }, 300_000);
  });
}
