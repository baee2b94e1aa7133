// `join --server URL POST_ID` trusts nothing the registry relays: an invitation without the host's
// transport binding signature, with one by another key, with a ticket swapped after signing, or for
// another transport is refused before anything is dialed. The registry here is a stand-in that answers
// whatever post the test gives it (a real server would have checked the signature on the way in).
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toHex } from '../../ts/crypto/index.js';
import { encodeNodeTicket } from '../../ts/net/iroh-ticket.js';
import { buildInvitation } from '../../ts/registry/client.js';
import { c } from '../engine/harness.js';
import { BIN, initDataDir, protocol, seed } from './helpers.js';

let server: Server;
let base = '';
let post: Record<string, unknown> = {};
const asked: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    asked.push(`${req.method} ${req.url}`);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(post));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  base = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function join_(dataDir: string, postId: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'join', '--server', base, postId, '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

describe('join --server', () => {
  it('refuses a relayed invitation whose binding signature is missing, foreign, stale or for another transport', async () => {
    const rps = await protocol('rps');
    const dir = mkdtempSync(join(tmpdir(), 'aigenora-iroh-server-'));
    initDataDir(dir);
    const hostSeed = seed(71);
    const hostKey = toHex(c.ed25519PublicKey(hostSeed));
    const ticket = encodeNodeTicket({ nodeId: hostKey, addresses: ['127.0.0.1:9'] });
    const other = encodeNodeTicket({ nodeId: hostKey, addresses: ['127.0.0.1:10'] });
    const body = buildInvitation(c, hostSeed, { message: 'rps', ticket, protocolId: rps.protocolId, controlMode: 'autonomous' });
    const signed = { ...body, post_id: 'p1', public_key: hostKey };
    const foreign = buildInvitation(c, seed(72), { message: 'rps', ticket, protocolId: rps.protocolId, controlMode: 'autonomous' });
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['no signature', { ...signed, transport_binding_signature: undefined }, /possible MITM/],
      ['signed by another key', { ...signed, transport_binding_signature: foreign.transport_binding_signature }, /does not verify/],
      [
        'ticket swapped after signing',
        { ...signed, transport_info: { version: 1, endpoint_id: hostKey, ticket: other }, iroh_ticket: other },
        /does not verify/,
      ],
      ['protocol swapped after signing', { ...signed, protocol_id: 'ab'.repeat(32) }, /does not verify/],
      [
        'another transport',
        {
          ...buildInvitation(c, hostSeed, { message: 'rps', ticket, protocolId: rps.protocolId, controlMode: 'autonomous', transport: 'carrier-pigeon' }),
          post_id: 'p1',
          public_key: hostKey,
        },
        /not supported/,
      ],
    ];
    for (const [what, p, why] of cases) {
      post = p;
      asked.length = 0;
      const r = await join_(dir, 'p1');
      expect(r.code, `${what}: ${r.out}`).toBe(1);
      expect(r.out, what).toMatch(why);
      expect(
        r.out
          .trim()
          .split('\n')
          .filter((l) => !/DeprecationWarning|trace-deprecation/.test(l)),
        what,
      ).toHaveLength(1);
      // Nothing but the invitation was asked for: no session proof, no dial.
      expect(asked, what).toEqual(['GET /api/v1/invitations/p1']);
    }
  }, 120_000);
});
