/**
 * Socket hygiene for the host's listeners, ahead of libp2p. Anyone who knows IP:port can open
 * sockets, so until a socket carries an authenticated session (WebSocket upgrade, Noise, Yamux and the
 * session handshake all done) it is pending: it must get there before a deadline of a few seconds or
 * it is closed, and it counts against a cap per remote address and one in total. Authenticated
 * sockets leave both caps and the deadline. Every socket gets an error listener: a reset or refused
 * socket is ordinary traffic, never an uncaught exception.
 *
 * A full cap never refuses the new socket: it closes the pending socket that has got least far, idle
 * longest, and admits the new one. Refusing would let whoever holds an address's sockets keep
 * everyone else on it out: sockets that say nothing and reopen as soon as they are closed kept a real
 * guest behind the same NAT out for as long as the attacker liked (issue 37). A real guest speaks as
 * soon as it connects and keeps talking until its session is authenticated, so sockets that say
 * nothing, or stalled, go before it:
 *
 * - A newcomer has one turn (turnMs) to speak before it counts against its address's cap: a burst of
 *   new sockets, however large, cannot close one that is already talking. Until then it counts only
 *   against the total.
 * - Past the per-address cap, the socket closed is one of the address's, outside that first turn:
 *   silent ones first, then those that have spoken (a WebSocket upgrade, multistream-select, Noise
 *   under way) idle longest, and those libp2p has secured (Noise done) last.
 * - Past the total cap, the socket closed is one of the address holding most, newcomers (oldest
 *   first) after silent ones and before those that have spoken.
 *
 * What is left: an attacker on the guest's own address that keeps opening sockets which do speak, and
 * then stall, can close a guest that stays silent (waiting on its own network) for longer than the
 * attacker needs to open as many sockets as the cap holds. From another address it cannot.
 */
import type { Server, Socket } from 'node:net';

export interface GuardLimits {
  /** Pending sockets one remote address (an IPv6 /64: one host's share) may hold past their first turn. */
  perAddress: number;
  /** Pending sockets the host holds at once, over all listeners and addresses. */
  total: number;
  /** From accept to an authenticated session. */
  deadlineMs: number;
  /**
   * One turn of a handshake, generously: a client speaks as soon as it has connected (a libp2p dialer
   * its multistream-select header, a WebSocket client its upgrade request), and the host answers a
   * complete message within milliseconds even when loaded.
   */
  turnMs: number;
}

export const DEFAULT_GUARD_LIMITS: GuardLimits = { perAddress: 8, total: 96, deadlineMs: 10_000, turnMs: 1_000 };

export interface GuardStats {
  accepted: number;
  /** Closed on arrival: the guard is closed. */
  refused: number;
  /** Closed to make room for a newer socket (see the policy above). */
  evicted: number;
  expired: number;
  authenticated: number;
  /** Pending sockets open now. */
  pending: number;
}

interface Pending {
  address: string;
  group: string;
  port: number;
  /** The deadline, and the end of its first turn. */
  timers: ReturnType<typeof setTimeout>[];
  accepted: number;
  /** Until its first turn is over (a timer, not a clock reading: so that it is over when the timer says). */
  firstTurn: boolean;
  /** libp2p has opened a connection on it: Noise and the muxer are done, the session handshake is not. */
  secured: boolean;
  /** socket.bytesRead and socket.bytesWritten when last looked at. */
  read: number;
  written: number;
  /** When it was last seen to move: accepted, spoke, or was answered. */
  since: number;
  /** It spoke after the host last wrote: the next move is the host's. */
  owed: boolean;
}

/** How far a pending socket has got, lowest closed first. */
const LEVEL = { silent: 0, newcomer: 1, talking: 2, secured: 3 } as const;

function level(p: Pending): number {
  if (p.secured) return LEVEL.secured;
  if (p.read > 0) return LEVEL.talking;
  return p.firstTurn ? LEVEL.newcomer : LEVEL.silent;
}

/**
 * Its own silence: time spent waiting for the host's answer does not count (for up to a turn), or a
 * guest whose message the busy host has not yet answered would go before a socket that stalled
 * after its answer; a peer that sent an incomplete message and stopped is idle after that turn.
 */
const idle = (p: Pending, now: number, turnMs: number) => (p.owed ? Math.max(0, now - p.since - turnMs) : now - p.since);

/** Whether `a` should be closed before `b`. */
function before(a: { level: number; idle: number; bytes: number; since: number }, b: typeof a): boolean {
  if (a.level !== b.level) return a.level < b.level;
  // Newcomers by age, oldest first; the others by their own silence.
  if (a.idle !== b.idle) return a.idle > b.idle;
  // Seen to move at the same look: the one that has exchanged less has got less far.
  if (a.bytes !== b.bytes) return a.bytes < b.bytes;
  return a.since < b.since;
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
  return `${groups
    .slice(0, 4)
    .map((g) => (parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}
const ignore = () => undefined;

export class SocketGuard {
  readonly limits: GuardLimits;
  private readonly pending = new Map<Socket, Pending>();
  /** The pending sockets of each address group, in the order they were accepted. */
  private readonly groups = new Map<string, Set<Socket>>();
  private readonly byEndpoint = new Map<string, Socket>();
  private readonly counts = { accepted: 0, refused: 0, evicted: 0, expired: 0, authenticated: 0 };
  private closed = false;

  constructor(limits: Partial<GuardLimits> = {}) {
    this.limits = { ...DEFAULT_GUARD_LIMITS, ...limits };
    // A cap of zero would leave nothing to close to make room for a new socket.
    if (!(this.limits.perAddress >= 1 && this.limits.total >= 1)) throw new RangeError('socket guard: perAddress and total must be at least 1');
  }

  /** Watches a listener's server; runs before the listener's own connection handler. */
  attach(server: Server): void {
    server.prependListener('connection', (socket: Socket) => this.admit(socket));
  }

  stats(): GuardStats {
    return { ...this.counts, pending: this.pending.size };
  }

  /**
   * Marks the socket behind a connection libp2p has just opened (Noise and the muxer done; named by
   * the remote address and port libp2p reports) as secured: it is closed to make room only after
   * every unsecured socket of its address. It stays pending, under the deadline.
   */
  secured(address: string, port: number): boolean {
    const socket = this.byEndpoint.get(key(address, port));
    const p = socket && this.pending.get(socket);
    if (!p) return false;
    Object.assign(p, { secured: true, since: performance.now(), owed: false });
    return true;
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
   * Closes every pending socket and refuses new ones. libp2p's WebSocket listener only tracks a
   * socket once it has sent a byte, so without this a silent one keeps its server (and the node's
   * stop) open.
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
    if (this.closed) {
      this.counts.refused++;
      // With an error, so that a listener still waiting for the socket's first byte stops waiting.
      socket.destroy(new Error('the host is stopping'));
      return;
    }
    const address = plain(socket.remoteAddress);
    const group = addressGroup(address);
    const now = performance.now();
    // Each eviction frees one place, and the largest group is never empty while any socket is pending.
    while (this.pending.size >= this.limits.total) this.evict(this.largestGroup(), now, true);
    this.counts.accepted++;
    const deadline = setTimeout(() => {
      if (!this.pending.has(socket)) return;
      this.counts.expired++;
      socket.destroy(new Error('no authenticated session before the deadline'));
    }, this.limits.deadlineMs);
    // When its first turn is over it counts against its address's share: if it is still silent and the
    // share is full, it is closed then, not at the address's next arrival.
    const turn = setTimeout(() => {
      const p = this.pending.get(socket);
      const m = this.groups.get(group);
      if (!p || !m) return;
      p.firstTurn = false;
      this.balance(group, m, performance.now());
    }, this.limits.turnMs);
    for (const t of [deadline, turn]) t.unref?.();
    this.pending.set(socket, {
      address,
      group,
      port,
      timers: [deadline, turn],
      accepted: now,
      firstTurn: true,
      secured: false,
      read: 0,
      written: 0,
      since: now,
      owed: false,
    });
    let members = this.groups.get(group);
    if (!members) this.groups.set(group, (members = new Set()));
    members.add(socket);
    this.byEndpoint.set(key(address, port), socket);
    socket.once('close', () => this.release(socket));
    this.balance(group, members, now);
  }

  /** Brings the address's share back to its cap (newcomers in their first turn do not count). */
  private balance(group: string, members: Set<Socket>, now: number): void {
    let counted = 0;
    for (const socket of members) {
      const p = this.pending.get(socket)!;
      this.look(socket, p, now);
      if (level(p) !== LEVEL.newcomer) counted++;
    }
    for (; counted > this.limits.perAddress; counted--) this.evict(group, now, false);
  }

  /** The address holding the most pending sockets (the first such, when several hold as many). */
  private largestGroup(): string | undefined {
    let best: string | undefined;
    let most = 0;
    for (const [group, members] of this.groups) {
      if (members.size > most) {
        best = group;
        most = members.size;
      }
    }
    return best;
  }

  /** Closes the socket of `group` to go first (see `before`): for the total cap, newcomers too. */
  private evict(group: string | undefined, now: number, newcomers: boolean): void {
    let victim: Socket | undefined;
    let worst: Parameters<typeof before>[0] | undefined;
    for (const socket of (group !== undefined && this.groups.get(group)) || []) {
      const p = this.pending.get(socket)!;
      this.look(socket, p, now);
      const l = level(p);
      if (l === LEVEL.newcomer && !newcomers) continue;
      const rank = { level: l, idle: l === LEVEL.newcomer ? now - p.accepted : idle(p, now, this.limits.turnMs), bytes: p.read + p.written, since: p.since };
      if (!worst || before(rank, worst)) {
        victim = socket;
        worst = rank;
      }
    }
    if (!victim) throw new Error(`socket guard: no pending socket of ${String(group)} to close`);
    this.counts.evicted++;
    // Released now, not on its 'close' event, so that its place is counted free at once.
    this.release(victim);
    victim.destroy(new Error('too many pending connections from this address'));
  }

  /**
   * Brings what the guard knows of a socket's traffic up to date. The guard sees no data events (a
   * listener of its own would switch the socket to flowing mode under libp2p), so it reads the
   * socket's byte counts whenever it must choose: a count that moved since the last look moved now.
   * When both moved, the host is taken to have answered last (it answers as it reads).
   */
  private look(socket: Socket, p: Pending, now: number): void {
    const read = socket.bytesRead;
    const written = socket.bytesWritten;
    if (written !== p.written) Object.assign(p, { read, written, since: now, owed: false });
    else if (read !== p.read) Object.assign(p, { read, since: now, owed: true });
  }

  private release(socket: Socket): void {
    const p = this.pending.get(socket);
    if (!p) return;
    for (const t of p.timers) clearTimeout(t);
    this.pending.delete(socket);
    const members = this.groups.get(p.group);
    members?.delete(socket);
    if (members?.size === 0) this.groups.delete(p.group);
    if (this.byEndpoint.get(key(p.address, p.port)) === socket) this.byEndpoint.delete(key(p.address, p.port));
  }
}
