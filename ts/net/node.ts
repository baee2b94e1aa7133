/**
 * A libp2p node whose identity is the agent's own Ed25519 key (TCP and WebSockets, Noise, Yamux), so a
 * connection is authenticated by the key an invitation names. A listening node is bounded the way
 * libp2p deployments bound a public node: connection manager limits, an inbound upgrade deadline of
 * seconds, and a SocketGuard in front of each listener (see guard.ts).
 */
import './polyfill.js';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys';
import { tcp, type TCPSocketOptions } from '@libp2p/tcp';
import { webSockets } from '@libp2p/websockets';
import type { Multiaddr } from '@multiformats/multiaddr';
import { createLibp2p, type Libp2p } from 'libp2p';
import type { Server } from 'node:net';
import type { Crypto } from '../crypto/backend.js';
import { DEFAULT_GUARD_LIMITS, type SocketGuard } from './guard.js';
import { hardenWebSocketServer, type WsServerLike } from './websocket.js';
import { noiseCrypto, STREAM_LIMITS } from './stack.js';

export { noiseCrypto, peerKeyHex, SESSION_PROTOCOL, STREAM_LIMITS } from './stack.js';

export const DEFAULT_LISTEN = ['/ip4/127.0.0.1/tcp/0', '/ip4/127.0.0.1/tcp/0/ws'];

/**
 * libp2p connections beyond the guard's pending sockets (every one of which may have completed Noise)
 * and the host's authenticated sessions: room for the node's own dials and for connections whose
 * session has ended but which are still closing, which libp2p would otherwise count against new guests.
 */
const SPARE_CONNECTIONS = 24;
/** Sessions a listening node makes room for when not told (a daemon host's default). */
const DEFAULT_SESSIONS = 8;

type TransportFactory = ReturnType<typeof tcp>;
type Transport = ReturnType<TransportFactory>;

/** What the TCP and WebSockets listeners of the pinned versions hold (not part of their typings). */
interface ListenerInternals {
  server?: Server;
  wsServer?: WsServerLike;
}

/** Puts the guard in front of a transport's listeners, and hardens the WebSocket server. */
function guarded(factory: TransportFactory, guard: SocketGuard): TransportFactory {
  return (components) => {
    const transport: Transport = factory(components);
    const create = transport.createListener.bind(transport);
    transport.createListener = (options) => {
      const listener = create(options);
      const inner = listener as unknown as ListenerInternals;
      // Without its server the host would be unguarded: refuse to start rather than listen open.
      if (!inner.server) throw new Error(`${transport[Symbol.toStringTag]}: listener internals changed, cannot guard its sockets`);
      guard.attach(inner.server);
      if (inner.wsServer) hardenWebSocketServer(inner.wsServer);
      return listener;
    };
    return transport;
  };
}

/**
 * AIGENORA_NET_UNPATCHED=1 (read when a node or a session stream is made) leaves the pinned libp2p
 * stack as it ships, without the per-frame cuts below: bench/net.bench.ts measures before against
 * after with it, and it is the way back should a libp2p upgrade misbehave under them (each cut already
 * stands aside when the internals it relies on are missing).
 */
const unpatched = (): boolean => process.env['AIGENORA_NET_UNPATCHED'] === '1';

type EncrypterFactory = ReturnType<typeof noise>;
type Encrypter = ReturnType<EncrypterFactory>;

/** What a TCP connection of the pinned @libp2p/tcp holds (not part of its typings). */
interface RawConnectionInternals {
  sendData?: (data: unknown) => unknown;
  socket?: { cork(): void; uncork(): void };
}

/**
 * Noise hands each encrypted message to the connection as two buffers (its 2-byte length and the
 * ciphertext), and the TCP connection writes each with its own socket.write: with Nagle off, that is
 * two write(2) calls and two segments per frame, each of which may wake the peer. Corking the socket
 * around one hand-over makes them one writev(2). The bytes on the wire are the same, nothing waits,
 * and Node's own buffer limit still reports a full socket (backpressure). The cork is released before
 * the hand-over returns: a socket closed or reset right after a send must still have sent it.
 */
function oneWritePerMessage(factory: EncrypterFactory): EncrypterFactory {
  const patch = <C>(conn: C): C => {
    const raw = conn as RawConnectionInternals;
    const socket = raw.socket;
    if (typeof raw.sendData !== 'function' || typeof socket?.cork !== 'function' || typeof socket.uncork !== 'function') return conn;
    const sendData = raw.sendData.bind(conn);
    raw.sendData = (data) => {
      socket.cork();
      try {
        return sendData(data);
      } finally {
        socket.uncork();
      }
    };
    return conn;
  };
  type Secured = Awaited<ReturnType<Encrypter['secureInbound']>>;
  const after = (s: Secured): Secured => {
    quietLengths(s.connection);
    return s;
  };
  return (components) => {
    const encrypter: Encrypter = factory(components);
    if (unpatched()) return encrypter;
    return new Proxy(encrypter, {
      get(target, prop) {
        if (prop === 'secureInbound')
          return async (conn: Parameters<Encrypter['secureInbound']>[0], o?: Parameters<Encrypter['secureInbound']>[1]) =>
            after(await target.secureInbound(patch(conn), o));
        if (prop === 'secureOutbound')
          return async (conn: Parameters<Encrypter['secureOutbound']>[0], o?: Parameters<Encrypter['secureOutbound']>[1]) =>
            after(await target.secureOutbound(patch(conn), o));
        const v: unknown = Reflect.get(target, prop, target);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  };
}

/** What the pinned Noise's encrypted stream holds: its length-prefix decoder (not part of its typings). */
interface NoiseStreamInternals {
  decoder?: {
    buffer?: {
      append(b: unknown): void;
      byteLength: number;
      getUint16(offset: number): number;
      sublist(from: number, to: number): { byteLength: number };
      consume(n: number): void;
    };
    maxBufferSize?: number;
    maxDataLength?: number;
    lengthDecoder?: { bytes?: number };
    decode?: (chunk: unknown) => Iterable<unknown>;
  };
}

/**
 * Noise cuts what it reads into messages with a decoder that learns it has run out of bytes by
 * catching a RangeError from its 2-byte length reader: one exception, with its stack trace, per read,
 * the largest single cost on the receiving side of a frame. The same cut, reading the length only when
 * two bytes are there; the same limits, and the same end (an error, which aborts the connection).
 */
function quietLengths(stream: unknown): void {
  const d = (stream as NoiseStreamInternals).decoder;
  const buffer = d?.buffer;
  if (
    !d ||
    !buffer ||
    typeof buffer.getUint16 !== 'function' ||
    typeof d.decode !== 'function' ||
    d.lengthDecoder?.bytes !== 2 ||
    typeof d.maxBufferSize !== 'number' ||
    typeof d.maxDataLength !== 'number'
  )
    return;
  const maxBuffer = d.maxBufferSize;
  const maxData = d.maxDataLength;
  d.decode = function* (chunk: unknown) {
    buffer.append(chunk);
    if (buffer.byteLength > maxBuffer) throw new Error(`Buffer length limit exceeded - ${buffer.byteLength}/${maxBuffer}`);
    while (buffer.byteLength >= 2) {
      const length = buffer.getUint16(0);
      if (length > maxData) throw new Error('Invalid message length');
      if (buffer.byteLength < 2 + length) break;
      const message = buffer.sublist(2, 2 + length);
      buffer.consume(2 + length);
      if (message.byteLength > 0) yield message;
    }
  };
}

/** What a stream of the pinned @chainsafe/libp2p-yamux holds (not part of its typings). */
interface YamuxStreamInternals {
  state?: number;
  recvWindow?: number;
  recvWindowCapacity?: number;
  sendWindowUpdate?: () => void;
}
const YAMUX_ESTABLISHED = 3;

/**
 * A session stream whose receive window is granted back in halves. The pinned Yamux sends a window
 * update after every data frame it reads, so each frame costs the reader one more (encrypted) write and
 * the writer one more wakeup; Yamux implementations in Go and Rust grant the window once half of it is
 * used, which the protocol allows (the window only bounds what the writer may send unacknowledged).
 * Streams of any other muxer are returned as they are.
 */
export function sessionStream<S>(stream: S): S {
  const y = stream as YamuxStreamInternals;
  const update = y.sendWindowUpdate;
  if (unpatched()) return stream;
  if (typeof update !== 'function' || typeof y.recvWindow !== 'number' || typeof y.recvWindowCapacity !== 'number') return stream;
  y.sendWindowUpdate = () => {
    // Opening flags and pauses are the original's to handle; only a plain refill is deferred.
    if (y.state === YAMUX_ESTABLISHED && y.recvWindowCapacity! > y.recvWindow! / 2) return;
    update.call(stream);
  };
  return stream;
}

export interface NodeOptions {
  listen?: string[];
  /** Required to listen: the host's socket guard. */
  guard?: SocketGuard;
  /**
   * The backend whose ChaCha20-Poly1305 encrypts the connection's Noise transport messages (the
   * session's own backend, so a consumer who chose one gets it on the wire too). Without it, Noise's
   * default (an AssemblyScript build below 1,200 bytes, node:crypto above).
   */
  crypto?: Crypto;
  /** Authenticated sessions the node must hold at once besides its pending sockets (default 8). */
  sessions?: number;
  /** The local IP address its TCP dials leave from (a machine with several); the system's choice when unset. */
  localAddress?: string;
}

export async function createNode(seed: Uint8Array, o: NodeOptions = {}): Promise<Libp2p> {
  const listen = o.listen ?? [];
  if (listen.length > 0 && !o.guard) throw new Error('a listening node needs a SocketGuard');
  // net.connect takes localAddress; the pinned @libp2p/tcp passes dialOpts through to it but types fewer of them.
  const dialTcp = () => (o.localAddress === undefined ? tcp() : tcp({ dialOpts: { localAddress: o.localAddress } as TCPSocketOptions }));
  const transports = o.guard
    ? [guarded(dialTcp(), o.guard), guarded(webSockets() as TransportFactory, o.guard)]
    : [dialTcp(), webSockets() as TransportFactory];
  const deadline = o.guard?.limits.deadlineMs ?? 10_000;
  const pending = o.guard?.limits.total ?? DEFAULT_GUARD_LIMITS.total;
  const node = await createLibp2p({
    privateKey: await generateKeyPairFromSeed('Ed25519', seed),
    addresses: { listen },
    transports,
    connectionEncrypters: [oneWritePerMessage(noise(o.crypto && !unpatched() ? { crypto: noiseCrypto(o.crypto) } : {}))],
    streamMuxers: [yamux({ streamOptions: STREAM_LIMITS })],
    connectionManager: {
      maxConnections: pending + (o.sessions ?? DEFAULT_SESSIONS) + SPARE_CONNECTIONS,
      // The guard bounds pending sockets (and closes the stalest to admit a new one); libp2p's own
      // bound, which refuses, must never be the one reached. Twice the guard's: a socket the guard
      // has closed stays counted here until its upgrade unwinds.
      maxIncomingPendingConnections: 2 * pending,
      // No per-address rate of new connections: a limit an attacker can spend refuses a guest behind
      // the same address (issue 37). Sockets that reopen as fast as they are closed cost the host only
      // what the guard lets them hold.
      inboundConnectionThreshold: Number.MAX_SAFE_INTEGER,
      inboundUpgradeTimeout: deadline,
      inboundStreamProtocolNegotiationTimeout: deadline,
    },
  });
  const guard = o.guard;
  if (guard) {
    // A socket that has completed Noise outranks those still silent or talking when the guard must
    // close one to admit another.
    node.addEventListener('connection:open', (e) => {
      const endpoint = e.detail.direction === 'inbound' ? ipAndPort(e.detail.remoteAddr) : undefined;
      if (endpoint) guard.secured(endpoint.address, endpoint.port);
    });
    // libp2p keeps a record (key, addresses, protocols) of every peer that ever connected. A host never
    // dials its guests, and each guest may come with a new key: kept, the records of a daemon that
    // serves guests for weeks would grow without bound (about 12 KiB each).
    node.addEventListener('peer:disconnect', (e) => void node.peerStore.delete(e.detail).catch(() => undefined));
  }
  return node;
}

/** The IP address and port of a TCP or WebSocket multiaddr. */
export function ipAndPort(addr: Multiaddr): { address: string; port: number } | undefined {
  const parts = addr.getComponents();
  const ip = parts.find((p) => p.name === 'ip4' || p.name === 'ip6')?.value;
  const port = Number(parts.find((p) => p.name === 'tcp')?.value);
  return ip !== undefined && Number.isInteger(port) ? { address: ip, port } : undefined;
}
