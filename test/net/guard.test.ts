// The socket guard on a plain TCP server over loopback: per-address and total caps, the deadline,
// release on authentication, and how remote addresses are grouped.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { addressGroup, SocketGuard } from '../../ts/net/guard.js';
import { raw, until, type Raw } from './helpers.js';

const servers: net.Server[] = [];
const sockets: Raw[] = [];
afterEach(async () => {
  for (const r of sockets.splice(0)) r.socket.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A server that keeps whatever it accepts, guarded. */
async function guarded(limits: ConstructorParameters<typeof SocketGuard>[0]) {
  const server = net.createServer(() => undefined);
  const guard = new SocketGuard(limits);
  guard.attach(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return { guard, port: (server.address() as net.AddressInfo).port };
}

async function open(port: number, from: string, n: number): Promise<Raw[]> {
  const out: Raw[] = [];
  for (let i = 0; i < n; i++) out.push(await raw(port, from));
  sockets.push(...out);
  return out;
}

describe('SocketGuard', () => {
  it('holds at most perAddress unauthenticated sockets per remote address; other addresses are unaffected', async () => {
    const { guard, port } = await guarded({ perAddress: 3, total: 100, deadlineMs: 60_000 });
    const a = await open(port, '127.0.0.2', 6);
    await until(() => a.filter((r) => r.closed).length === 3, 'three refusals');
    expect(a.slice(0, 3).every((r) => !r.closed)).toBe(true);
    const b = await open(port, '127.0.0.3', 3);
    await until(() => guard.stats().accepted === 6, 'the second address to be accepted');
    expect(b.every((r) => !r.closed)).toBe(true);
    expect(guard.stats()).toMatchObject({ accepted: 6, refused: 3, pending: 6 });
    guard.close();
  });

  it('holds at most `total` unauthenticated sockets over all addresses', async () => {
    const { guard, port } = await guarded({ perAddress: 10, total: 4, deadlineMs: 60_000 });
    const socks = [...(await open(port, '127.0.0.4', 3)), ...(await open(port, '127.0.0.5', 3))];
    await until(() => socks.filter((r) => r.closed).length === 2, 'two refusals');
    expect(guard.stats()).toMatchObject({ accepted: 4, refused: 2, pending: 4 });
    guard.close();
  });

  it('closes a socket that is not authenticated by the deadline, and frees its place', async () => {
    const { guard, port } = await guarded({ perAddress: 1, total: 10, deadlineMs: 300 });
    const [first] = await open(port, '127.0.0.6', 1);
    await until(() => first!.closed, 'the deadline to close the idle socket');
    expect(guard.stats()).toMatchObject({ expired: 1, pending: 0 });
    const [second] = await open(port, '127.0.0.6', 1);
    await until(() => guard.stats().accepted === 2, 'the next socket from the same address to be accepted');
    expect(second!.closed).toBe(false);
    guard.close();
  });

  it('an authenticated socket leaves the caps and the deadline', async () => {
    const { guard, port } = await guarded({ perAddress: 1, total: 10, deadlineMs: 400 });
    const [s] = await open(port, '127.0.0.7', 1);
    await until(() => guard.stats().pending === 1, 'the socket to be admitted');
    expect(guard.authenticate('127.0.0.7', s!.socket.localPort!)).toBe(true);
    expect(guard.stats()).toMatchObject({ authenticated: 1, pending: 0 });
    // The address has its place back while the authenticated socket stays open past the deadline.
    const [other] = await open(port, '127.0.0.7', 1);
    await until(() => other!.closed, 'the unauthenticated one to expire');
    expect(s!.closed).toBe(false);
    expect(guard.authenticate('127.0.0.7', 1)).toBe(false);
    guard.close();
  });

  it('close() ends every unauthenticated socket and refuses new ones (a listener waiting on a silent socket could not stop)', async () => {
    const { guard, port } = await guarded({ perAddress: 5, total: 10, deadlineMs: 60_000 });
    const held = await open(port, '127.0.0.8', 3);
    await until(() => guard.stats().pending === 3, 'the sockets to be admitted');
    guard.close();
    await until(() => held.every((r) => r.closed), 'close() to end them');
    const [late] = await open(port, '127.0.0.8', 1);
    await until(() => late!.closed, 'a socket after close() to be refused');
    expect(guard.stats()).toMatchObject({ accepted: 3, refused: 1, pending: 0 });
  });

  it('groups IPv4 by address (mapped or not) and IPv6 by /64', () => {
    expect(addressGroup('127.0.0.2')).toBe('127.0.0.2');
    expect(addressGroup('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(addressGroup('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:db8:1:2:ffff:ffff:ffff:fffe')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressGroup('::1')).toBe('0:0:0:0::/64');
    expect(addressGroup('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });
});
