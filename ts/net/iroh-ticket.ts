/**
 * iroh 0.35 node tickets ("node" + lowercase unpadded base32 of the postcard encoding), the string the
 * reference's host publishes and its guest dials. The npm binding exposes no NodeTicket, so the format is
 * written here: a variant tag 0, the 32-byte node id, an optional relay URL (tag, varint length, UTF-8)
 * and the set of direct socket addresses (varint count; each a variant tag 0 = IPv4 with 4 bytes or
 * 1 = IPv6 with 16 bytes, then the port as a varint). No I/O.
 */

export interface NodeAddress {
  /** The node id: the Ed25519 public key, 64 lowercase hex. */
  nodeId: string;
  relayUrl?: string;
  /** "1.2.3.4:5" or "[::1]:5". */
  addresses: string[];
}

export class TicketError extends Error {
  override readonly name = 'TicketError';
  readonly code = 'IROH_TICKET_INVALID';
  constructor(message: string) {
    super(`IROH_TICKET_INVALID: ${message}`);
  }
}

const PREFIX = 'node';
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
/** A ticket longer than this is not one (a node has a few addresses). */
const MAX_TICKET_CHARS = 4096;

function base32(bytes: Uint8Array): string {
  let out = '';
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(acc >>> (bits - 5)) & 31];
      bits -= 5;
    }
    acc &= (1 << bits) - 1;
  }
  if (bits > 0) out += ALPHABET[(acc << (5 - bits)) & 31];
  return out;
}

function unbase32(text: string): Uint8Array {
  const out: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const ch of text.toLowerCase()) {
    const v = ALPHABET.indexOf(ch);
    if (v < 0) throw new TicketError(`${JSON.stringify(ch)} is not base32`);
    acc = (acc << 5) | v;
    bits += 5;
    if (bits >= 8) {
      out.push((acc >>> (bits - 8)) & 255);
      bits -= 8;
    }
    acc &= (1 << bits) - 1;
  }
  if (acc !== 0) throw new TicketError('trailing base32 bits are not zero');
  return Uint8Array.from(out);
}

function varint(n: number, out: number[]): void {
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
}

function parseSocket(a: string): { v6: boolean; ip: number[]; port: number } {
  const m4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3}):(\d{1,5})$/.exec(a);
  if (m4) {
    const ip = m4.slice(1, 5).map(Number);
    const port = Number(m4[5]);
    if (ip.some((x) => x > 255) || port > 65535) throw new TicketError(`${a} is not a socket address`);
    return { v6: false, ip, port };
  }
  const m6 = /^\[([0-9a-fA-F:]+)\]:(\d{1,5})$/.exec(a);
  if (!m6) throw new TicketError(`${a} is not a socket address`);
  const port = Number(m6[2]);
  const halves = m6[1]!.split('::');
  if (halves.length > 2 || port > 65535) throw new TicketError(`${a} is not a socket address`);
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const fill = 8 - head.length - tail.length;
  if (halves.length === 1 ? fill !== 0 : fill < 1) throw new TicketError(`${a} is not a socket address`);
  const words = [...head, ...Array(halves.length === 2 ? fill : 0).fill('0'), ...tail].map((w) => (/^[0-9a-fA-F]{1,4}$/.test(w) ? parseInt(w, 16) : NaN));
  if (words.some(Number.isNaN)) throw new TicketError(`${a} is not a socket address`);
  return { v6: true, ip: words.flatMap((w) => [w >> 8, w & 255]), port };
}

function formatV6(ip: Uint8Array): string {
  const words: number[] = [];
  for (let i = 0; i < 16; i += 2) words.push((ip[i]! << 8) | ip[i + 1]!);
  // The longest run of zero words (two or more) becomes "::", as Rust's Display writes it.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j === i ? i + 1 : j;
  }
  const hex = (ws: number[]) => ws.map((w) => w.toString(16)).join(':');
  return best < 0 ? hex(words) : `${hex(words.slice(0, best))}::${hex(words.slice(best + bestLen))}`;
}

/** Encodes a node address as a NodeTicket string. */
export function encodeNodeTicket(a: NodeAddress): string {
  if (!/^[0-9a-f]{64}$/.test(a.nodeId)) throw new TicketError('the node id is not 64 lowercase hex');
  const out: number[] = [0];
  for (let i = 0; i < 64; i += 2) out.push(parseInt(a.nodeId.slice(i, i + 2), 16));
  if (a.relayUrl === undefined) out.push(0);
  else {
    const url = new TextEncoder().encode(a.relayUrl);
    out.push(1);
    varint(url.length, out);
    out.push(...url);
  }
  // A set: sorted as Rust orders SocketAddr (IPv4 before IPv6, then address, then port), duplicates once.
  const socks = a.addresses.map(parseSocket).sort((x, y) => Number(x.v6) - Number(y.v6) || cmp(x.ip, y.ip) || x.port - y.port);
  const unique = socks.filter((s, i) => i === 0 || cmp(s.ip, socks[i - 1]!.ip) !== 0 || s.port !== socks[i - 1]!.port || s.v6 !== socks[i - 1]!.v6);
  varint(unique.length, out);
  for (const s of unique) {
    out.push(s.v6 ? 1 : 0, ...s.ip);
    varint(s.port, out);
  }
  return PREFIX + base32(Uint8Array.from(out));
}

function cmp(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/** Decodes a NodeTicket string; anything else is a TicketError. */
export function decodeNodeTicket(ticket: string): NodeAddress {
  if (typeof ticket !== 'string' || ticket.length > MAX_TICKET_CHARS) throw new TicketError('not a node ticket');
  if (!ticket.toLowerCase().startsWith(PREFIX)) throw new TicketError('a node ticket starts with "node"');
  const b = unbase32(ticket.slice(PREFIX.length));
  let i = 0;
  const byte = () => {
    if (i >= b.length) throw new TicketError('the ticket is cut short');
    return b[i++]!;
  };
  const take = (n: number) => {
    if (i + n > b.length) throw new TicketError('the ticket is cut short');
    const s = b.subarray(i, i + n);
    i += n;
    return s;
  };
  const readVarint = (max: number) => {
    let n = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const x = byte();
      n += (x & 0x7f) * 2 ** shift;
      if (!(x & 0x80)) {
        if (n > max) throw new TicketError('a number in the ticket is out of range');
        return n;
      }
    }
    throw new TicketError('a number in the ticket is too long');
  };
  if (byte() !== 0) throw new TicketError('unknown ticket version');
  const nodeId = Array.from(take(32), (x) => x.toString(16).padStart(2, '0')).join('');
  let relayUrl: string | undefined;
  const hasRelay = byte();
  if (hasRelay === 1) {
    try {
      relayUrl = new TextDecoder('utf-8', { fatal: true }).decode(take(readVarint(2048)));
    } catch (e) {
      if (e instanceof TicketError) throw e;
      throw new TicketError('the relay URL is not UTF-8');
    }
  } else if (hasRelay !== 0) throw new TicketError('bad relay tag');
  const count = readVarint(64);
  const addresses: string[] = [];
  for (let k = 0; k < count; k++) {
    const tag = byte();
    if (tag === 0) addresses.push(`${Array.from(take(4)).join('.')}:${readVarint(65535)}`);
    else if (tag === 1) addresses.push(`[${formatV6(take(16))}]:${readVarint(65535)}`);
    else throw new TicketError('bad address tag');
  }
  if (i !== b.length) throw new TicketError('trailing bytes after the ticket');
  return { nodeId, ...(relayUrl !== undefined && { relayUrl }), addresses };
}
