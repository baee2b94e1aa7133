/**
 * A libp2p node for a browser page: it only dials, over WebSockets (Noise, Yamux), with the agent's
 * own Ed25519 key as its identity, so the host authenticates the page by the key it signs with.
 */
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys';
import { webSockets } from '@libp2p/websockets';
import { createLibp2p, type Libp2p } from 'libp2p';
import type { Crypto } from '../crypto/backend.js';
import { noiseCrypto, STREAM_LIMITS } from './stack.js';

/** The ticket addresses a page can dial: plain or secure WebSockets. */
export const isWebSocketAddr = (a: string): boolean => /\/(ws|wss|tls\/ws)(\/|$)/.test(a);

export async function createBrowserNode(seed: Uint8Array, crypto: Crypto): Promise<Libp2p> {
  return createLibp2p({
    privateKey: await generateKeyPairFromSeed('Ed25519', seed),
    addresses: { listen: [] },
    transports: [webSockets()],
    connectionEncrypters: [noise({ crypto: noiseCrypto(crypto) })],
    streamMuxers: [yamux({ streamOptions: STREAM_LIMITS })],
    // A browser node refuses private and loopback addresses by default; the invitation names the
    // host's addresses, and the Noise handshake proves the peer holds the invitation's key.
    connectionGater: { denyDialMultiaddr: () => false },
  });
}
