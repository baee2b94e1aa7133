/**
 * The iroh endpoint the reference speaks (NOTES A7): the npm binding of iroh 0.35 (an optional native
 * dependency, loaded only when asked for), ALPN `/agent-chat/1`, one bidirectional stream per session.
 * The node's secret key is the agent's seed, so its node id is the agent's public key: a guest dialing
 * a ticket whose node id is the invitation's host key reaches only the holder of that key (iroh's QUIC
 * handshake authenticates the node id). Discovery (n0's DNS publishing and local announcements) is off:
 * a ticket carries the direct addresses. iroh still tries its default relays; where none is reachable
 * (a loopback-only namespace) the direct addresses are used.
 */
import { createRequire } from 'node:module';
import type { ByteStream } from './line-transport.js';
import type { NodeAddress } from './iroh-ticket.js';

export const AGENT_CHAT_ALPN = '/agent-chat/1';

export class IrohUnavailable extends Error {
  override readonly name = 'IrohUnavailable';
  readonly code = 'IROH_UNAVAILABLE';
  constructor(message: string) {
    super(`IROH_UNAVAILABLE: ${message}`);
  }
}

/** The slice of the binding this module uses (declared here so the build does not need the optional package). */
interface SendStream {
  writeAll(buf: Uint8Array): Promise<void>;
  finish(): Promise<void>;
  /** Resolves once the peer has read the finished stream to its end (or stopped it). */
  stopped(): Promise<bigint | null>;
  /** Abandons what is unsent and tells the peer the stream was reset. */
  reset(errorCode: bigint): Promise<void>;
}
interface RecvStream {
  read(buf: Uint8Array): Promise<bigint | null>;
}
interface BiStream {
  readonly send: SendStream;
  readonly recv: RecvStream;
}
export interface IrohConnection {
  remoteNodeId(): { toString(): string; toBytes(): number[] };
  openBi(): Promise<BiStream>;
  acceptBi(): Promise<BiStream>;
  close(errorCode: bigint, reason: Uint8Array): void;
}
interface IrohNode {
  readonly net: { nodeAddr(): Promise<{ nodeId: string; relayUrl?: string; addresses?: string[] }> };
  readonly node: {
    shutdown(): Promise<void>;
    endpoint(): { connect(addr: { nodeId: string; relayUrl?: string; addresses?: string[] }, alpn: Uint8Array): Promise<IrohConnection> };
  };
}
interface IrohBinding {
  Iroh: {
    memory(opts: {
      nodeDiscovery?: 'None' | 'Default';
      secretKey?: number[];
      ipv4Addr?: string;
      ipv6Addr?: string;
      protocols?: Record<string, (err: Error | null, ep: unknown) => { accept: (err: Error | null, conn: IrohConnection) => void }>;
    }): Promise<IrohNode>;
  };
}

let loaded: IrohBinding | undefined;

function binding(): IrohBinding {
  if (loaded) return loaded;
  try {
    // The package is CommonJS with a native addon; require() loads it where import() of its
    // (misdeclared) main would warn.
    loaded = createRequire(import.meta.url)('@number0/iroh') as IrohBinding;
    return loaded;
  } catch (e) {
    throw new IrohUnavailable(
      `the iroh binding (@number0/iroh 0.35.0, an optional dependency) cannot be loaded: ${((e as Error)?.message ?? String(e)).split('\n')[0]}`,
    );
  }
}

/** How long a closing stream waits for the peer to have read everything before the node may shut down. */
const DRAIN_MS = 3000;

/**
 * Unsent bytes above which send() reports the stream full (false), as a libp2p stream does above its
 * high-water mark; the line transport then counts the backlog (writeBufferLength) until 'drain' and
 * gives up on a peer that does not read.
 */
const HIGH_WATER = 1 << 20;

/**
 * Adapts an iroh bidirectional stream to the line transport's byte stream. `closing` collects each
 * close, so that a node shutting down first lets the peer read the last lines.
 *
 * With `lingerForPeer` (the accepting side), close waits up to DRAIN_MS for the peer to end its own
 * side before finishing ours: the reference's guest checks for a finished stream before it reads the
 * lines it has already received, so a host that finishes right after its last message can make the
 * guest drop that message and report the session failed.
 */
export function byteStream(
  bi: BiStream,
  closing?: Set<Promise<void>>,
  o: { lingerForPeer?: boolean } = {},
): ByteStream & {
  readonly writeBufferLength: number;
  addEventListener(type: string, l: () => void): void;
  removeEventListener(type: string, l: () => void): void;
} {
  let writing: Promise<void> = Promise.resolve();
  let broken = false;
  // Bytes handed to send() and not yet written; whether send() has said the stream is full since the
  // last 'drain'.
  let pending = 0;
  let full = false;
  const drainListeners = new Set<() => void>();
  let peerEnded!: () => void;
  const peerDone = new Promise<void>((r) => (peerEnded = r));
  const bounded = async (p: Promise<unknown>) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([p, new Promise((r) => (timer = setTimeout(r, DRAIN_MS)))]);
    clearTimeout(timer);
  };
  return {
    async *[Symbol.asyncIterator]() {
      const buf = new Uint8Array(64 << 10);
      for (;;) {
        let n: bigint | null;
        try {
          n = await bi.recv.read(buf);
        } catch (e) {
          peerEnded();
          throw e;
        }
        if (n === null) {
          peerEnded();
          return;
        }
        yield buf.slice(0, Number(n));
      }
    },
    get writeBufferLength() {
      return pending;
    },
    addEventListener(type: string, l: () => void) {
      if (type === 'drain') drainListeners.add(l);
    },
    removeEventListener(type: string, l: () => void) {
      if (type === 'drain') drainListeners.delete(l);
    },
    send(data: Uint8Array): boolean {
      if (broken) throw new Error('stream closed');
      const n = data.length;
      pending += n;
      // Writes are queued in order; a failed write closes the stream for every later one.
      writing = writing
        .then(() => (broken ? undefined : bi.send.writeAll(data)))
        .then(() => {
          pending = Math.max(0, pending - n);
          if (full && pending === 0) {
            full = false;
            for (const l of [...drainListeners]) l();
          }
        })
        .catch(() => {
          broken = true;
        });
      if (pending > HIGH_WATER) full = true;
      return !full;
    },
    abort(): void {
      if (broken) return;
      broken = true;
      pending = 0;
      void bi.send.reset(0n).catch(() => undefined);
    },
    close(): Promise<void> {
      const drain = (async () => {
        // A peer that stopped reading must not hold a closing node forever.
        await bounded(writing);
        if (broken) return;
        broken = true;
        if (o.lingerForPeer) await bounded(peerDone);
        await bi.send.finish().catch(() => undefined);
        await bounded(bi.send.stopped().catch(() => null));
      })();
      closing?.add(drain);
      return drain;
    },
  };
}

export interface IrohEndpoint {
  /** This node's address: its id (the agent key) and its direct addresses. */
  address(): Promise<NodeAddress>;
  connect(to: NodeAddress): Promise<{ conn: IrohConnection; stream: ByteStream }>;
  shutdown(): Promise<void>;
}

/**
 * Starts an endpoint keyed by `seed`. With `onStream`, it accepts `/agent-chat/1` connections and hands
 * each one's first bidirectional stream over.
 */
export async function createIrohEndpoint(
  seed: Uint8Array,
  o: { bind?: string; onStream?: (stream: ByteStream, conn: IrohConnection) => void } = {},
): Promise<IrohEndpoint> {
  const { Iroh } = binding();
  const onStream = o.onStream;
  const closing = new Set<Promise<void>>();
  const node = await Iroh.memory({
    nodeDiscovery: 'None',
    secretKey: Array.from(seed),
    ...(o.bind && { ipv4Addr: o.bind }),
    ...(onStream && {
      protocols: {
        [AGENT_CHAT_ALPN]: () => ({
          accept: (err: Error | null, conn: IrohConnection) => {
            if (err) return;
            conn.acceptBi().then(
              (bi) => onStream(byteStream(bi, closing, { lingerForPeer: true }), conn),
              () => undefined,
            );
          },
        }),
      },
    }),
  });
  let down = false;
  return {
    async address() {
      const a = await node.net.nodeAddr();
      // The relay is left out: the direct addresses are what a peer without the Internet can dial.
      return { nodeId: a.nodeId, addresses: (a.addresses ?? []).filter((x) => !x.startsWith('[fe80')) };
    },
    async connect(to) {
      const conn = await node.node
        .endpoint()
        .connect({ nodeId: to.nodeId, addresses: to.addresses, ...(to.relayUrl && { relayUrl: to.relayUrl }) }, new TextEncoder().encode(AGENT_CHAT_ALPN));
      const bi = await conn.openBi();
      return { conn, stream: byteStream(bi, closing) };
    },
    async shutdown() {
      if (down) return;
      down = true;
      await Promise.all(closing);
      await node.node.shutdown().catch(() => undefined);
    },
  };
}

/** The hex node id of a connection's peer, as iroh authenticated it. */
export function remoteNodeHex(conn: IrohConnection): string {
  return Array.from(conn.remoteNodeId().toBytes(), (x) => x.toString(16).padStart(2, '0')).join('');
}
