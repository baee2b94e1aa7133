// The registry client against a registry that checks every signature, and against one that lies: what
// a round trip gives back, and what the client refuses (a session_id or a spec that is not the one
// computed here, a box that does not open, answers that are not JSON, too large, or never come).
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCrypto, toHex, utf8 } from '../../ts/crypto/index.js';
import { sessionCanonical } from '../../ts/engine/frame.js';
import { buildInvitation, checkInvitationBinding, RegistryClient, RegistryError } from '../../ts/registry/client.js';
import { protocolId } from '../../ts/spec/protocol-id.js';
import { FakeRegistry } from './fake-registry.js';

const c = getCrypto();
let reg: FakeRegistry;
const client = (opts = {}) => new RegistryClient(reg.url, new Uint8Array(randomBytes(32)), c, opts);

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof RegistryError) return e.code;
    throw e;
  }
  throw new Error('expected a RegistryError');
}

beforeAll(async () => {
  reg = await new FakeRegistry(c).start();
});
afterAll(() => reg.stop());

async function registered() {
  const a = client();
  await a.register('agent');
  return a;
}

describe('round trips', () => {
  it('registers with a proof of work; registering again is answered as known', async () => {
    const a = client();
    expect((await a.register('ålice ✓', 'bio')).alreadyRegistered).toBe(false);
    expect(reg.registered.get(a.publicKey)).toBe('ålice ✓');
    expect((await a.register('ålice ✓')).alreadyRegistered).toBe(true);
    expect(reg.refusals.filter((r) => !r.includes('ALREADY_REGISTERED'))).toEqual([]);
  });

  it('posts, finds, renews and cancels an invitation whose transport binding the guest verifies', async () => {
    const host = await registered();
    const guest = await registered();
    const protocol = toHex(c.sha256(utf8('some protocol')));
    const seed = new Uint8Array(randomBytes(32));
    const hostClient = new RegistryClient(reg.url, seed, c);
    await hostClient.register('host');
    const body = buildInvitation(c, seed, {
      message: 'rps — best of 3',
      tags: [' game ', 'rps'],
      ticket: 'endpointabc123',
      protocolId: protocol,
      controlMode: 'autonomous',
    });
    const { postId } = await hostClient.postInvitation(body);
    const found = await guest.browse({ protocolId: protocol, type: 'supply', tags: ['rps'] });
    expect(found.items.map((i) => i.post_id)).toEqual([postId]);
    expect(found.items[0]!.tags).toEqual(['game', 'rps']);
    expect((await guest.browse({ protocolId: protocol, tags: ['chess'] })).items).toEqual([]);
    const inv = await guest.getInvitation(postId);
    expect(checkInvitationBinding(c, inv)).toEqual({ publicKey: hostClient.publicKey, ticket: 'endpointabc123', protocolId: protocol, transport: 'iroh' });
    // A registry that swaps the ticket (to point the guest at itself) is caught by the binding.
    expect(() => checkInvitationBinding(c, { ...inv, transport_info: { version: 1, endpoint_id: hostClient.publicKey, ticket: 'attacker' } })).toThrow(
      /does not verify/,
    );
    expect(() => checkInvitationBinding(c, { ...inv, transport_binding_signature: undefined })).toThrow(/MITM/);
    await hostClient.renewInvitation(postId);
    expect(await code(host.cancelInvitation(postId))).toBe('REGISTRY_HTTP_404');
    await hostClient.cancelInvitation(postId);
    expect(await code(guest.getInvitation(postId))).toBe('REGISTRY_HTTP_404');
  });

  it('reports a session proof, its status and result; a session_id that is not this proof’s is refused', async () => {
    const hostSeed = new Uint8Array(randomBytes(32));
    const guestSeed = new Uint8Array(randomBytes(32));
    const hostPk = toHex(c.ed25519PublicKey(hostSeed));
    const guestPk = toHex(c.ed25519PublicKey(guestSeed));
    const protocol = toHex(c.sha256(utf8('p')));
    const canonical = utf8(sessionCanonical('p9', protocol, hostPk, guestPk, '0123456789abcdef'));
    const proof = {
      post_id: 'p9',
      host_public_key: hostPk,
      guest_public_key: guestPk,
      protocol_id: protocol,
      session_nonce: '0123456789abcdef',
      host_signature: toHex(c.ed25519Sign(hostSeed, canonical)),
      guest_signature: toHex(c.ed25519Sign(guestSeed, canonical)),
    };
    const guest = new RegistryClient(reg.url, guestSeed, c);
    const sid = await guest.postSessionProof(proof);
    expect(sid).toBe(toHex(c.sha256(canonical)));
    await guest.postSessionStatus(sid, 'closed', 'guest');
    await guest.postSessionResult(sid, 'guest');
    expect(reg.sessions.get(sid)).toMatchObject({ status: { status: 'closed', winner: 'guest' }, result: { winner: 'guest' } });
    reg.lie = { sessionId: '00'.repeat(32) };
    try {
      expect(await code(guest.postSessionProof(proof))).toBe('REGISTRY_SESSION_ID_MISMATCH');
    } finally {
      reg.lie = {};
    }
  });

  it('carries a sealed message between two identities; only the recipient opens it', async () => {
    const alice = await registered();
    const bob = await registered();
    const text = 'héllo bob ✓ 🎲 "quoted"\nsecond line';
    const sent = await alice.inboxSend(bob.publicKey, text);
    expect(sent.id).toBeTruthy();
    // The registry holds only the box: the plaintext is not in what it stored.
    expect(Buffer.from(reg.inbox.get(sent.id!)!.ciphertext, 'base64').includes(Buffer.from('bob'))).toBe(false);
    const list = await bob.inboxList();
    expect(list.entries.map((e) => e.id)).toEqual([sent.id]);
    expect((await bob.inboxRead(sent.id!)).plaintext).toBe(text);
    expect((await alice.inboxList()).entries).toEqual([]);
    // A box addressed to someone else, handed out as Bob's, does not open with Bob's key.
    const other = await registered();
    reg.lie = { ciphertext: Buffer.from(c.boxSeal(new Uint8Array(c.ed25519PublicKey(new Uint8Array(32).fill(9))), utf8('x'))).toString('base64') };
    try {
      expect(await code(bob.inboxRead(sent.id!))).toBe('INBOX_OPEN_FAILED');
      reg.lie = { ciphertext: 'not base64!' };
      expect(await code(bob.inboxRead(sent.id!))).toBe('REGISTRY_BAD_RESPONSE');
    } finally {
      reg.lie = {};
    }
    await bob.inboxDelete(sent.id!);
    expect((await bob.inboxList()).entries).toEqual([]);
    expect(await code(other.inboxSend(bob.publicKey, 'x'.repeat(257)))).toBe('INBOX_MESSAGE_TOO_LONG');
    // 256 characters, some of them outside the BMP, is within the limit (Python counts code points).
    await other.inboxSend(bob.publicKey, '🎲'.repeat(256));
  });

  it('publishes a spec and fetches it back, its protocol_id recomputed; a spec that does not hash to it is refused', async () => {
    const a = await registered();
    const spec = `{"name":"Float game","description":"uses 1.0","spec_version":"1.0","type":"game","messages":[{"name":"m","direction":"both","fields":{"action":{"type":"string"}}}],"parameters":{"p":{"type":"number","default":2,"min":1.0}}}`;
    const r = await a.registerProtocol(spec);
    expect(r.protocolId).toBe(protocolId(c, spec));
    expect(r.alreadyRegistered).toBe(false);
    expect((await a.registerProtocol(spec)).alreadyRegistered).toBe(true);
    const back = await a.fetchProtocol(r.protocolId);
    expect(protocolId(c, back.specText)).toBe(r.protocolId);
    expect(back.specText).toContain('"min":1.0');
    expect((await a.searchProtocols('FLOAT')).results.map((p) => p.protocol_id)).toContain(r.protocolId);
    expect((await a.searchProtocols('no such words')).results).toEqual([]);
    reg.lie = { protocolSpec: spec.replace('1.0}', '1.5}') };
    try {
      expect(await code(a.fetchProtocol(r.protocolId))).toBe('REGISTRY_PROTOCOL_MISMATCH');
      reg.lie = { protocolSpec: '"a string that is not JSON"' };
      expect(await code(a.fetchProtocol(r.protocolId))).toBe('REGISTRY_BAD_RESPONSE');
    } finally {
      reg.lie = {};
    }
  });
});

describe('a hostile or absent server', () => {
  const lying = async (lie: FakeRegistry['lie'], opts = {}) => {
    reg.lie = lie;
    try {
      return await code(client(opts).browse());
    } finally {
      reg.lie = {};
    }
  };

  it('answers that are not strict JSON or the wrong shape are REGISTRY_BAD_RESPONSE', async () => {
    expect(await lying({ body: '<html>' })).toBe('REGISTRY_BAD_RESPONSE');
    expect(await lying({ body: '{"results":[],"results":[{"post_id":"x"}]}' })).toBe('REGISTRY_BAD_RESPONSE');
    expect(await lying({ body: '{"results":"many"}' })).toBe('REGISTRY_BAD_RESPONSE');
    expect(await lying({ body: `[${'{"post_id":"x"},'.repeat(100)}{"post_id":"y"}]` })).toBe('REGISTRY_BAD_RESPONSE');
    expect(await lying({ body: '[1]' })).toBe('REGISTRY_BAD_RESPONSE');
  });

  it('an answer larger than the cap is refused while reading', async () => {
    expect(await lying({ body: `{"results":[],"pad":"${'x'.repeat(5000)}"}` }, { maxResponseBytes: 4096 })).toBe('REGISTRY_RESPONSE_TOO_LARGE');
  });

  it('a server that never answers is REGISTRY_TIMEOUT', async () => {
    expect(await lying({ silent: true }, { timeoutMs: 300 })).toBe('REGISTRY_TIMEOUT');
  });

  it('a port nobody listens on is REGISTRY_UNREACHABLE', async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as { port: number }).port;
    await new Promise<void>((r) => s.close(() => r()));
    expect(await code(new RegistryClient(`http://127.0.0.1:${port}`, new Uint8Array(32).fill(1), c).browse())).toBe('REGISTRY_UNREACHABLE');
  });

  it('a refusal names the status and the server’s code, without its control characters', async () => {
    const e = await client()
      .getInvitation('nope')
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RegistryError);
    expect((e as RegistryError).status).toBe(404);
    expect((e as RegistryError).serverCode).toBe('NOT_FOUND');
    reg.lie = {};
    const { sanitize } = await import('../../ts/registry/errors.js');
    expect(sanitize('bad\u001b[31m red\nline\u202e')).toBe('bad [31m red line');
  });

  it('ids that would change the signed path, and bad URLs, are refused before anything is sent', async () => {
    const a = client();
    for (const id of ['../auth/challenge', '..', 'a/b', 'a?b', '', 'x'.repeat(129)]) expect(await code(a.getInvitation(id)), id).toBe('REGISTRY_BAD_ARGUMENT');
    expect(await code(a.postSessionResult('not-hex', 'host'))).toBe('REGISTRY_BAD_ARGUMENT');
    expect(await code(a.browse({ tags: ['no spaces'] }))).toBe('REGISTRY_BAD_ARGUMENT');
    for (const url of ['ftp://x', 'not a url', 'http://u:p@host', 'http://h/?q=1'])
      expect(() => new RegistryClient(url, new Uint8Array(32), c), url).toThrow(RegistryError);
  });

  it('refuses to grind a proof of work harder than it allows', async () => {
    reg.lie = { body: '{"nonce":"abc","difficulty":4}' };
    try {
      expect(await code(client().register('x'))).toBe('REGISTRY_POW_TOO_HARD');
    } finally {
      reg.lie = {};
    }
  });
});
