/**
 * The deck setup: the Host sends `mp_setup_a` (blob_A of every card of the universe and its k_inner
 * table), the Guest answers `mp_setup_b` (every blob_A wrapped in blob_B, shuffled, and its k_outer
 * table). Each table seals one card key per label under the side's RSA key, for the OTs of the deal.
 */
import { toHex } from '../crypto/encoding.js';
import type { Message } from '../hooks/types.js';
import { parseJsonExact } from './canonical.js';
import { Stop, type Game, type Table } from './game.js';
import { bad, hexBytes, list, object, parse, peerCrypto } from './peer-fields.js';
import { setupPayload } from './transcript.js';

/** The setup's first step: the Host sends its table at once, the Guest waits for the Host's. */
export async function openSetup(g: Game): Promise<void> {
  const { crypto, hooks, secrets } = g.cfg;
  g.emit('mp_setup_started', { role: g.role });
  // Making an RSA key is most of a game's cost: both sides start theirs now, so the Guest's is made
  // while the Host makes its own, not after the Host's table arrives. A failure is reported where the
  // table takes the key.
  g.rsaPending = secrets.rsaKey();
  g.rsaPending.catch(() => undefined);
  if (g.role !== 'host') return;
  const universe = await g.hook('proto_mp_deck_universe', () => hooks.proto_mp_deck_universe());
  g.ledger.reset(universe.length);
  const plain = (i: number) => {
    const [r, s] = universe[i]!;
    return crypto.deck.packInner(crypto.deck.encodeCard(r, s), secrets.pad(i));
  };
  g.send(await buildTable(g, plain));
  g.emit('mp_setup_completed', { role: g.role, deck_size: g.n });
}

/** The peer's table; the Guest answers the Host's with its own, over a shuffle of the Host's blobs. */
export async function takeTable(g: Game, m: Message): Promise<void> {
  g.tables[g.peer] = readTable(g, m);
  if (g.role !== 'guest') return;
  const hostTable = g.table('host');
  g.ledger.reset(hostTable.blobs.length);
  const perm = g.cfg.secrets.shuffle(g.n);
  perm.forEach((idA, idB) => g.idAOfIdB.set(String(idB), idA));
  g.send(await buildTable(g, (j) => hostTable.blobs[perm[j]!]!));
  g.emit('mp_setup_completed', { role: g.role, deck_size: g.n });
}

/** Builds this side's table: the Host's blob_A over the universe, the Guest's blob_B over the shuffled blob_As. */
async function buildTable(g: Game, plain: (i: number) => Uint8Array): Promise<Message> {
  const { crypto, secrets } = g.cfg;
  const pending = g.rsaPending;
  g.rsaPending = null;
  const rsa = await g.hook('rsaKey', () => pending ?? secrets.rsaKey());
  g.rsa = rsa;
  const prefix = g.role === 'host' ? 'h-' : 'g-';
  const blobs: Uint8Array[] = [];
  const sealed = new Map<string, string>();
  for (let i = 0; i < g.n; i++) {
    const k = secrets.cardKey(i);
    g.cardKeys.push(k);
    // sealOuter takes only a 44-byte blob_A: a Host blob of another size (which would mark its card) is refused.
    blobs.push(
      g.role === 'host'
        ? crypto.deck.sealInner(k, secrets.blobNonce(i), plain(i))
        : peerCrypto(`blob_A ${i}`, () => crypto.deck.sealOuter(k, secrets.blobNonce(i), plain(i))),
    );
    const label = `${prefix}${i}`;
    const s = rsa.sealLabel(g.otContext(g.role, label), k, secrets.sealNonce(label));
    g.ownTokens.set(label, s.token);
    sealed.set(label, toHex(s.sealed));
  }
  const table: Table = { pub: { e: 65537, n: rsa.n }, pubObject: object(parseJsonExact(rsa.rsaPub), 'rsa_pub'), blobs, blobsHex: blobs.map(toHex), sealed };
  g.tables[g.role] = table;
  const action = g.role === 'host' ? 'mp_setup_a' : 'mp_setup_b';
  g.transcript.append(action, setupPayload(table.pubObject, table.blobsHex, Object.fromEntries(sealed)));
  return {
    action,
    rsa_pub: rsa.rsaPub,
    blobs: table.blobsHex,
    sealed_keys: table.blobsHex.map((_, i) => JSON.stringify({ label: `${prefix}${i}`, c: sealed.get(`${prefix}${i}`) })),
  };
}

/** Reads the peer's `mp_setup_a` / `mp_setup_b`. */
function readTable(g: Game, m: Message): Table {
  const host = g.role === 'host';
  const action = host ? 'mp_setup_b' : 'mp_setup_a';
  if (m.action !== action) throw new Stop('unexpected_message', `expected the ${g.peer}'s ${action}, got ${m.action}`);
  const prefix = host ? 'g-' : 'h-';
  const pubObject = object(parse(m['rsa_pub'], `${action}.rsa_pub`), `${action}.rsa_pub`);
  const pub = peerCrypto(`${action}.rsa_pub`, () => g.cfg.crypto.ot.decodeRsaPub(pubObject));
  const blobsHex = list(m, 'blobs').map((b, i) => {
    if (typeof b !== 'string') throw bad(`${action}.blobs[${i}] is not a string`);
    return b;
  });
  const keys = list(m, 'sealed_keys');
  if (keys.length !== blobsHex.length || (host && blobsHex.length !== g.n))
    throw bad(`${action}: sealed_keys and blobs differ in length${host ? ' or from the deck' : ''}`);
  const sealed = new Map<string, string>();
  keys.forEach((k, i) => {
    const o = object(parse(k, `${action}.sealed_keys[${i}]`), `${action}.sealed_keys[${i}]`);
    if (o['label'] !== `${prefix}${i}`) throw bad(`${action}: sealed_keys[${i}] label mismatch`);
    if (typeof o['c'] !== 'string') throw bad(`${action}: sealed_keys[${i}].c is not a string`);
    sealed.set(`${prefix}${i}`, o['c']);
  });
  const blobs = blobsHex.map((h, i) => hexBytes(h, `${action}.blobs[${i}]`));
  g.transcript.append(action, setupPayload(pubObject, blobsHex, Object.fromEntries(sealed)));
  return { pub, pubObject, blobs, blobsHex, sealed };
}
