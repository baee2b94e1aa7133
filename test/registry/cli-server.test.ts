// The registry commands and client against this project's own registry server (PGlite in a temporary
// directory, on loopback): what the CLI sends is what the server accepts, and what the server answers
// is what the CLI reads back — registration, inbox between two identities, protocol register → fetch,
// invitations through browse and cancel, and a session proof, status and result.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCrypto, toHex, utf8 } from '../../ts/crypto/index.js';
import { sessionCanonical } from '../../ts/engine/frame.js';
import { loadIdentity } from '../../ts/library/identity.js';
import { buildInvitation, checkInvitationBinding, RegistryClient } from '../../ts/registry/client.js';
import { createServer, listen, type Listening, type RegistryServer } from '../../ts/server/app.js';
import { silentLog } from '../../ts/server/log.js';
import { protocolId } from '../../ts/spec/protocol-id.js';
import { tempDir } from '../shared/tmp.js';

import { cli as runCli } from '../shared/cli.js';
const c = getCrypto();

const REGISTRY_ENV = ['AIGENORA_SERVER', 'P2P_SERVER', 'AIGENORA_CONFIG'];

/** In process (main() awaits, so the server in this process keeps answering), with the registry variables cleared. */
async function cli(args: string[]): Promise<{ status: number | null; out: string; err: string }> {
  const r = await runCli(args, { env: Object.fromEntries(REGISTRY_ENV.map((k) => [k, undefined])) });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

async function ok(args: string[]): Promise<string> {
  const r = await cli(args);
  if (r.status !== 0) throw new Error(`aigenora ${args.join(' ')} exited ${r.status}: ${r.err}`);
  return r.out;
}

let server: RegistryServer;
let http: Listening;
let dbDir: string;
const alice = tempDir('srv-alice');
const bob = tempDir('srv-bob');

beforeAll(async () => {
  dbDir = mkdtempSync(join(tmpdir(), 'aigenora-registry-db-'));
  server = await createServer({ dataDir: dbDir, log: silentLog, crypto: c, config: { powDifficulty: 1 } });
  http = await listen(server);
  await Promise.all([ok(['init', '--data-dir', alice]), ok(['init', '--data-dir', bob])]);
}, 120_000);

afterAll(async () => {
  await http?.close();
  rmSync(dbDir, { recursive: true, force: true });
});

describe('against the project registry server', () => {
  it('registers both agents (a second registration is answered as known)', async () => {
    for (const [dir, nick] of [
      [alice, 'alice'],
      [bob, 'bob'],
    ] as const)
      expect(await ok(['register', '--server', http.url, '--nickname', nick, '--data-dir', dir])).toBe(
        `registered ${loadIdentity(c, dir).publicKey} at ${http.url}\n`,
      );
    expect(await ok(['register', '--nickname', 'alice', '--data-dir', alice])).toMatch(/^already registered /);
  }, 60_000);

  it('inbox: send → list → read (the same plaintext) → delete', async () => {
    const text = 'from alice: ünïcode ✓ 🎲';
    const sent = JSON.parse(await ok(['inbox', 'send', '--to', loadIdentity(c, bob).publicKey, '--message', text, '--data-dir', alice, '--json']));
    const list = JSON.parse(await ok(['inbox', 'list', '--data-dir', bob, '--json']));
    expect(list.entries.map((e: { id: string }) => e.id)).toEqual([sent.id]);
    expect(await ok(['inbox', 'read', String(sent.id), '--data-dir', bob])).toBe(`${text}\n`);
    await ok(['inbox', 'delete', String(sent.id), '--data-dir', bob]);
    expect(JSON.parse(await ok(['inbox', 'list', '--data-dir', bob, '--json'])).entries).toEqual([]);
  }, 60_000);

  it('protocol register → fetch: the fetched spec hashes to the id', async () => {
    const heads = readdirSync(join(alice, 'protocols')).filter((d) => /^[0-9a-f]{8}$/.test(d));
    const dir = join(alice, 'protocols', heads[0]!, readdirSync(join(alice, 'protocols', heads[0]!))[0]!);
    const id = protocolId(c, readFileSync(join(dir, 'spec.json'), 'utf8'));
    expect(await ok(['protocol', 'register', dir, '--data-dir', alice])).toBe(`registered ${id} at ${http.url}\n`);
    const out = join(tempDir('srv-fetch'), 'p');
    await ok(['protocol', 'fetch', id, '--out', out, '--data-dir', bob]);
    expect(protocolId(c, readFileSync(join(out, 'spec.json'), 'utf8'))).toBe(id);
    expect(await ok(['protocol', 'search', '--data-dir', bob])).toContain(id);
  }, 60_000);

  it('an invitation is found by browse, its binding verifies, a session is recorded and closes it, and cancel withdraws another', async () => {
    const host = loadIdentity(c, alice);
    const guest = loadIdentity(c, bob);
    const hostClient = new RegistryClient(http.url, host.seed, c);
    const guestClient = new RegistryClient(http.url, guest.seed, c);
    const pid = toHex(c.sha256(utf8(`protocol ${toHex(randomBytes(4))}`)));
    const { postId } = await hostClient.postInvitation(
      buildInvitation(c, host.seed, { message: 'rps', tags: ['rps'], ticket: 'ticket-1', protocolId: pid, controlMode: 'autonomous' }),
    );
    const line = (await ok(['browse', '--protocol', pid, '--data-dir', bob])).trimEnd();
    expect(line.split('  ').slice(0, 4)).toEqual([postId, 'supply', pid, host.publicKey]);
    const inv = await guestClient.getInvitation(postId);
    expect(checkInvitationBinding(c, inv).ticket).toBe('ticket-1');
    await hostClient.renewInvitation(postId);

    const nonce = toHex(randomBytes(8));
    const canonical = utf8(sessionCanonical(postId, pid, host.publicKey, guest.publicKey, nonce));
    const sid = await guestClient.postSessionProof({
      post_id: postId,
      host_public_key: host.publicKey,
      guest_public_key: guest.publicKey,
      protocol_id: pid,
      session_nonce: nonce,
      host_signature: toHex(c.ed25519Sign(host.seed, canonical)),
      guest_signature: toHex(c.ed25519Sign(guest.seed, canonical)),
    });
    expect(sid).toBe(toHex(c.sha256(canonical)));
    await guestClient.postSessionResult(sid, 'host');
    await guestClient.postSessionStatus(sid, 'closed', 'host');
    // The other side closing too is answered 409, which the client takes as done.
    await hostClient.postSessionStatus(sid, 'closed', 'host');

    // A closed session closed its invitation; a second one, never paired, is withdrawn by cancel.
    expect(await ok(['browse', '--protocol', pid, '--data-dir', bob])).toBe('');
    const second = await hostClient.postInvitation(
      buildInvitation(c, host.seed, { message: 'again', ticket: 'ticket-2', protocolId: pid, controlMode: 'autonomous' }),
    );
    expect((await ok(['browse', '--protocol', pid, '--data-dir', bob])).split('  ')[0]).toBe(second.postId);
    expect(await ok(['cancel', second.postId, '--data-dir', alice])).toBe(`cancelled ${second.postId}\n`);
    expect(await ok(['browse', '--protocol', pid, '--data-dir', bob])).toBe('');
  }, 60_000);
});
