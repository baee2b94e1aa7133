/**
 * Socket hygiene for the host's listeners, ahead of libp2p. Anyone who knows IP:port can open
 * sockets, so until a socket carries an authenticated session (WebSocket upgrade, Noise, Yamux and the
 * session handshake all done) it counts against two caps — per remote address and in total — and it
 * must get there before a deadline of a few seconds, or it is closed. Authenticated sockets leave
 * both caps and the deadline. Every socket gets an error listener: a reset or refused socket is
 * ordinary traffic, never an uncaught exception.
 */
import type { Server, Socket } from 'node:net';

export interface GuardLimits {
  /** Unauthenticated sockets one remote address (an IPv6 /64: one host's share) may hold at once. */
  perAddress: number;
  /** Unauthenticated sockets the host holds at once, over all listeners. */
  total: number;
  /** From accept to an authenticated session. */
  deadlineMs: number;
}

export const DEFAULT_GUARD_LIMITS: GuardLimits = { perAddress: 8, total: 256, deadlineMs: 10_000 };

export interface GuardStats {
  accepted: number;
  refused: number;
  expired: number;
  authenticated: number;
  /** Unauthenticated sockets open now. */
  pending: number;
}

// A dual-stack listener reports IPv4 peers as ::ffff:a.b.c.d; libp2p may name them either way.
const plain = (address: string) => (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address);
const key = (address: string, port: number) => `${plain(address)} ${port}`;

/** What one remote host is counted as: its IPv4 address, or the /64 of its IPv6 address. */
export function addressGroup(address: string): string {
  const a = plain(address).replace(/%.*$/, '').toLowerCase();
  if (!a.includes(':')) return a;
  const [head = '', tail] = a.split('::');
  const h = head ? head.split(':') : [];
  const t = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t];
  return `${groups.slice(0, 4).map((g) => (parseInt(g, 16) || 0).toString(16)).join(':')}::/64`;
}
const ignore = () => undefined;

export class SocketGuard {
  readonly limits: GuardLimits;
  private readonly pending = new Map<Socket, { address: string; group: string; port: number; timer: ReturnType<typeof setTimeout> }>();
  private readonly perAddress = new Map<string, number>();
  private readonly byEndpoint = new Map<string, Socket>();
  private readonly counts = { accepted: 0, refused: 0, expired: 0, authenticated: 0 };
  private closed = false;

  constructor(limits: Partial<GuardLimits> = {}) {
    this.limits = { ...DEFAULT_GUARD_LIMITS, ...limits };
  }

  /** Watches a listener's server; runs before the listener's own connection handler. */
  attach(server: Server): void {
    server.prependListener('connection', (socket: Socket) => this.admit(socket));
  }

  stats(): GuardStats {
    return { ...this.counts, pending: this.pending.size };
  }

  /**
   * Releases the socket behind an authenticated session (named by the remote address and port that
   * libp2p reports for its connection) from the caps and the deadline.
   */
  authenticate(address: string, port: number): boolean {
    const socket = this.byEndpoint.get(key(address, port));
    if (!socket) return false;
    this.release(socket);
    this.counts.authenticated++;
    return true;
  }

  /**
   * Closes every unauthenticated socket and refuses new ones. libp2p's WebSocket listener only
   * tracks a socket once it has sent a byte, so without this a silent one keeps its server (and
   * the node's stop) open.
   */
  close(): void {
    this.closed = true;
    for (const socket of [...this.pending.keys()]) socket.destroy(new Error('the host is stopping'));
  }

  private admit(socket: Socket): void {
    socket.on('error', ignore);
    const port = socket.remotePort;
    if (socket.remoteAddress === undefined || port === undefined) {
      socket.destroy();
      return;
    }
    const address = plain(socket.remoteAddress);
    const group = addressGroup(address);
    const held = this.perAddress.get(group) ?? 0;
    if (this.closed || held >= this.limits.perAddress || this.pending.size >= this.limits.total) {
      this.counts.refused++;
      // With an error, so that a listener still waiting for the socket's first byte stops waiting.
      socket.destroy(new Error('too many unauthenticated connections'));
      return;
    }
    this.counts.accepted++;
    const timer = setTimeout(() => {
      if (!this.pending.has(socket)) return;
      this.counts.expired++;
      socket.destroy(new Error('no authenticated session before the deadline'));
    }, this.limits.deadlineMs);
    timer.unref?.();
    this.pending.set(socket, { address, group, port, timer });
    this.perAddress.set(group, held + 1);
    this.byEndpoint.set(key(address, port), socket);
    socket.once('close', () => this.release(socket));
  }

  private release(socket: Socket): void {
    const p = this.pending.get(socket);
    if (!p) return;
    clearTimeout(p.timer);
    this.pending.delete(socket);
    const held = (this.perAddress.get(p.group) ?? 1) - 1;
    if (held > 0) this.perAddress.set(p.group, held);
    else this.perAddress.delete(p.group);
    if (this.byEndpoint.get(key(p.address, p.port)) === socket) this.byEndpoint.delete(key(p.address, p.port));
  }
}
