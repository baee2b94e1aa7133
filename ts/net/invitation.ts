/**
 * Invitations (NOTES A8): what a host hands to a guest out of band. It names the host's public key, the
 * protocol_id, the invitation type and options, the transport ticket (libp2p peer id and addresses) and
 * an expiry, and carries two host signatures: the reference's four-line transport binding
 * (public_key / transport / ticket / protocol_id), and one over the whole invitation, so that the
 * options, type and expiry cannot be altered either. It travels as one copy-pasteable string
 * ("aigenora1." + base64url(JCS(invitation))) or as JSON.
 * An iroh invitation (transport "iroh") carries the reference's ticket instead: a NodeTicket string,
 * bound by the same four-line canonical, exactly as the reference's guest checks it.
 */
import type { Crypto } from '../crypto/backend.js';
import { fromBase64Url, fromHex, fromUtf8, toBase64Url, toHex, utf8 } from '../crypto/encoding.js';

export const INVITATION_PREFIX = 'aigenora1.';
export const TRANSPORT = 'libp2p';
export const IROH_TRANSPORT = 'iroh';

export interface Ticket {
  peer_id: string;
  addrs: string[];
}

export interface Invitation {
  v: 1;
  post_id: string;
  host_public_key: string;
  protocol_id: string;
  type: 'supply' | 'demand' | 'chat';
  options: Record<string, unknown>;
  host_control_mode: string;
  transport: typeof TRANSPORT;
  ticket: Ticket;
  expires_at: string;
  transport_binding_signature: string;
  signature: string;
}

/** The same invitation for the iroh transport: `ticket` is the host's iroh NodeTicket. */
export interface IrohInvitation extends Omit<Invitation, 'transport' | 'ticket'> {
  transport: typeof IROH_TRANSPORT;
  ticket: string;
}

export type AnyInvitation = Invitation | IrohInvitation;

export type InvitationError = 'INVITATION_MALFORMED' | 'INVITATION_UNSIGNED' | 'INVITATION_BAD_SIGNATURE' | 'INVITATION_EXPIRED' | 'INVITATION_TRANSPORT';

export class InvitationRefused extends Error {
  override readonly name = 'InvitationRefused';
  constructor(
    readonly code: InvitationError,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

export const ticketString = (t: Ticket) => `${t.peer_id}@${t.addrs.join(',')}`;

/** The inverse of ticketString, for a ticket relayed by a registry; undefined when it is not one. */
export function parseTicketString(s: string): Ticket | undefined {
  const at = s.indexOf('@');
  if (at <= 0) return undefined;
  const addrs = s
    .slice(at + 1)
    .split(',')
    .filter((a) => a !== '');
  return addrs.length > 0 && addrs.every((a) => a.startsWith('/')) ? { peer_id: s.slice(0, at), addrs } : undefined;
}

/** The reference's transport binding canonical: four lines, no trailing newline. */
export function bindingCanonical(publicKey: string, ticket: Ticket, protocolId: string): string {
  return transportBindingCanonical(publicKey, TRANSPORT, ticketString(ticket), protocolId);
}

/** The same canonical for any transport and ticket string (the reference signs it with "iroh" and its NodeTicket). */
export function transportBindingCanonical(publicKey: string, transport: string, ticket: string, protocolId: string): string {
  return [`public_key:${publicKey}`, `transport:${transport}`, `iroh_ticket:${ticket}`, `protocol_id:${protocolId}`].join('\n');
}

const bindingOf = (inv: AnyInvitation) =>
  inv.transport === IROH_TRANSPORT
    ? transportBindingCanonical(inv.host_public_key, IROH_TRANSPORT, inv.ticket, inv.protocol_id)
    : bindingCanonical(inv.host_public_key, inv.ticket, inv.protocol_id);

function signedBytes(crypto: Crypto, inv: Omit<AnyInvitation, 'signature'>): Uint8Array {
  const { ...rest } = inv as Partial<AnyInvitation>;
  delete rest.signature;
  const canon = crypto.jcsValue(rest);
  const prefix = utf8('aigenora-invitation/1\n');
  const out = new Uint8Array(prefix.length + canon.length);
  out.set(prefix);
  out.set(canon, prefix.length);
  return out;
}

export interface NewInvitation {
  host: { publicKey: Uint8Array; sign(m: Uint8Array): Uint8Array };
  protocolId: string;
  ticket: Ticket;
  options?: Record<string, unknown>;
  type?: Invitation['type'];
  controlMode?: string;
  ttlMinutes?: number;
  now?: Date;
  /** The id a registry gave the posted invitation (default: a random one, for out-of-band use). */
  postId?: string;
}

export function createInvitation(crypto: Crypto, n: NewInvitation): Invitation {
  return signed(crypto, n, { transport: TRANSPORT, ticket: n.ticket }, ticketString(n.ticket));
}

/** An iroh invitation: the same fields and signatures, the NodeTicket as the ticket. */
export function createIrohInvitation(crypto: Crypto, n: Omit<NewInvitation, 'ticket'> & { ticket: string }): IrohInvitation {
  return signed(crypto, n, { transport: IROH_TRANSPORT, ticket: n.ticket }, n.ticket);
}

/** Fills in and signs an invitation; `bound` is the ticket as the binding canonical names it. */
function signed<T extends Pick<AnyInvitation, 'transport' | 'ticket'>>(
  crypto: Crypto,
  n: Omit<NewInvitation, 'ticket'>,
  t: T,
  bound: string,
): Omit<AnyInvitation, 'transport' | 'ticket'> & T {
  const pk = toHex(n.host.publicKey);
  const expires = new Date((n.now ?? new Date()).getTime() + (n.ttlMinutes ?? 30) * 60_000);
  const unsigned = {
    v: 1 as const,
    post_id: n.postId ?? toHex(globalThis.crypto.getRandomValues(new Uint8Array(8))),
    host_public_key: pk,
    protocol_id: n.protocolId,
    type: n.type ?? 'supply',
    options: n.options ?? {},
    host_control_mode: n.controlMode ?? 'autonomous',
    ...t,
    expires_at: expires.toISOString(),
    transport_binding_signature: toHex(n.host.sign(utf8(transportBindingCanonical(pk, t.transport, bound, n.protocolId)))),
  };
  return { ...unsigned, signature: toHex(n.host.sign(signedBytes(crypto, unsigned as Omit<AnyInvitation, 'signature'>))) };
}

export function encodeInvitation(crypto: Crypto, inv: AnyInvitation): string {
  return INVITATION_PREFIX + toBase64Url(crypto.jcsValue(inv));
}

/** Parses the string or JSON form of a libp2p invitation, and checks both signatures and the expiry. */
export function parseInvitation(crypto: Crypto, text: string, now = new Date()): Invitation {
  return parseAnyInvitation(crypto, text, now, TRANSPORT) as Invitation;
}

/** Parses a libp2p or an iroh invitation, and checks both signatures and the expiry. */
export function parseAnyInvitation(crypto: Crypto, text: string, now = new Date(), only?: AnyInvitation['transport']): AnyInvitation {
  const t = text.trim();
  let json: string;
  try {
    json = t.startsWith(INVITATION_PREFIX) ? fromUtf8(fromBase64Url(t.slice(INVITATION_PREFIX.length))) : t;
    crypto.jcs(json);
  } catch {
    throw new InvitationRefused('INVITATION_MALFORMED', 'not an aigenora invitation (aigenora1.… or its JSON form)');
  }
  const parsed = JSON.parse(json) as unknown;
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(parsed)) throw new InvitationRefused('INVITATION_MALFORMED', 'an invitation is a JSON object');
  const inv = parsed as Partial<Invitation> | Partial<IrohInvitation>;
  const hex64 = /^[0-9a-f]{64}$/;
  const malformed = () =>
    new InvitationRefused(
      'INVITATION_MALFORMED',
      'an invitation needs v, host_public_key, protocol_id, ticket ({peer_id, addrs}, or an iroh ticket string) and expires_at',
    );
  if (
    inv.v !== 1 ||
    typeof inv.host_public_key !== 'string' ||
    !hex64.test(inv.host_public_key) ||
    typeof inv.protocol_id !== 'string' ||
    typeof inv.expires_at !== 'string' ||
    (inv.options !== undefined && !isObject(inv.options))
  )
    throw malformed();
  const supported = only ? [only] : [TRANSPORT, IROH_TRANSPORT];
  if (!supported.includes(inv.transport as AnyInvitation['transport']))
    throw new InvitationRefused('INVITATION_TRANSPORT', `transport ${String(inv.transport).slice(0, 40)} is not supported (only ${supported.join(' and ')})`);
  const ticketOk =
    inv.transport === IROH_TRANSPORT
      ? typeof inv.ticket === 'string' && inv.ticket.length > 0 && inv.ticket.length <= 4096
      : isObject(inv.ticket) &&
        Array.isArray(inv.ticket.addrs) &&
        inv.ticket.addrs.every((a) => typeof a === 'string') &&
        typeof inv.ticket.peer_id === 'string';
  if (!ticketOk) throw malformed();
  if (typeof inv.transport_binding_signature !== 'string' || typeof inv.signature !== 'string')
    throw new InvitationRefused('INVITATION_UNSIGNED', 'the invitation is not signed by its host (possible man in the middle)');
  const pk = fromHex(inv.host_public_key);
  const sigOk = (sig: string, msg: Uint8Array) => /^[0-9a-f]{128}$/.test(sig) && crypto.ed25519Verify(pk, msg, fromHex(sig));
  if (!sigOk(inv.transport_binding_signature, utf8(bindingOf(inv as AnyInvitation))))
    throw new InvitationRefused('INVITATION_BAD_SIGNATURE', 'the transport binding signature does not verify under the host key');
  if (!sigOk(inv.signature, signedBytes(crypto, inv as AnyInvitation)))
    throw new InvitationRefused('INVITATION_BAD_SIGNATURE', 'the invitation was altered after the host signed it');
  const expires = Date.parse(inv.expires_at);
  if (!Number.isFinite(expires) || expires <= now.getTime()) throw new InvitationRefused('INVITATION_EXPIRED', `the invitation expired at ${inv.expires_at}`);
  return inv as AnyInvitation;
}
