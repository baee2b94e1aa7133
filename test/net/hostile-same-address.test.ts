// Idle-socket attacks that keep their sockets open (each reopens 50 ms after the host closes it), from
// the guest's own address and from others, against a running host: a real guest must still get
// through, over TCP and over WebSocket, within a bound. Issue 37 item 2: ten such sockets from the
// guest's address used to keep it out (the per-address rate limit and the per-address cap refused the
// guest's connections along with the attacker's). The host sees the guest as 127.0.0.1 (the library
// `join` dials from there), so an attacker on 127.0.0.1 shares its address, as behind a NAT, and ones on
// 127.0.0.2 and up are other hosts (Linux routes all of 127/8 to lo). The host runs in this process
// with its default limits and handshake deadline.
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseInvitation, type Invitation } from '../../ts/net/invitation.js';
import { host, join as joinSession, type HostHandle, type Protocol } from '../../ts/net/session.js';
import { tempDir } from '../shared/tmp.js';
import { c } from '../engine/harness.js';
import { portOf, protocol, until } from './helpers.js';

/** How long a real guest may take, accept to finished coin flip, while an attack runs. */
const GUEST_WITHIN_MS = 8_000;
const UPGRADE =
  'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n';

interface Attack {
  /** Sockets the attacker holds open now. */
  open(): number;
  /** Sockets the host has closed so far (each one reopened 50 ms later). */
  closedByHost(): number;
  stop(): void;
}

/** A libp2p dialer's first words (multistream-select), after which these attackers stall. */
const MULTISTREAM = '\x13/multistream/1.0.0\n';

/**
 * Keeps `n` sockets to `port` from `localAddress` open, saying nothing (or only `hello`: a WebSocket
 * upgrade request, the start of a libp2p dial), and opens a new one 50 ms after the host closes any.
 */
function idleSockets(port: number, localAddress: string, n: number, hello?: string): Attack {
  const live = new Set<net.Socket>();
  let stopped = false;
  let closed = 0;
  const open = () => {
    if (stopped) return;
    const s = net.connect({ host: '127.0.0.1', port, localAddress });
    live.add(s);
    s.on('error', () => undefined);
    s.resume();
    if (hello) s.once('connect', () => s.write(hello));
    s.once('close', () => {
      live.delete(s);
      if (stopped) return;
      closed++;
      setTimeout(open, 50).unref();
    });
  };
  for (let i = 0; i < n; i++) open();
  return {
    open: () => [...live].filter((s) => !s.connecting && !s.destroyed).length,
    closedByHost: () => closed,
    stop: () => {
      stopped = true;
      for (const s of live) s.destroy();
    },
  };
}

let coinFlip: Protocol;
let h: HostHandle;
let inv: Invitation;
let guests = 0;
const dir = tempDir('hostile-same-address');

beforeAll(async () => {
  coinFlip = await protocol('coin-flip');
  // The default handshake deadline (10 s) and guard limits, as `aigenora host --daemon` runs it.
  h = await host({
    crypto: c,
    seed: globalThis.crypto.getRandomValues(new Uint8Array(32)),
    protocol: coinFlip,
    options: { best_of: 1 },
    sessionsDir: join(dir, 'h'),
    daemon: true,
  });
  inv = parseInvitation(c, h.text);
}, 30_000);

afterAll(async () => {
  await h?.stop();
});

/**
 * From `address`: ten silent sockets to each port, five that start a libp2p dial and stall, five
 * upgraded WebSockets that say nothing more.
 */
function attackFrom(address: string): Attack[] {
  const tcp = portOf(inv, 'tcp');
  const ws = portOf(inv, 'ws');
  return [idleSockets(tcp, address, 10), idleSockets(tcp, address, 5, MULTISTREAM), idleSockets(ws, address, 10), idleSockets(ws, address, 5, UPGRADE)];
}

/** A real guest (from 127.0.0.1) plays a whole session over one kind of address, within the bound. */
async function guestPlays(kind: 'tcp' | 'ws'): Promise<number> {
  const addrs = inv.ticket.addrs.filter((a) => (kind === 'ws' ? a.includes('/ws') : !a.includes('/ws')));
  const started = Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`the guest over ${kind} did not finish within ${GUEST_WITHIN_MS} ms`)), GUEST_WITHIN_MS)),
  );
  try {
    const g = await Promise.race([
      joinSession({
        crypto: c,
        seed: globalThis.crypto.getRandomValues(new Uint8Array(32)),
        protocol: coinFlip,
        options: {},
        sessionsDir: join(dir, `guest-${++guests}`),
        invitation: { ...inv, ticket: { ...inv.ticket, addrs } },
        handshakeTimeoutMs: GUEST_WITHIN_MS,
      }),
      bound,
    ]);
    expect(g.completed, `the guest over ${kind}: ${g.reason} ${g.detail ?? ''}`).toBe(true);
  } finally {
    clearTimeout(timer);
  }
  return Date.now() - started;
}

/** Runs the attack from `addresses` while guests join; answers the most sockets the host held meanwhile. */
async function underAttack(...addresses: string[]): Promise<number> {
  const attacks = addresses.flatMap(attackFrom);
  const open = () => attacks.reduce((n, a) => n + a.open(), 0);
  const closed = () => attacks.reduce((n, a) => n + a.closedByHost(), 0);
  let held = 0;
  const watch = setInterval(() => (held = Math.max(held, h.guard.stats().pending)), 5);
  try {
    // The attack is in full swing: the host holds what it allows and closes the rest, which reopen.
    await until(() => closed() >= 20 && open() > h.guard.limits.perAddress, `the attack from ${addresses.join(', ')} to settle`);
    // The guests join while the attack holds more sockets than an address's share.
    expect(open()).toBeGreaterThan(h.guard.limits.perAddress);
    const times: string[] = [];
    for (const kind of ['tcp', 'ws', 'tcp', 'ws'] as const) times.push(`${kind} ${await guestPlays(kind)} ms`);
    expect(open()).toBeGreaterThan(h.guard.limits.perAddress);
    console.log(
      `attack from ${addresses.join(', ')}: guests ${times.join(', ')}; attacker sockets closed by the host ${closed()}, open at the end ${open()}, most held by the host ${held}; guard ${JSON.stringify(h.guard.stats())}`,
    );
    return held;
  } finally {
    clearInterval(watch);
    for (const a of attacks) a.stop();
  }
}

describe('idle sockets that reopen at once do not keep a guest out', () => {
  it("from the guest's own address (a NAT, a shared host)", async () => {
    await underAttack('127.0.0.1');
  }, 30_000);

  it('from other addresses, with more sockets than the host holds in all', async () => {
    const held = await underAttack('127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5');
    // 120 attacking sockets: the host was at its total cap, closing attackers' sockets to admit guests.
    expect(held).toBe(h.guard.limits.total);
  }, 30_000);
});
