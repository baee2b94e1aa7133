/**
 * Reaching an invitation's host, on Node and in a page: the ticket's peer id must be the invitation's
 * host key (libp2p's Noise handshake then proves the connection reaches the holder of that key), the
 * addresses are tried in turn, and the connected peer is checked again.
 */
import { peerIdFromString } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import type { Libp2p } from 'libp2p';
import { HandshakeError } from './handshake.js';
import type { Invitation } from './invitation.js';
import type { ByteStream } from './line-transport.js';
import { peerKeyHex, SESSION_PROTOCOL } from './stack.js';

/** Why the host could not be reached: nothing listens at any of its addresses, or they failed otherwise. */
export type Unreachable = { unreachable: string; code: 'CONNECTION_REFUSED' | 'HOST_UNREACHABLE' };

const refusedConnection = (e: unknown) => (e as { code?: unknown })?.code === 'ECONNREFUSED' || /\bECONNREFUSED\b/.test((e as Error)?.message ?? String(e));

/**
 * The session stream to the host, or why none of `addrs` could be reached (each address's failure):
 * CONNECTION_REFUSED when every address refused the connection (nothing listens there), else
 * HOST_UNREACHABLE. A ticket or a connected peer that is not the invitation's host is a HandshakeError.
 */
export async function dialHost(
  node: Libp2p,
  inv: Pick<Invitation, 'host_public_key' | 'ticket'>,
  addrs: readonly string[] = inv.ticket.addrs,
): Promise<{ stream: ByteStream } | Unreachable> {
  let expected;
  try {
    expected = peerIdFromString(inv.ticket.peer_id);
  } catch {
    throw new HandshakeError('HANDSHAKE_KEY_MISMATCH', 'the ticket peer id is not a libp2p peer id');
  }
  if (peerKeyHex(expected as never) !== inv.host_public_key)
    throw new HandshakeError('HANDSHAKE_KEY_MISMATCH', 'the ticket peer id is not the invitation host key');
  const failures: string[] = [];
  let refused = 0;
  for (const a of addrs) {
    let stream: unknown;
    try {
      stream = await node.dialProtocol(multiaddr(a.includes('/p2p/') ? a : `${a}/p2p/${inv.ticket.peer_id}`), SESSION_PROTOCOL);
    } catch (e) {
      if (refusedConnection(e)) refused++;
      failures.push(`${a}: ${(e as Error)?.message ?? String(e)}`);
      continue;
    }
    const conn = node.getConnections(expected)[0];
    if (!conn || peerKeyHex(conn.remotePeer as never) !== inv.host_public_key)
      throw new HandshakeError('HANDSHAKE_KEY_MISMATCH', 'the connected peer is not the invitation host');
    return { stream: stream as ByteStream };
  }
  if (addrs.length > 0 && refused === addrs.length)
    return { code: 'CONNECTION_REFUSED', unreachable: `connection refused at every address of the host: nothing listens there (${failures.join('; ')})` };
  return { code: 'HOST_UNREACHABLE', unreachable: `cannot reach the host (${failures.join('; ') || 'no address'})` };
}
