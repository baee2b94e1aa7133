/**
 * A libp2p node whose identity is the agent's own Ed25519 key (TCP and WebSockets, Noise, Yamux), so a
 * connection is authenticated by the key an invitation names.
 */
import './polyfill.js';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys';
import { tcp } from '@libp2p/tcp';
import { webSockets } from '@libp2p/websockets';
import { createLibp2p, type Libp2p } from 'libp2p';
import { toHex } from '../crypto/encoding.js';

export const SESSION_PROTOCOL = '/aigenora/session/1.0.0';

export async function createNode(seed: Uint8Array, listen: string[] = ['/ip4/127.0.0.1/tcp/0', '/ip4/127.0.0.1/tcp/0/ws']): Promise<Libp2p> {
  return createLibp2p({
    privateKey: await generateKeyPairFromSeed('Ed25519', seed),
    addresses: { listen },
    transports: [tcp(), webSockets()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
  });
}

/** The raw 32-byte Ed25519 public key behind a libp2p peer id, as lowercase hex. */
export function peerKeyHex(peer: { publicKey?: { raw: Uint8Array } }): string | undefined {
  const raw = peer.publicKey?.raw;
  return raw ? toHex(raw) : undefined;
}
