/**
 * Cards change hands by oblivious transfer: a side fetches the key of one card of the peer's table
 * (`mp_ot_request` with its blinded label, answered by `mp_ot_response`) without the peer learning
 * which. The hooks' deal plan is dealt this way, the Guest's cards first; a draw in play is one more OT,
 * for the lowest id-B still in the stock. Every OT, both ways, is recorded for the audit.
 */
import { toHex } from '../crypto/encoding.js';
import { intToHex } from '../crypto/ot.js';
import type { Message, Role } from '../hooks/types.js';
import { Stop, type Game, type Table, type Wait } from './game.js';
import { bytesToBigint } from './numbers.js';
import { bad, hexBytes, peerCrypto, str, wireInt } from './peer-fields.js';
import { drawPayload, otPayload } from './transcript.js';

/** An OT this side requested, waiting for its answer. */
interface Fetch {
  idB: string;
  draw: boolean;
  otId: string;
  label: string;
  table: Table;
  ctx: Uint8Array;
  r: Uint8Array;
  z: Uint8Array;
}

export class OtDeal {
  private fetch: Fetch | null = null;
  /** The deal plan as id-Bs and their owners, in the order they are dealt, and how many are dealt. */
  private deals: { owner: Role; idB: string }[] = [];
  private dealt = 0;

  constructor(private readonly g: Game) {}

  /** Takes the hooks' deal plan; `next` then deals it. */
  async plan(): Promise<void> {
    const g = this.g;
    const plan = await g.hook('proto_mp_initial_deal', () => g.cfg.hooks.proto_mp_initial_deal({}));
    const [guest, host] = [plan?.guest ?? 0, plan?.host ?? 0];
    if (!Number.isSafeInteger(guest) || !Number.isSafeInteger(host) || guest < 0 || host < 0 || guest + host > g.n)
      throw new Stop('hook_error', 'deal plan asks for more cards than the deck');
    g.deal = { host, guest };
    const ids = Array.from({ length: g.n }, (_, i) => String(i));
    this.deals = [
      ...ids.slice(0, guest).map((idB) => ({ owner: 'guest' as const, idB })),
      ...ids.slice(guest, guest + host).map((idB) => ({ owner: 'host' as const, idB })),
    ];
  }

  /** Starts the next deal card: this side's OT for its own, or the wait for the peer's; 'dealt' once all are. */
  next(): Wait | 'dealt' {
    const d = this.deals[this.dealt];
    if (!d) return 'dealt';
    this.g.emit('deal_requested', { owner: d.owner });
    if (d.owner !== this.g.role) return 'deal_request';
    this.request(d.idB, false);
    return 'ot_response';
  }

  /** The peer's OT for its deal card. */
  takeDealRequest(msg: Message): Wait | 'dealt' {
    const g = this.g;
    const { idB } = this.deals[this.dealt]!;
    g.emit('mp_ot_started', { ot_id: msg['id'], direction: 'received' });
    const otId = this.answer(msg);
    g.otIdToIdB.set(otId, idB);
    g.ledger.dealTo(g.peer, idB);
    this.dealt++;
    return this.next();
  }

  /** This side's OT for card id-B `idB` from the peer's table. */
  request(idB: string, draw: boolean): void {
    const g = this.g;
    const { crypto, secrets } = g.cfg;
    const table = g.table(g.peer);
    const label = g.role === 'host' ? `g-${idB}` : `h-${g.idAOfIdB.get(idB)!}`;
    const otId = `${g.role}-${g.otCount++}`;
    g.otIdToIdB.set(otId, idB);
    const ctx = g.otContext(g.peer, label);
    const r = secrets.blinding(otId, table.pub.n);
    const z = crypto.ot.blind(table.pub.n, ctx, r);
    g.emit('mp_ot_started', { ot_id: otId, direction: 'sent', ...(draw ? { kind: 'draw' } : {}) });
    g.send({ action: 'mp_ot_request', id: otId, z: intToHex(z) });
    this.fetch = { idB, draw, otId, label, table, ctx, r, z };
  }

  /** The answer to this side's OT: the card joins this side's hand, face and keys. Answers whether it was a draw (else a deal card). */
  takeResponse(msg: Message): boolean {
    const g = this.g;
    const { crypto } = g.cfg;
    const { idB, draw, otId, label, table, ctx, r, z } = this.fetch!;
    this.fetch = null;
    if (msg.action !== 'mp_ot_response' || msg['id'] !== otId)
      throw new Stop(
        'unexpected_message',
        `expected the ${g.peer}'s mp_ot_response to ${otId}, got ${msg.action}${typeof msg['id'] === 'string' ? ` ${msg['id']}` : ''}`,
      );
    const y = wireInt(msg, 'y');
    const sealedHex = table.sealed.get(label);
    const sealed = sealedHex === undefined ? null : hexBytes(sealedHex, `sealed entry ${label}`);
    const key = peerCrypto(`OT ${otId}`, () => crypto.ot.openSealed(crypto.ot.unblind(table.pub.n, y, r), ctx, sealed ?? new Uint8Array(0)));
    const blobB = g.table('guest').blobs[Number(idB)]!;
    let kInner: Uint8Array;
    let kOuter: Uint8Array;
    let blobA: Uint8Array;
    if (g.role === 'guest') {
      kInner = key;
      kOuter = g.cardKeys[Number(idB)]!;
      blobA = crypto.deck.openLayer(kOuter, blobB);
    } else {
      kOuter = key;
      blobA = peerCrypto(`blob_B of id-B ${idB}`, () => crypto.deck.openLayer(kOuter, blobB));
      const idA = g.table('host').blobsHex.indexOf(toHex(blobA));
      if (idA < 0) throw bad(`blob_A of id-B ${idB} is not in the Host's table`);
      g.idAOfIdB.set(idB, idA);
      kInner = g.cardKeys[idA]!;
    }
    const plain = peerCrypto(`card ${idB}`, () => crypto.deck.openLayer(kInner, blobA));
    this.record(otId, z, y);
    if (draw) g.transcript.append('mp_draw', drawPayload(g.role, otId));
    g.ownWitnesses.push({ otId, label, r: bytesToBigint(r) });
    g.ledger.dealTo(g.role, idB);
    g.myKeys.set(idB, { kInner, kOuter });
    g.myCards.set(idB, [plain[0]!, plain[1]!]);
    // Not the label: a Guest's label names the id-A behind one of its id-Bs (its shuffle), and events are
    // written to disk while the game runs; the label is disclosed in the witnesses, after play.
    g.emit('mp_ot_completed', { ot_id: otId, ...(draw ? { kind: 'draw' } : {}) });
    if (!draw) this.dealt++;
    return draw;
  }

  /** Answers the peer's OT request from this side's table and records the OT; answers its ot_id. */
  answer(msg: Message): string {
    const g = this.g;
    if (msg.action !== 'mp_ot_request') throw new Stop('unexpected_message', `expected the ${g.peer}'s mp_ot_request, got ${msg.action}`);
    const otId = str(msg, 'id');
    const z = wireInt(msg, 'z');
    const y = peerCrypto(`mp_ot_request ${otId}`, () => g.rsa!.privateOp(z));
    g.send({ action: 'mp_ot_response', id: otId, y: intToHex(y) });
    this.record(otId, z, y);
    return otId;
  }

  private record(otId: string, z: Uint8Array, y: Uint8Array): void {
    const zi = bytesToBigint(z);
    this.g.otRecords.push({ otId, z: zi });
    this.g.transcript.append('mp_ot', otPayload(otId, zi, bytesToBigint(y)));
  }
}
