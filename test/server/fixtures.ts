/** Invitation bodies and session proofs built the way the reference's host and guest build them. */
import { randomBytes } from 'node:crypto';
import { toHex, utf8 } from '../../ts/crypto/encoding.js';
import { sessionCanonical, sessionId } from '../../ts/engine/frame.js';
import type { SessionProof } from '../../ts/registry/client.js';
import { buildInvitation } from '../../ts/registry/invitation.js';
import type { Agent } from './harness.js';

export const randomProtocolId = (): string => toHex(randomBytes(32));

export function invitationBody(
  host: Agent,
  over: { protocolId?: string; ticket?: string; type?: 'supply' | 'demand' | 'chat'; tags?: string[] } = {},
): Record<string, unknown> {
  return {
    ...buildInvitation(host.t.crypto, host.seed, {
      message: 'rock paper scissors',
      tags: over.tags ?? ['game', 'rps'],
      ticket: over.ticket ?? `endpoint${toHex(randomBytes(8))}`,
      protocolId: over.protocolId ?? randomProtocolId(),
      controlMode: 'autonomous',
      type: over.type ?? 'supply',
    }),
  };
}

export async function postInvitation(host: Agent, over: Parameters<typeof invitationBody>[1] = {}): Promise<{ postId: string; body: Record<string, unknown> }> {
  const body = invitationBody(host, over);
  const r = await host.json('POST', '/api/v1/invitations', { body });
  if (r.status !== 201) throw new Error(`post failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { postId: r.body['post_id'] as string, body };
}

export function sessionProof(
  host: Agent,
  guest: Agent,
  postId: string,
  protocolId: string,
  nonce = toHex(randomBytes(8)),
): { proof: SessionProof; id: string } {
  const c = host.t.crypto;
  const canonical = utf8(sessionCanonical(postId, protocolId, host.publicKey, guest.publicKey, nonce));
  return {
    proof: {
      post_id: postId,
      host_public_key: host.publicKey,
      guest_public_key: guest.publicKey,
      protocol_id: protocolId,
      session_nonce: nonce,
      host_signature: toHex(c.ed25519Sign(host.seed, canonical)),
      guest_signature: toHex(c.ed25519Sign(guest.seed, canonical)),
    },
    id: sessionId(c, postId, protocolId, host.publicKey, guest.publicKey, nonce),
  };
}
