/**
 * Invitations as the reference posts and reads them (NOTES A8), without I/O: the body a host posts with
 * its transport binding signed, and the guest's check of that binding before it dials anyone.
 */
import type { Crypto } from '../crypto/backend.js';
import { fromHex, toHex, utf8 } from '../crypto/encoding.js';
import { transportBindingCanonical } from '../group/wire.js';
import { RegistryError } from './errors.js';

export const INVITATION_TYPES = ['supply', 'demand', 'chat'] as const;
export type InvitationType = (typeof INVITATION_TYPES)[number];

/** POST /api/v1/invitations, keys in the reference's order. */
export interface InvitationBody {
  message: string;
  tags: string[];
  iroh_ticket: string;
  transport: string;
  transport_info: { version: 1; endpoint_id: string; ticket: string };
  transport_binding_signature: string;
  protocol_id: string;
  host_control_mode: string;
  type: InvitationType;
  options?: Record<string, unknown>;
}

export interface InvitationInput {
  /** Display name. */
  message: string;
  tags?: readonly string[];
  ticket: string;
  protocolId: string;
  controlMode: string;
  type?: InvitationType;
  options?: Record<string, unknown>;
  /** Only "iroh" is what the reference's guests accept. */
  transport?: string;
}

export function buildInvitation(c: Crypto, seed: Uint8Array, i: InvitationInput): InvitationBody {
  const publicKey = toHex(c.ed25519PublicKey(seed));
  const transport = i.transport ?? 'iroh';
  const binding = transportBindingCanonical(publicKey, transport, i.ticket, i.protocolId);
  const body: InvitationBody = {
    message: i.message,
    tags: (i.tags ?? []).map((t) => t.trim()).filter((t) => t !== ''),
    iroh_ticket: i.ticket,
    transport,
    transport_info: { version: 1, endpoint_id: publicKey, ticket: i.ticket },
    transport_binding_signature: toHex(c.ed25519Sign(seed, utf8(binding))),
    protocol_id: i.protocolId,
    host_control_mode: i.controlMode,
    type: i.type ?? 'supply',
  };
  if (i.options && Object.keys(i.options).length > 0) body.options = i.options;
  return body;
}

/** An invitation as the registry returns it: only the fields a guest relies on are typed. */
export interface Invitation {
  post_id: string;
  public_key?: string;
  protocol_id?: string;
  type?: string;
  message?: string;
  tags?: unknown;
  transport?: string;
  iroh_ticket?: string;
  transport_info?: unknown;
  transport_binding_signature?: string;
  host_control_mode?: string;
  options?: unknown;
  [key: string]: unknown;
}

export function asInvitation(v: unknown, status: number): Invitation {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new RegistryError('REGISTRY_BAD_RESPONSE', 'an invitation is not a JSON object', status);
  const o = v as Record<string, unknown>;
  if (typeof o['post_id'] !== 'string' && typeof o['post_id'] !== 'number')
    throw new RegistryError('REGISTRY_BAD_RESPONSE', 'an invitation has no post_id', status);
  return { ...o, post_id: String(o['post_id']) };
}

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * What a guest may dial: the host key, the ticket and the protocol, after the host's binding signature
 * over them verified. The registry is not trusted to relay any of it faithfully, so a binding that is
 * missing or does not verify is refused (the reference calls it a possible MITM).
 */
export function checkInvitationBinding(c: Crypto, inv: Invitation): { publicKey: string; ticket: string; protocolId: string; transport: string } {
  const bad = (why: string) => new RegistryError('REGISTRY_BAD_RESPONSE', `invitation ${inv.post_id}: ${why}`);
  const info = inv.transport_info !== null && typeof inv.transport_info === 'object' ? (inv.transport_info as Record<string, unknown>) : {};
  const ticket = typeof info['ticket'] === 'string' ? info['ticket'] : inv.iroh_ticket;
  const publicKey = inv.public_key;
  const transport = inv.transport ?? 'iroh';
  const protocolId = inv.protocol_id ?? '';
  if (typeof publicKey !== 'string' || !HEX64.test(publicKey)) throw bad('no host public key');
  if (typeof ticket !== 'string' || ticket === '') throw bad('no transport ticket');
  if (typeof inv.transport_binding_signature !== 'string' || !/^[0-9a-f]{128}$/.test(inv.transport_binding_signature))
    throw bad('no transport binding signature (possible MITM)');
  const binding = transportBindingCanonical(publicKey, transport, ticket, protocolId);
  if (!c.ed25519Verify(fromHex(publicKey), utf8(binding), fromHex(inv.transport_binding_signature)))
    throw bad('the transport binding signature does not verify (possible MITM)');
  return { publicKey, ticket, protocolId, transport };
}
