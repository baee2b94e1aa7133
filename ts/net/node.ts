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
import { tcp } from '@libp2p/tcp';
import { webSockets } from '@libp2p/websockets';
import type { Multiaddr } from '@multiformats/multiaddr';
import { createLibp2p, type Libp2p } from 'libp2p';
import type { Server } from 'node:net';
import { toHex } from '../crypto/encoding.js';
import { SocketGuard } from './guard.js';
import { hardenWebSocketServer, type WsServerLike } from './websocket.js';

export const SESSION_PROTOCOL = '/aigenora/session/1.0.0';

export const DEFAULT_LISTEN = ['/ip4/127.0.0.1/tcp/0', '/ip4/127.0.0.1/tcp/0/ws'];

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

export interface NodeOptions {
  listen?: string[];
  /** Required to listen: the host's socket guard. */
  guard?: SocketGuard;
}

export async function createNode(seed: Uint8Array, o: NodeOptions = {}): Promise<Libp2p> {
  const listen = o.listen ?? [];
  if (listen.length > 0 && !o.guard) throw new Error('a listening node needs a SocketGuard');
  const transports = o.guard ? [guarded(tcp(), o.guard), guarded(webSockets() as TransportFactory, o.guard)] : [tcp(), webSockets() as TransportFactory];
  const deadline = o.guard?.limits.deadlineMs ?? 10_000;
  return createLibp2p({
    privateKey: await generateKeyPairFromSeed('Ed25519', seed),
    addresses: { listen },
    transports,
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    connectionManager: {
      maxConnections: 128,
      maxIncomingPendingConnections: 96,
      inboundConnectionThreshold: 5,
      inboundUpgradeTimeout: deadline,
      inboundStreamProtocolNegotiationTimeout: deadline,
    },
  });
}

/** The raw 32-byte Ed25519 public key behind a libp2p peer id, as lowercase hex. */
export function peerKeyHex(peer: { publicKey?: { raw: Uint8Array } }): string | undefined {
  const raw = peer.publicKey?.raw;
  return raw ? toHex(raw) : undefined;
}

/** The IP address and port of a TCP or WebSocket multiaddr. */
export function ipAndPort(addr: Multiaddr): { address: string; port: number } | undefined {
  const parts = addr.getComponents();
  const ip = parts.find((p) => p.name === 'ip4' || p.name === 'ip6')?.value;
  const port = Number(parts.find((p) => p.name === 'tcp')?.value);
  return ip !== undefined && Number.isInteger(port) ? { address: ip, port } : undefined;
}
