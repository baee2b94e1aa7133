// The socket guard on a plain TCP server over loopback: per-address and total caps (which close the
// pending socket that has got least far to admit a new one, never a newcomer in its first turn for the
// per-address one), the deadline, release on authentication, and how remote addresses are grouped.
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
  const held: net.Socket[] = [];
  const server = net.createServer((s) => void held.push(s));
  const guard = new SocketGuard(limits);
  guard.attach(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  const serverSide = (r: Raw) => held.find((s) => s.remotePort === r.socket.localPort);
  /** Until the server has read `n` bytes from the client socket `r`. */
  const read = (r: Raw, n: number) => until(() => (serverSide(r)?.bytesRead ?? 0) >= n, 'the server to read what was sent');
  /** The server answers `r`. */
  const answer = (r: Raw) => serverSide(r)!.write('ok');
  return { guard, port: (server.address() as net.AddressInfo).port, read, answer };
}

async function open(port: number, from: string, n: number): Promise<Raw[]> {
  const out: Raw[] = [];
  for (let i = 0; i < n; i++) out.push(await raw(port, from));
  sockets.push(...out);
  return out;
}

describe('SocketGuard', () => {
  it('admits every new socket; past its first turn an address holds at most perAddress, its oldest silent ones closed; other addresses are unaffected', async () => {
    const { guard, port } = await guarded({ perAddress: 3, total: 100, deadlineMs: 60_000, turnMs: 500 });
    const a = await open(port, '127.0.0.2', 6);
    // A full share never refuses whoever arrives (issue 37): all six are in their first turn.
    await until(() => guard.stats().accepted === 6, 'all six to be accepted');
    expect(a.some((r) => r.closed)).toBe(false);
    await until(() => a.filter((r) => r.closed).length === 3, 'three silent past their turn to be closed');
    expect(a.map((r) => r.closed)).toEqual([true, true, true, false, false, false]);
    const b = await open(port, '127.0.0.3', 3);
    await until(() => guard.stats().accepted === 9, 'the second address to be accepted');
    expect(b.every((r) => !r.closed)).toBe(true);
    expect(a.slice(3).every((r) => !r.closed)).toBe(true);
    expect(guard.stats()).toMatchObject({ accepted: 9, evicted: 3, refused: 0, pending: 6 });
    guard.close();
  });

  it('holds at most `total` pending sockets, closing one of the address holding most to admit a new one', async () => {
    const { guard, port } = await guarded({ perAddress: 10, total: 4, deadlineMs: 60_000 });
    const first = await open(port, '127.0.0.4', 3);
    await until(() => guard.stats().pending === 3, 'the first address to be admitted');
    const second = await open(port, '127.0.0.5', 3);
    await until(() => first.filter((r) => r.closed).length === 2, 'two evictions from the first address');
    // Each newcomer took the place of the oldest socket of the address that held the most.
    expect(first.map((r) => r.closed)).toEqual([true, true, false]);
    expect(second.every((r) => !r.closed)).toBe(true);
    expect(guard.stats()).toMatchObject({ accepted: 6, evicted: 2, pending: 4 });
    guard.close();
  });

  it('a burst of new sockets from the same address does not close one that is talking', async () => {
    const { guard, port, read } = await guarded({ perAddress: 1, total: 100, deadlineMs: 60_000, turnMs: 500 });
    const [talker] = await open(port, '127.0.0.10', 1);
    talker!.socket.write('hello');
    await read(talker!, 5);
    const burst = await open(port, '127.0.0.10', 12);
    await until(() => guard.stats().accepted === 13, 'the burst to be accepted');
    expect(talker!.closed).toBe(false);
    // Past their first turn, the silent ones are closed, and the talker still is not.
    await until(() => burst.every((r) => r.closed), 'the silent burst to be closed after its turn');
    expect(talker!.closed).toBe(false);
    expect(guard.stats()).toMatchObject({ evicted: 12, pending: 1 });
    guard.close();
  });

  it('closes silent sockets first, then those idle longest (waiting on the host counts for one turn), and secured ones last', async () => {
    const { guard, port, read, answer } = await guarded({ perAddress: 2, total: 100, deadlineMs: 60_000, turnMs: 200 });
    const next = async () => (await open(port, '127.0.0.9', 1))[0]!;
    const s = await next();
    const a = await next();
    a.socket.write('hello');
    await read(a, 5);
    answer(a);
    const b = await next();
    b.socket.write('noise');
    await read(b, 5);
    expect(guard.secured('127.0.0.9', b.socket.localPort!)).toBe(true);
    // s, silent past its turn, goes first, though a and b are over the share with it.
    await until(() => s.closed, 's, silent past its turn, to be closed');
    expect([a.closed, b.closed]).toEqual([false, false]);
    // t speaks and the host has not answered: a, idle since its answer, goes before it.
    const t = await next();
    t.socket.write('x');
    await read(t, 1);
    const x = await next();
    await until(() => a.closed, 'a, idle since it was answered, to be closed');
    expect([b.closed, t.closed, x.closed]).toEqual([false, false, false]);
    // x, silent past its turn, goes next; then, a turn later, t's wait for the host counts against it.
    await until(() => x.closed, 'x, silent past its turn, to be closed');
    const y = await next();
    y.socket.write('y');
    await read(y, 1);
    answer(y);
    await next();
    await until(() => t.closed, 't, owed an answer for over a turn, to be closed before y, just answered');
    expect([b.closed, y.closed]).toEqual([false, false]);
    // (The last newcomer may be closed too by now, once its own turn is over.)
    expect(guard.stats().evicted).toBeGreaterThanOrEqual(4);
    expect(guard.secured('127.0.0.9', 1)).toBe(false);
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

  it('close() ends every pending socket and refuses new ones (a listener waiting on a silent socket could not stop)', async () => {
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
