// The registry commands end to end, as a user runs them (bin/aigenora.mjs in child processes), against
// a registry on loopback that checks every signature: register (and the server remembered), inbox
// between two identities, protocol register → fetch with the id recomputed, a lying server's spec
// refused, browse and cancel, and an unreachable server as one typed line.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { loadIdentity } from '../../ts/library/identity.js';
import { buildInvitation, RegistryClient } from '../../ts/registry/client.js';
import { protocolId } from '../../ts/spec/protocol-id.js';
import { tempDir } from '../shared/tmp.js';
import { FakeRegistry } from './fake-registry.js';

import { BIN, cli as runCli } from '../shared/cli.js';
const c = getCrypto();

interface Run {
  status: number | null;
  out: string;
  err: string;
}

const REGISTRY_ENV = ['AIGENORA_SERVER', 'P2P_SERVER', 'AIGENORA_CONFIG'];

/** In process (main() awaits, so the registry in this process keeps answering), with the registry variables cleared. */
async function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const r = await runCli(args, { env: { ...Object.fromEntries(REGISTRY_ENV.map((k) => [k, undefined])), ...env } });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

/** The same command as a user runs it, in a new process. */
function spawned(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !REGISTRY_ENV.includes(k)));
    const p = spawn(process.execPath, [BIN, ...args], { env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('close', (status) => resolve({ status, out, err }));
  });
}

async function ok(args: string[], env: Record<string, string> = {}): Promise<string> {
  const r = await cli(args, env);
  if (r.status !== 0) throw new Error(`aigenora ${args.join(' ')} exited ${r.status}: ${r.err}`);
  expect(r.err).toBe('');
  return r.out;
}

/** A refusal: exit 1, nothing on stdout, exactly one line on stderr that starts with the command and carries the code. */
async function refused(args: string[], label: string, codeText: string): Promise<string> {
  const r = await cli(args);
  expect(r.status, r.err).toBe(1);
  expect(r.out).toBe('');
  const lines = r.err.trimEnd().split('\n');
  expect(lines, r.err).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^aigenora ${label}: ${codeText}`));
  expect(r.err).not.toMatch(/\n\s+at /);
  return lines[0]!;
}

let reg: FakeRegistry;
const alice = tempDir('reg-alice');
const bob = tempDir('reg-bob');

beforeAll(async () => {
  reg = await new FakeRegistry(c).start();
  await Promise.all([ok(['init', '--data-dir', alice]), ok(['init', '--data-dir', bob])]);
}, 60_000);
afterAll(() => reg.stop());

describe('registry commands', () => {
  it('register solves the proof of work, remembers the server, and is idempotent', async () => {
    const pk = loadIdentity(c, alice).publicKey;
    expect(await ok(['register', '--server', `${reg.url}/`, '--nickname', 'alice', '--data-dir', alice])).toBe(`registered ${pk} at ${reg.url}\n`);
    expect(reg.registered.get(pk)).toBe('alice');
    expect(JSON.parse(readFileSync(join(alice, 'config.json'), 'utf8'))).toEqual({ server: reg.url });
    expect(statSync(join(alice, 'config.json')).mode & 0o777).toBe(0o600);
    // Without --server: the remembered one.
    const again = JSON.parse(await ok(['register', '--nickname', 'alice', '--data-dir', alice, '--json']));
    expect(again).toMatchObject({ public_key: pk, server: reg.url, already_registered: true });
    await ok(['register', '--nickname', 'bob', '--bio', 'second', '--data-dir', bob], { AIGENORA_SERVER: reg.url });
    expect(reg.registered.get(loadIdentity(c, bob).publicKey)).toBe('bob');
  }, 60_000);

  it('inbox: alice seals a message to bob; bob lists, reads (same plaintext) and deletes it', async () => {
    const bobPk = loadIdentity(c, bob).publicKey;
    const text = 'hello bob — ünïcode ✓ 🎲';
    const sent = JSON.parse(await ok(['inbox', 'send', '--to', bobPk, '--message', text, '--data-dir', alice, '--json']));
    expect(typeof sent.id).toBe('string');
    const outbox = readFileSync(join(alice, 'outbox.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(outbox).toEqual([expect.objectContaining({ to: bobPk, message: text, id: sent.id })]);
    expect(statSync(join(alice, 'outbox.jsonl')).mode & 0o777).toBe(0o600);
    const listed = await ok(['inbox', 'list', '--data-dir', bob, '--server', reg.url]);
    expect(listed.trim().split('\n')).toHaveLength(1);
    expect(listed.startsWith(`${sent.id}  `)).toBe(true);
    expect(await ok(['inbox', 'read', sent.id, '--data-dir', bob, '--server', reg.url])).toBe(`${text}\n`);
    expect(JSON.parse(await ok(['inbox', 'read', sent.id, '--data-dir', bob, '--server', reg.url, '--json']))).toEqual({ id: sent.id, plaintext: text });
    // Not alice's to read: the registry refuses, and that is one typed line.
    await refused(['inbox', 'read', sent.id, '--data-dir', alice], 'inbox read', 'REGISTRY_HTTP_404');
    reg.lie = { ciphertext: Buffer.from(c.boxSeal(c.ed25519PublicKey(new Uint8Array(32).fill(3)), new TextEncoder().encode('x'))).toString('base64') };
    try {
      await refused(['inbox', 'read', sent.id, '--data-dir', bob, '--server', reg.url], 'inbox read', 'INBOX_OPEN_FAILED');
    } finally {
      reg.lie = {};
    }
    expect(await ok(['inbox', 'delete', sent.id, '--data-dir', bob, '--server', reg.url])).toBe(`deleted ${sent.id}\n`);
    expect(await ok(['inbox', 'list', '--data-dir', bob, '--server', reg.url])).toBe('');
    // A sender's lines are kept; its escape sequences are not passed to bob's terminal (--json keeps them).
    const sly = 'line one\n\u001b[2Jline two\u202e';
    const id2 = JSON.parse(await ok(['inbox', 'send', '--to', bobPk, '--message', sly, '--data-dir', alice, '--json'])).id;
    expect(await ok(['inbox', 'read', id2, '--data-dir', bob, '--server', reg.url])).toBe('line one\n\ufffd[2Jline two\ufffd\n');
    expect(JSON.parse(await ok(['inbox', 'read', id2, '--data-dir', bob, '--server', reg.url, '--json'])).plaintext).toBe(sly);
  }, 90_000);

  it('protocol register → fetch writes a spec that hashes to its id; a lying server’s spec is refused and nothing written', async () => {
    const specDir = join(
      alice,
      'protocols',
      readdirSync(join(alice, 'protocols')).find((d) => /^[0-9a-f]{8}$/.test(d))!,
    );
    const dir = join(specDir, readdirSync(specDir)[0]!);
    const id = protocolId(c, readFileSync(join(dir, 'spec.json'), 'utf8'));
    expect(await ok(['protocol', 'register', dir, '--data-dir', alice])).toBe(`registered ${id} at ${reg.url}\n`);
    expect(await ok(['protocol', 'register', join(dir, 'spec.json'), '--data-dir', alice])).toBe(`already registered ${id} at ${reg.url}\n`);
    const out = join(tempDir('reg-fetch'), 'fetched');
    expect(await ok(['protocol', 'fetch', id, '--out', out, '--data-dir', bob, '--server', reg.url])).toBe(`${id} ${join(out, 'spec.json')}\n`);
    expect(protocolId(c, readFileSync(join(out, 'spec.json'), 'utf8'))).toBe(id);
    expect(JSON.parse(readFileSync(join(out, 'spec.json'), 'utf8'))).toEqual(JSON.parse(readFileSync(join(dir, 'spec.json'), 'utf8')));
    const search = await ok(['protocol', 'search', '--data-dir', bob, '--server', reg.url]);
    expect(search.startsWith(`${id}  `)).toBe(true);

    const lyingOut = join(tempDir('reg-lie'), 'lied');
    reg.lie = { protocolSpec: readFileSync(join(dir, 'spec.json'), 'utf8').replace('"messages"', '"messages_"') };
    try {
      await refused(['protocol', 'fetch', id, '--out', lyingOut, '--data-dir', bob, '--server', reg.url], 'protocol fetch', 'REGISTRY_PROTOCOL_MISMATCH');
    } finally {
      reg.lie = {};
    }
    expect(existsSync(lyingOut)).toBe(false);
  }, 90_000);

  it('browse lists an invitation one line each and filters; cancel withdraws it', async () => {
    const { seed } = loadIdentity(c, alice);
    const pid = 'ab'.repeat(32);
    const host = new RegistryClient(reg.url, seed, c);
    const { postId } = await host.postInvitation(
      buildInvitation(c, seed, { message: 'rps\u001b[2J game', tags: ['rps', 'fun'], ticket: 't1', protocolId: pid, controlMode: 'autonomous' }),
    );
    const lines = (await ok(['browse', '--protocol', pid, '--tag', 'rps,fun', '--type', 'supply', '--limit', '5', '--data-dir', bob])).trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(`${postId}  supply  ${pid}  ${host.publicKey}  "rps [2J game"  tags=rps,fun`);
    expect(await ok(['browse', '--protocol', pid, '--tag', 'chess', '--data-dir', bob])).toBe('');
    expect(JSON.parse(await ok(['browse', '--post-id', postId, '--json', '--data-dir', bob])).results[0].post_id).toBe(postId);
    await refused(['cancel', postId, '--data-dir', bob], 'cancel', 'REGISTRY_HTTP_404');
    expect(await ok(['cancel', postId, '--data-dir', alice])).toBe(`cancelled ${postId}\n`);
    expect(await ok(['browse', '--protocol', pid, '--data-dir', bob])).toBe('');
  }, 90_000);

  it('an unreachable server, no server at all, or a bad URL: one typed line each', async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as { port: number }).port;
    await new Promise<void>((r) => s.close(() => r()));
    const line = await refused(['browse', '--server', `http://127.0.0.1:${port}`, '--data-dir', bob], 'browse', 'REGISTRY_UNREACHABLE');
    expect(line).toContain(`127.0.0.1:${port}`);
    const fresh = tempDir('reg-fresh');
    await ok(['init', '--data-dir', fresh]);
    await refused(['inbox', 'list', '--data-dir', fresh], 'inbox list', 'REGISTRY_NO_SERVER');
    await refused(['register', '--nickname', 'x', '--server', 'ftp://h', '--data-dir', fresh], 'register', 'REGISTRY_BAD_URL');
    const r = await cli(['inbox', 'send', '--to', 'nothex', '--message', 'x', '--data-dir', fresh]);
    expect(r.status).toBe(2);
    // The same refusals from a new process, as a user meets them.
    for (const args of [
      ['inbox', 'list', '--data-dir', fresh],
      ['inbox', 'send', '--to', 'nothex', '--message', 'x', '--data-dir', fresh],
    ]) {
      expect(await spawned(args), args.join(' ')).toEqual(await cli(args));
    }
  }, 90_000);
});
