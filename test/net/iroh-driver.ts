// Runs one iroh scenario inside the network namespace iroh.test.ts made (the test process itself cannot
// enter it) and prints one JSON line with what happened: a hostile peer against our host or guest, or
// what the registry recorded.
import { toHex, utf8 } from '../../ts/crypto/index.js';
import { sessionCanonical, sessionId } from '../../ts/engine/frame.js';
import { createIrohInvitation } from '../../ts/net/invitation.js';
import { hostIroh, joinIroh } from '../../ts/net/iroh.js';
import { createIrohEndpoint } from '../../ts/net/iroh-node.js';
import { decodeNodeTicket, encodeNodeTicket } from '../../ts/net/iroh-ticket.js';
import { LineTransport } from '../../ts/net/line-transport.js';
import { loadIdentity } from '../../ts/library/identity.js';
import { RegistryClient } from '../../ts/registry/client.js';
import { c } from '../engine/harness.js';
import { protocol, seed } from './helpers.js';

const [scenario, dir] = process.argv.slice(2);
const rps = await protocol('rps');
const say = (o: Record<string, unknown>) => process.stdout.write(`RESULT ${JSON.stringify(o)}\n`);
const nextLine = async (t: LineTransport) => {
  const r = await t.recv(15_000);
  if (r.line === null) throw new Error('the peer said nothing');
  return JSON.parse(r.line) as Record<string, unknown>;
};

if (scenario === 'oversize') {
  // A guest that completes the handshake honestly, then sends one line over 8 MiB.
  const h = await hostIroh({ crypto: c, seed: seed(51), protocol: rps, options: {}, sessionsDir: `${dir}/h`, handshakeTimeoutMs: 15_000 });
  const ep = await createIrohEndpoint(seed(52));
  const { stream } = await ep.connect(decodeNodeTicket(h.ticket));
  const t = new LineTransport(stream, { heartbeatIntervalMs: 0 });
  const guest = c.ed25519Keypair(seed(53));
  const guestKey = toHex(guest.publicKey);
  const nonce = '00112233445566ff';
  t.send(JSON.stringify({ _session_init: true, guest_public_key: guestKey, session_nonce: nonce, guest_control_mode: 'autonomous' }));
  const proof = await nextLine(t);
  const sid = sessionId(c, h.invitation.post_id, rps.protocolId, h.invitation.host_public_key, guestKey, nonce);
  t.send(JSON.stringify({ _session_ready: true, session_id: sid }));
  // The host raises its line limit from the handshake's 64 KiB to 8 MiB once it has read _session_ready.
  await new Promise((r) => setTimeout(r, 500));
  t.send(JSON.stringify({ action: 'join', pad: 'x'.repeat((8 << 20) + 16) }));
  const r = await h.done;
  say({ proof: proof['_session_proof'] === true, completed: r.completed, reason: r.reason, detail: r.detail });
  await h.stop();
  await ep.shutdown();
} else if (scenario === 'wrong-host-key') {
  // A host whose invitation names key A, but whose handshake answers with key B's proof.
  const a = c.ed25519Keypair(seed(61));
  const b = c.ed25519Keypair(seed(62));
  const rogue = await createIrohEndpoint(seed(62), {
    onStream: (s) => {
      void (async () => {
        const t = new LineTransport(s, { heartbeatIntervalMs: 0 });
        const init = await nextLine(t);
        const canonical = sessionCanonical(String(postId), rps.protocolId, toHex(b.publicKey), String(init['guest_public_key']), String(init['session_nonce']));
        t.send(
          JSON.stringify({
            _session_proof: true,
            host_public_key: toHex(b.publicKey),
            host_signature: toHex(b.sign(utf8(canonical))),
            protocol_id: rps.protocolId,
            host_control_mode: 'autonomous',
          }),
        );
      })();
    },
  });
  const ticket = encodeNodeTicket(await rogue.address());
  const inv = createIrohInvitation(c, { host: a, protocolId: rps.protocolId, ticket });
  const postId = inv.post_id;
  try {
    await joinIroh({
      crypto: c,
      seed: seed(63),
      protocol: rps,
      options: {},
      sessionsDir: `${dir}/g`,
      target: { ...inv, options: {} },
      handshakeTimeoutMs: 15_000,
    });
    say({ refused: false });
  } catch (e) {
    say({ refused: true, code: (e as { code?: string }).code, message: (e as Error).message });
  }
  await rogue.shutdown();
} else if (scenario === 'session-get') {
  // The registry's record of a session, read with a signed request by the agent in `dir`.
  const [, , server, sid] = process.argv.slice(2);
  const client = new RegistryClient(String(server), loadIdentity(c, String(dir)).seed, c);
  say((await client.request('GET', `/api/v1/sessions/${String(sid)}`)).body as Record<string, unknown>);
} else throw new Error(`unknown scenario ${String(scenario)}`);
process.exit(0);
