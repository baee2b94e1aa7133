// Invitations: round trip, and refusal of unsigned, altered, expired and foreign-transport ones.
import { describe, expect, it } from 'vitest';
import { fromBase64Url, getCrypto, toBase64Url, utf8 } from '../../ts/crypto/index.js';
import { createInvitation, encodeInvitation, INVITATION_PREFIX, InvitationRefused, parseInvitation } from '../../ts/net/invitation.js';

const c = getCrypto();
const hostKey = c.ed25519Keypair(new Uint8Array(32).fill(5));
const ticket = { peer_id: '12D3KooWexample', addrs: ['/ip4/127.0.0.1/tcp/4001'] };
const fresh = () => createInvitation(c, { host: hostKey, protocolId: 'ab'.repeat(32), ticket, options: { best_of: 3 }, ttlMinutes: 5 });
const code = (f: () => unknown) => {
  try {
    f();
    return 'ok';
  } catch (e) {
    if (e instanceof InvitationRefused) return e.code;
    throw e;
  }
};
const reencode = (inv: unknown) => INVITATION_PREFIX + toBase64Url(utf8(JSON.stringify(inv)));

describe('invitations', () => {
  it('round-trip as a string and as JSON', () => {
    const inv = fresh();
    const text = encodeInvitation(c, inv);
    expect(text.startsWith('aigenora1.')).toBe(true);
    expect(text).not.toMatch(/\s/);
    expect(parseInvitation(c, text)).toEqual(inv);
    expect(parseInvitation(c, JSON.stringify(inv))).toEqual(inv);
    expect(JSON.parse(new TextDecoder().decode(fromBase64Url(text.slice(10))))).toEqual(inv);
  });

  it('are refused when unsigned, altered, expired, malformed or for another transport', () => {
    const inv = fresh();
    const { signature: _s, ...unsigned } = inv;
    expect(code(() => parseInvitation(c, reencode(unsigned)))).toBe('INVITATION_UNSIGNED');
    expect(code(() => parseInvitation(c, reencode({ ...inv, options: { best_of: 99 } })))).toBe('INVITATION_BAD_SIGNATURE');
    expect(code(() => parseInvitation(c, reencode({ ...inv, expires_at: '2099-01-01T00:00:00.000Z' })))).toBe('INVITATION_BAD_SIGNATURE');
    expect(code(() => parseInvitation(c, reencode({ ...inv, ticket: { ...ticket, addrs: ['/ip4/10.0.0.66/tcp/1'] } })))).toBe('INVITATION_BAD_SIGNATURE');
    expect(code(() => parseInvitation(c, reencode({ ...inv, host_public_key: '00'.repeat(32) })))).toBe('INVITATION_BAD_SIGNATURE');
    expect(code(() => parseInvitation(c, reencode({ ...inv, transport: 'iroh' })))).toBe('INVITATION_TRANSPORT');
    expect(code(() => parseInvitation(c, encodeInvitation(c, inv), new Date(Date.now() + 6 * 60_000)))).toBe('INVITATION_EXPIRED');
    expect(code(() => parseInvitation(c, 'aigenora1.not-base64!'))).toBe('INVITATION_MALFORMED');
    expect(code(() => parseInvitation(c, '{"v":1}'))).toBe('INVITATION_MALFORMED');
    for (const text of [
      'null',
      '[]',
      '7',
      '"aigenora"',
      reencode(null),
      reencode({ ...inv, ticket: { ...ticket, addrs: [7] } }),
      reencode({ ...inv, ticket: null }),
      reencode({ ...inv, options: [1] }),
    ])
      expect(
        code(() => parseInvitation(c, text)),
        text,
      ).toBe('INVITATION_MALFORMED');
  });
});
