// Hostile peers over real sockets against `aigenora host` (a child process, so a crash is an exit):
// garbage, bad WebSocket frames, floods, idle sockets and slot squatting. After each attack the host
// must still be running and a real guest must play a whole session. Attackers use other loopback
// addresses (127.0.0.2 and up) than the guest (127.0.0.1), as they would be other hosts; every loop
// is bounded. The counts are printed at the end.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multiaddr } from '@multiformats/multiaddr';
import type { Libp2p } from 'libp2p';
import { parseInvitation, type Invitation } from '../../ts/net/invitation.js';
import { LineTransport, type ByteStream } from '../../ts/net/line-transport.js';
import { SESSION_PROTOCOL } from '../../ts/net/node.js';
import { host, join as joinSession, type Protocol } from '../../ts/net/session.js';
import { tempDir } from '../shared/tmp.js';
import { c } from '../engine/harness.js';
import {
  alive,
  hostProcess,
  initDataDir,
  jsonLines,
  peerFrom,
  portOf,
  prng,
  protocol,
  raw,
  signedInit,
  until,
  wsFrame,
  wsUpgraded,
  type HostProcess,
  type Raw,
} from './helpers.js';

const DEADLINE_S = 2;
/** How long the host may take to close what it should close: the deadline plus slack for a loaded machine. */
const CLOSE_WITHIN_MS = DEADLINE_S * 1000 + 8_000;
const random = prng(0x5eed);
const tally: Record<string, Record<string, number>> = {};
const count = (attack: string, what: string, n = 1) => {
  tally[attack] ??= {};
  tally[attack]![what] = (tally[attack]![what] ?? 0) + n;
};
const from = (i: number) => `127.0.0.${2 + (i % 200)}`;

let coinFlip: Protocol;
let guests = 0;
const dir = tempDir('hostile');

/** A real guest from 127.0.0.1 plays a whole session with the invitation. */
async function realGuestPlays(inv: Invitation, attack: string): Promise<void> {
  const g = await joinSession({
    crypto: c,
    seed: globalThis.crypto.getRandomValues(new Uint8Array(32)),
    protocol: coinFlip,
    options: {},
    sessionsDir: join(dir, `guest-${++guests}`),
    invitation: inv,
  });
  expect(g.completed, `the real guest after "${attack}": ${g.reason} ${g.detail ?? ''}`).toBe(true);
  count(attack, 'real guest completed');
}

async function allClosed(socks: Raw[], what: string): Promise<void> {
  await until(
    () => socks.every((r) => r.closed),
    `the host to close every ${what} (${socks.filter((r) => !r.closed).length} of ${socks.length} still open)`,
    CLOSE_WITHIN_MS,
  );
}

/** Runs `n` jobs, at most `width` at a time. */
async function batched(n: number, width: number, job: (i: number) => Promise<void>): Promise<void> {
  for (let i = 0; i < n; i += width) await Promise.all(Array.from({ length: Math.min(width, n - i) }, (_, k) => job(i + k)));
}

beforeAll(async () => {
  coinFlip = await protocol('coin-flip');
  initDataDir(join(dir, 'alice'));
  initDataDir(join(dir, 'carol'));
}, 60_000);

afterAll(() => {
  const lines = Object.entries(tally).map(
    ([attack, n]) =>
      `  ${attack}: ${Object.entries(n)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
  );
  console.log(`hostile-peer runs (host crashes: 0 when this suite passes)\n${lines.join('\n')}`);
});

describe('hostile peers against aigenora host --daemon', () => {
  let h: HostProcess;
  let inv: Invitation;
  let tcpPort: number;
  let wsPort: number;
  /** Real guests served by this host. */
  let served = 0;

  beforeAll(async () => {
    h = await hostProcess(join(dir, 'alice'), [
      '--protocol',
      'coin-flip-v1',
      '--options',
      '{"best_of":1}',
      '--daemon',
      '--json',
      '--handshake-timeout-seconds',
      String(DEADLINE_S),
    ]);
    inv = parseInvitation(c, h.invitation);
    served = guests;
    tcpPort = portOf(inv, 'tcp');
    wsPort = portOf(inv, 'ws');
  }, 60_000);

  afterAll(async () => {
    if (!h) return;
    served = guests - served;
    const wasAlive = alive(h.child);
    h.child.kill('SIGTERM');
    expect(await h.exited).toBe(0);
    expect(wasAlive, h.output()).toBe(true);
    // The invitation, then one report per real guest, each a completed session (a line of JSON each).
    const [invitationLine, ...reports] = jsonLines(h.stdout());
    expect(invitationLine, h.output()).toMatchObject({ role: 'host', invitation: h.invitation });
    expect(reports.filter((r) => r['role'] === 'host').length, h.output()).toBe(served);
    expect(reports.filter((r) => r['completed'] === true).length, h.output()).toBe(served);
    expect(h.output()).not.toMatch(/\n\s+at /);
  }, 30_000);

  it('bad WebSocket frames: reserved bits, reserved opcodes, unmasked, bad control frames, bad lengths', async () => {
    const close = (code: number) => Uint8Array.of(code >> 8, code & 0xff);
    const kinds: [string, Buffer][] = [
      ['RSV1 without an extension', wsFrame({ opcode: 2, rsv: 4, payload: Uint8Array.of(1) })],
      ['RSV2', wsFrame({ opcode: 2, rsv: 2, payload: Uint8Array.of(1) })],
      ['RSV3', wsFrame({ opcode: 2, rsv: 1, payload: Uint8Array.of(1) })],
      ['RSV2 and RSV3', wsFrame({ opcode: 2, rsv: 3, payload: Uint8Array.of(0x55) })],
      ['all reserved bits', wsFrame({ opcode: 1, rsv: 7 })],
      ['reserved data opcode 3', wsFrame({ opcode: 3, payload: Uint8Array.of(1) })],
      ['reserved data opcode 7', wsFrame({ opcode: 7 })],
      ['reserved control opcode 0xB', wsFrame({ opcode: 0xb })],
      ['reserved control opcode 0xF', wsFrame({ opcode: 0xf })],
      ['unmasked client frame', wsFrame({ opcode: 2, masked: false, payload: Uint8Array.of(1, 2) })],
      ['continuation with nothing to continue', wsFrame({ opcode: 0, payload: Uint8Array.of(1) })],
      ['fragmented ping', wsFrame({ opcode: 9, fin: false })],
      ['ping over 125 bytes', wsFrame({ opcode: 9, payload: new Uint8Array(200) })],
      ['close with a 1-byte body', wsFrame({ opcode: 8, payload: Uint8Array.of(3) })],
      ['close code 1006', wsFrame({ opcode: 8, payload: close(1006) })],
      ['close code 999', wsFrame({ opcode: 8, payload: close(999) })],
      ['text that is not UTF-8', wsFrame({ opcode: 1, payload: Uint8Array.of(0xff, 0xfe, 0xfd) })],
      ['64-bit length with the top bit set', wsFrame({ opcode: 2, length: 2n ** 63n + 5n })],
      ['a 64 MiB message (over maxPayload)', wsFrame({ opcode: 2, length: 64n << 20n })],
      [
        'a new message inside a fragmented one',
        Buffer.concat([wsFrame({ opcode: 2, fin: false, payload: Uint8Array.of(1) }), wsFrame({ opcode: 2, payload: Uint8Array.of(2) })]),
      ],
    ];
    const socks: Raw[] = [];
    let i = 0;
    for (const [, bytes] of kinds) {
      await Promise.all(
        [0, 1, 2].map(async () => {
          const s = await wsUpgraded(wsPort, from(i++ % 3));
          count('bad WebSocket frames', 'connections');
          if (!s.upgraded) return;
          s.socket.write(bytes);
          count('bad WebSocket frames', 'frames');
          socks.push(s);
        }),
      );
      await allClosed(socks, 'socket after a bad frame');
    }
    count('bad WebSocket frames', 'kinds', kinds.length);
    expect(alive(h.child), h.output()).toBe(true);
    await realGuestPlays(inv, 'bad WebSocket frames');
  }, 120_000);

  it('garbage: random bytes to the TCP and WebSocket ports, before and after an upgrade, and plain HTTP', async () => {
    const socks: Raw[] = [];
    const attack = 'garbage';
    await batched(30, 10, async (i) => {
      const s = await raw(tcpPort, from(10 + (i % 5)));
      const bytes = random(1 + (random(2)[0]! << 4));
      s.socket.write(bytes);
      count(attack, 'TCP connections');
      count(attack, 'bytes', bytes.length);
      socks.push(s);
    });
    await batched(30, 10, async (i) => {
      const s = await raw(wsPort, from(15 + (i % 5)));
      const bytes = random(1 + (random(2)[0]! << 4));
      s.socket.write(bytes);
      count(attack, 'WebSocket-port connections');
      count(attack, 'bytes', bytes.length);
      socks.push(s);
    });
    await batched(10, 10, async (i) => {
      const s = await raw(wsPort, from(20 + (i % 5)));
      s.socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
      count(attack, 'plain HTTP requests');
      socks.push(s);
    });
    await batched(20, 10, async (i) => {
      const s = await wsUpgraded(wsPort, from(25 + (i % 5)));
      const bytes = random(64 + i * 50);
      // Half as a well-formed binary message (garbage to libp2p), half as raw bytes (garbage to ws).
      s.socket.write(i % 2 ? wsFrame({ opcode: 2, payload: bytes }) : bytes);
      count(attack, 'upgraded WebSocket connections');
      count(attack, 'bytes', bytes.length);
      socks.push(s);
    });
    await allClosed(socks, 'garbage connection');
    expect(alive(h.child), h.output()).toBe(true);
    await realGuestPlays(inv, attack);
  }, 120_000);

  it('floods: megabytes of noise, thousands of frames, connection churn, stream and line floods', async () => {
    const attack = 'floods';
    const socks: Raw[] = [];
    await Promise.all(
      [0, 1, 2].map(async (i) => {
        const s = await raw(tcpPort, from(30 + i));
        for (let k = 0; k < 32 && !s.closed; k++) {
          s.socket.write(random(64 << 10));
          count(attack, 'TCP bytes', 64 << 10);
        }
        count(attack, 'TCP noise connections');
        socks.push(s);
      }),
    );
    await Promise.all(
      [0, 1, 2].map(async (i) => {
        const s = await wsUpgraded(wsPort, from(33 + i));
        if (s.upgraded) s.socket.write(Buffer.concat(Array.from({ length: 3000 }, () => wsFrame({ opcode: 2, payload: random(16) }))));
        count(attack, 'WebSocket frames', 3000);
        socks.push(s);
      }),
    );
    // Churn: connect and drop at once.
    await batched(200, 20, async (i) => {
      const s = await raw(i % 2 ? tcpPort : wsPort, from(36 + (i % 4)));
      s.socket.destroy();
      count(attack, 'churned connections');
    });
    // A libp2p peer that completes Noise and floods the session protocol.
    const peer = await peerFrom(globalThis.crypto.getRandomValues(new Uint8Array(32)), from(40));
    try {
      const addr = multiaddr(inv.ticket.addrs.find((a) => !a.includes('/ws'))!);
      const opened = await Promise.allSettled(Array.from({ length: 10 }, () => peer.dialProtocol(addr, SESSION_PROTOCOL)));
      const streams = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value as unknown as ByteStream] : []));
      count(attack, 'session streams tried', 10);
      count(attack, 'session streams the peer got', streams.length);
      for (const [k, s] of streams.entries()) {
        const t = new LineTransport(s, { heartbeatIntervalMs: 0 });
        try {
          if (k === 0) t.send('x'.repeat(1 << 20));
          else for (let n = 0; n < 50; n++) t.send(n % 2 ? '{"_session_init":true}' : `{"junk":${n}}`);
        } catch {
          // closed by the host meanwhile
        }
        count(attack, 'session lines', k === 0 ? 1 : 50);
      }
      await until(() => peer.getConnections().length === 0, 'the host to drop the flooding peer', CLOSE_WITHIN_MS);
    } finally {
      await peer.stop();
    }
    await allClosed(socks, 'flooding connection');
    expect(alive(h.child), h.output()).toBe(true);
    await realGuestPlays(inv, attack);
  }, 120_000);

  it('idle sockets: hundreds of TCP and WebSocket sockets and Noise-complete peers that say nothing', async () => {
    const attack = 'idle sockets';
    const socks: Raw[] = [];
    for (let ip = 0; ip < 4; ip++) {
      await batched(30, 15, async () => void socks.push(await raw(tcpPort, from(50 + ip))));
      await batched(30, 15, async () => void socks.push(await raw(wsPort, from(50 + ip))));
      await batched(5, 5, async () => void socks.push(await wsUpgraded(wsPort, from(50 + ip))));
    }
    count(attack, 'sockets', socks.length);
    const peers: Libp2p[] = await Promise.all([0, 1, 2].map((i) => peerFrom(globalThis.crypto.getRandomValues(new Uint8Array(32)), from(60 + i))));
    try {
      const addr = multiaddr(inv.ticket.addrs.find((a) => !a.includes('/ws'))!);
      await peers[0]!.dial(addr);
      await peers[1]!.dial(addr);
      await peers[2]!.dialProtocol(addr, SESSION_PROTOCOL); // a session stream, never used
      count(attack, 'Noise-complete idle peers', peers.length);
      // The guest plays while the idle sockets are held.
      count(attack, 'still open when the guest joined', socks.filter((r) => !r.closed).length);
      await realGuestPlays(inv, attack);
      await allClosed(socks, 'idle socket');
      await until(() => peers.every((p) => p.getConnections().length === 0), 'the host to drop the idle peers', CLOSE_WITHIN_MS);
      count(attack, 'closed by the host', socks.length + peers.length);
    } finally {
      await Promise.all(peers.map((p) => p.stop()));
    }
    expect(alive(h.child), h.output()).toBe(true);
    await realGuestPlays(inv, attack);
  }, 120_000);
});

describe('slot squatting against a single-session host', () => {
  it('peers that know IP:port (and the peer id) but not the invitation never take the slot, while silent ones and idle sockets wait beside it', async () => {
    const attack = 'slot squatting (aigenora host)';
    const h = await hostProcess(join(dir, 'carol'), [
      '--protocol',
      'coin-flip-v1',
      '--options',
      '{"best_of":1}',
      '--handshake-timeout-seconds',
      String(DEADLINE_S),
    ]);
    const peers: Libp2p[] = [];
    const socks: Raw[] = [];
    try {
      const inv = parseInvitation(c, h.invitation);
      const addr = multiaddr(inv.ticket.addrs.find((a) => !a.includes('/ws'))!);
      const failed = () => (h.output().match(/\(handshake_failed: HANDSHAKE_(BAD_SIGNATURE|KEY_MISMATCH)\)/g) ?? []).length;
      for (let i = 0; i < 12; i++) {
        const seedBytes = globalThis.crypto.getRandomValues(new Uint8Array(32));
        const p = await peerFrom(seedBytes, from(70 + i));
        peers.push(p);
        const t = new LineTransport((await p.dialProtocol(addr, SESSION_PROTOCOL)) as unknown as ByteStream, { heartbeatIntervalMs: 0 });
        const nonce = (i + 16).toString(16).repeat(16).slice(0, 16);
        const init = JSON.parse(signedInit(inv, seedBytes, nonce).line) as Record<string, unknown>;
        if (i % 4 === 0) continue; // silent
        if (i % 4 === 1) delete init['guest_signature'];
        if (i % 4 === 2) init['guest_signature'] = JSON.parse(signedInit(inv, seedBytes, nonce, '0'.repeat(16)).line).guest_signature; // a guessed post_id
        if (i % 4 === 3) init['guest_public_key'] = JSON.parse(signedInit(inv, new Uint8Array(32).fill(i), nonce).line).guest_public_key; // another key
        t.send(JSON.stringify(init));
        count(attack, 'session inits');
      }
      for (let i = 0; i < 4; i++) socks.push(await raw(portOf(inv, i % 2 ? 'ws' : 'tcp'), from(90 + i)));
      count(attack, 'libp2p squatters', peers.length);
      count(attack, 'idle sockets', socks.length);
      await until(() => failed() === 9, 'the nine squatters with a bad init to be refused');
      // The silent squatters and the idle sockets are still there: the guest plays anyway.
      await realGuestPlays(inv, attack);
      expect(await h.exited).toBe(0);
      expect(h.output()).toContain('session completed');
    } finally {
      if (alive(h.child)) h.child.kill('SIGKILL');
      await Promise.all(peers.map((p) => p.stop()));
    }
  }, 120_000);

  it('an invitation holder that claims the slot with a signed init and stalls holds it only until the handshake deadline', async () => {
    const attack = 'slot held by a stalling invitation holder';
    const out = tempDir('hostile');
    const h = await host({
      crypto: c,
      seed: globalThis.crypto.getRandomValues(new Uint8Array(32)),
      protocol: coinFlip,
      options: { best_of: 1 },
      sessionsDir: join(out, 'h'),
      handshakeTimeoutMs: DEADLINE_S * 1000,
    });
    const squatterSeed = globalThis.crypto.getRandomValues(new Uint8Array(32));
    const squatter = await peerFrom(squatterSeed, from(100));
    try {
      const t = new LineTransport((await squatter.dialProtocol(multiaddr(h.invitation.ticket.addrs[0]!), SESSION_PROTOCOL)) as unknown as ByteStream, {
        heartbeatIntervalMs: 0,
      });
      t.send(signedInit(h.invitation, squatterSeed, '55'.repeat(8)).line);
      expect(JSON.parse((await t.recv(5_000)).line ?? '{}')).toMatchObject({ _session_proof: true });
      // Refused while the holder has the slot, then served once its deadline passes; bounded tries.
      let refused = 0;
      for (let tries = 0; tries < 40; tries++) {
        try {
          await realGuestPlays(parseInvitation(c, h.text), attack);
          break;
        } catch (e) {
          if ((e as { code?: string }).code !== 'HANDSHAKE_REFUSED') throw e;
          refused++;
          await until(() => h.active() === 0, 'the stalled holder to lose the slot', CLOSE_WITHIN_MS);
        }
      }
      count(attack, 'guest attempts refused while held', refused);
      expect(refused).toBeGreaterThan(0);
      expect(tally[attack]?.['real guest completed']).toBe(1);
      expect((await h.done).completed).toBe(true);
    } finally {
      await squatter.stop();
      await h.stop();
    }
  }, 60_000);
});
