// Cheating peers playing real games against our engine, in memory: the cheater is our own mode with a
// wrapper that alters what it sends (and, where the cheat needs it, what it reads). Each cheat must end
// the honest side with the exact audit reason and evidence (or the play rejection), and a proof claim
// naming the offender and the failed step.
//
// Every game is the pinned deal of deal.ts: the sides' RSA keys from test/mp/fixtures/ot-keys.json,
// card keys, nonces, pads and blinding values from a fixed seed, and the identity shuffle. So each game
// is the same game up to its cheat, on either backend, byte for byte. `cheatSuite` runs every case on
// the wasm backend (cheats-wasm.test.ts); `backendsAgree` runs every case on both backends and asks the
// js run to be the wasm run, message for message and verdict for verdict, and to pass the case's checks
// itself (cheats-js.test.ts). Live key generation is tested in test/crypto/mp-ot.test.ts and
// test/mp/mode.test.ts.
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { fromHex, toHex } from '../../ts/crypto/encoding.js';
import { intFromHex, intToHex, PAYLOAD_K_INNER, PAYLOAD_K_OUTER, ROLE_GUEST, ROLE_HOST, type Ot } from '../../ts/crypto/ot.js';
import type { Crypto } from '../../ts/crypto/backend.js';
import type { HooksModule, MentalPokerHooks, Message, Role } from '../../ts/hooks/types.js';
import { instantiateHooks } from '../../ts/hooks/load.js';
import type { MpEffect, MpInput, MpMode } from '../../ts/mp/mode.js';
import type { MpSecrets } from '../../ts/mp/secrets.js';
import crazyEights, { makeDeck } from '../../ts/protocols/crazy-eights/hooks.js';
import { replayGame } from '../../ts/mp/replay.js';
import { runPair, type PairRun, type SideSetup } from './pair.js';
import { dealBytes, dealSecrets, dealUnit, memoCrypto } from './deal.js';

const PROTOCOL = 'Crazy Eights';
const SESSION = 'cheat-session';
const other = (r: Role): Role => (r === 'host' ? 'guest' : 'host');

/** The pinned deal's secrets (identity shuffle), the blinding values drawn kept (a cheat may need its own r ahead of time). */
function fixedSecrets(ot: Ot, role: Role): MpSecrets & { rs: Map<string, Uint8Array> } {
  const base = dealSecrets(ot, role);
  const rs = new Map<string, Uint8Array>();
  return {
    ...base,
    rs,
    blinding(otId, n) {
      if (!rs.has(otId)) rs.set(otId, base.blinding(otId, n));
      return rs.get(otId)!;
    },
  };
}

/** A mode whose outgoing messages pass through `out` (null drops one) and incoming ones through `in`. */
function rewrite(f: { out?: (msg: Message) => Message | null; in?: (msg: Message) => Message }): (mode: MpMode) => MpMode {
  return (mode) => ({
    get transcript() {
      return mode.transcript;
    },
    get ended() {
      return mode.ended;
    },
    async step(input: MpInput) {
      const i = input.kind === 'message' && f.in ? { ...input, msg: f.in(input.msg) } : input;
      const effects = await mode.step(i);
      return effects.flatMap((e): MpEffect[] => {
        if (e.kind !== 'send' || !f.out) return [e];
        const m = f.out(structuredClone(e.msg));
        return m ? [{ ...e, msg: m }] : [];
      });
    },
  });
}

const onAction = (action: string, change: (m: Message) => Message) => (m: Message) => (m.action === action ? change(m) : m);
const editJsonItems = (m: Message, field: string, edit: (items: Record<string, string>[]) => Record<string, string>[]): Message => ({
  ...m,
  [field]: edit((m[field] as string[]).map((s) => JSON.parse(s) as Record<string, string>)).map((o) => JSON.stringify(o)),
});
const flipHex = (h: string, at = 0) => h.slice(0, at) + (h[at] === '0' ? '1' : '0') + h.slice(at + 1);
const plusOne = (h: string) => (BigInt(`0x${h}`) + 1n).toString(16).padStart(512, '0');

/**
 * A Receiver that fetches two of its deal cards in swapped OTs: OT `a` carries the blinded label of
 * OT `b`'s card and the other way round. It learns a card ahead of its turn (the peek the per-OT record
 * exists to catch), feeds its own mode the answers in the order the mode expects, and publishes
 * witnesses that tell the truth about each wire request.
 */
function swappedOts(
  crypto: Crypto & { ot: Ot },
  cheater: Role,
  secrets: ReturnType<typeof fixedSecrets>,
  a: string,
  b: string,
  labelOf: (otId: string) => string,
): (mode: MpMode) => MpMode {
  return (mode) => {
    let n: Uint8Array | null = null;
    let heldA: Message | null = null;
    let yB: string | null = null;
    let yA: string | null = null;
    const z = (otId: string) => {
      const ctx = crypto.ot.context({
        protocolId: PROTOCOL,
        sessionId: SESSION,
        senderRole: cheater === 'host' ? ROLE_GUEST : ROLE_HOST,
        payloadType: cheater === 'host' ? PAYLOAD_K_OUTER : PAYLOAD_K_INNER,
        label: labelOf(otId),
      });
      return intToHex(crypto.ot.blind(n!, ctx, secrets.blinding(otId, n!)));
    };
    const outgoing = (effects: MpEffect[]): Promise<MpEffect[]> => {
      const out: MpEffect[] = [];
      let feedB = false;
      for (const e of effects) {
        if (e.kind === 'send' && e.msg.action === 'mp_ot_request' && e.msg['id'] === a) {
          heldA = e.msg;
          out.push({ kind: 'send', msg: { action: 'mp_ot_request', id: a, z: z(b) } });
        } else if (e.kind === 'send' && e.msg.action === 'mp_ot_request' && e.msg['id'] === b) {
          feedB = true; // already on the wire as OT a
        } else if (e.kind === 'send' && e.msg.action === 'mp_witness') {
          out.push({
            kind: 'send',
            msg: editJsonItems(e.msg, 'witnesses', (ws) => {
              const wa = ws.find((w) => w['ot_id'] === a)!;
              const wb = ws.find((w) => w['ot_id'] === b)!;
              [wa['label'], wb['label'], wa['r'], wb['r']] = [wb['label']!, wa['label']!, wb['r']!, wa['r']!];
              return ws;
            }),
          });
        } else out.push(e);
      }
      if (!feedB) return Promise.resolve(out);
      return mode.step({ kind: 'message', msg: { action: 'mp_ot_response', id: b, y: yB! } }).then((more) => outgoing(more).then((rest) => [...out, ...rest]));
    };
    return {
      get transcript() {
        return mode.transcript;
      },
      get ended() {
        return mode.ended;
      },
      async step(input: MpInput) {
        if (input.kind === 'message') {
          const m = input.msg;
          if (m.action === (cheater === 'host' ? 'mp_setup_b' : 'mp_setup_a')) n = fromHex((JSON.parse(m['rsa_pub'] as string) as { n: string }).n);
          if (m.action === 'mp_ot_response' && m['id'] === a && heldA) {
            // The answer for b's card; now fetch a's card as OT b, before the mode is told anything.
            yB = m['y'] as string;
            return [{ kind: 'send', msg: { action: 'mp_ot_request', id: b, z: heldA['z'] } }];
          }
          if (m.action === 'mp_ot_response' && m['id'] === b && yB && !yA) {
            yA = m['y'] as string;
            return outgoing(await mode.step({ kind: 'message', msg: { action: 'mp_ot_response', id: a, y: yA } }));
          }
        }
        return outgoing(await mode.step(input));
      },
    };
  };
}

/**
 * A Guest that spends its deal OT `otId` (the card at id-B `idB`, label h-<idB> under the identity
 * shuffle) on `label`, a label outside the Host's table, then publishes the honest witness of that
 * request (`label` and its real r): the witness verifies against z, but names no card. The Guest never
 * learns the card it skipped; its wrapper lets its own mode carry on by showing it, in place of that
 * card's blob_A and sealed entry, ones it made itself (a face no game uses, under a key and token of its
 * own), and sends the Host the blob_B its mode would have made over the real blob_A. The mode's view
 * (and its transcript) differs from the wire only in that card, which it can never play.
 */
function unlistedLabel(
  crypto: Crypto & { ot: Ot },
  secrets: ReturnType<typeof fixedSecrets>,
  otId: string,
  idB: number,
  label: string,
): { wrap: (mode: MpMode) => MpMode; secrets: MpSecrets } {
  // The wrapper rebuilds one blob_B, so the card keys and nonces it was made of are kept.
  const memo = <T>(f: (i: number) => T) => {
    const m = new Map<number, T>();
    return (i: number) => (m.has(i) || m.set(i, f(i)), m.get(i)!);
  };
  const kept: MpSecrets = {
    ...secrets,
    cardKey: memo((i) => secrets.cardKey(i)),
    blobNonce: memo((i) => secrets.blobNonce(i)),
    blinding: (id, n) => secrets.blinding(id, n),
  };
  const ctx = (l: string) => crypto.ot.context({ protocolId: PROTOCOL, sessionId: SESSION, senderRole: ROLE_HOST, payloadType: PAYLOAD_K_INNER, label: l });
  const big = (b: Uint8Array) => BigInt(`0x${toHex(b)}`);
  let n: Uint8Array | null = null;
  let realBlobA: Uint8Array | null = null;
  let fakeToken: Uint8Array | null = null;
  return {
    secrets: kept,
    wrap: (mode) => ({
      get transcript() {
        return mode.transcript;
      },
      get ended() {
        return mode.ended;
      },
      async step(input: MpInput) {
        let i = input;
        if (input.kind === 'message' && input.msg.action === 'mp_setup_a') {
          const m = structuredClone(input.msg);
          n = fromHex((JSON.parse(m['rsa_pub'] as string) as { n: string }).n);
          const blobs = m['blobs'] as string[];
          realBlobA = fromHex(blobs[idB]!);
          const fakeKey = dealBytes('guest|fake-card-key', 32);
          blobs[idB] = toHex(crypto.deck.sealInner(fakeKey, new Uint8Array(12), crypto.deck.packInner(crypto.deck.encodeCard(255, 255), new Uint8Array(14))));
          fakeToken = dealUnit('guest|fake-token', n);
          const c = ctx(`h-${idB}`);
          (m['sealed_keys'] as string[])[idB] = JSON.stringify({
            label: `h-${idB}`,
            c: toHex(crypto.ot.sealPayload(crypto.ot.tokenKey(fakeToken, c), new Uint8Array(12), fakeKey, c)),
          });
          i = { ...input, msg: m };
        } else if (input.kind === 'message' && input.msg.action === 'mp_ot_response' && input.msg['id'] === otId) {
          // The answer the mode unblinds to the token of its own sealed entry.
          const r = secrets.rs.get(otId)!;
          i = { ...input, msg: { ...input.msg, y: ((big(fakeToken!) * big(r)) % big(n!)).toString(16).padStart(512, '0') } };
        }
        const effects = await mode.step(i);
        return effects.map((e): MpEffect => {
          if (e.kind !== 'send') return e;
          const m = structuredClone(e.msg);
          if (m.action === 'mp_setup_b') (m['blobs'] as string[])[idB] = toHex(crypto.deck.sealOuter(kept.cardKey(idB), kept.blobNonce(idB), realBlobA!));
          else if (m.action === 'mp_ot_request' && m['id'] === otId) m['z'] = intToHex(crypto.ot.blind(n!, ctx(label), secrets.rs.get(otId)!));
          else if (m.action === 'mp_witness')
            return { ...e, msg: editJsonItems(m, 'witnesses', (ws) => ws.map((w) => (w['ot_id'] === otId ? { ...w, label } : w))) };
          return { ...e, msg: m };
        });
      },
    }),
  };
}

interface Expect {
  reason: string;
  evidence?: unknown;
  /** For play rejections: the verifier's end reason and detail. */
  end?: 'play_rejected' | 'rule_rejected';
}

type OtCrypto = Crypto & { ot: Ot };
type Tools = { crypto: OtCrypto; secrets: ReturnType<typeof fixedSecrets> };

/** One game of the suite: the honest one, or one cheat. */
export interface CheatCase {
  /** The test's title. */
  title: string;
  cheater: Role;
  /** The cheater's setup, made afresh for each game (so a cheat's own counters start at zero in every run). */
  cheat: (t: Tools) => Partial<SideSetup>;
  /** How the honest side must end (none for the honest game). */
  expect?: Expect;
  /** Checks beyond the verdict, on the run and with the backend that played it. */
  more?: (run: PairRun, crypto: OtCrypto) => void;
}

/** A backend with its private operations and token checks memoized (deal.ts), one per backend per test file. */
const backends = new Map<'wasm' | 'js', OtCrypto>();
function backend(name: 'wasm' | 'js'): OtCrypto {
  if (!backends.has(name)) backends.set(name, memoCrypto(getCrypto(name)));
  return backends.get(name)!;
}

/** Plays the pinned deal with `c`'s cheat on `crypto`. */
async function game(crypto: OtCrypto, c: CheatCase): Promise<PairRun> {
  const secrets = { host: fixedSecrets(crypto.ot, 'host'), guest: fixedSecrets(crypto.ot, 'guest') };
  const side = (r: Role, seed: number): SideSetup => ({
    secrets: secrets[r],
    seed: new Uint8Array(32).fill(seed),
    ...(r === c.cheater ? c.cheat({ crypto, secrets: secrets[r] }) : {}),
  });
  return runPair({
    crypto,
    module: crazyEights as HooksModule,
    options: {},
    otProtocolId: PROTOCOL,
    sessionId: SESSION,
    host: side('host', 1),
    guest: side('guest', 2),
  });
}

function expectCaught(run: PairRun, cheater: Role, e: Expect): void {
  const end = run.ends[other(cheater)]!;
  expect(end, 'the honest side ended').toBeTruthy();
  if (e.end) {
    expect([end.reason, end.detail]).toEqual([e.end, `peer play ${e.end === 'rule_rejected' ? 'rule-rejected' : 'rejected'}: ${e.reason}`]);
    expect(run.sent[other(cheater)].at(-1)).toEqual({ action: 'error', reason: e.end });
  } else {
    expect(end.reason, end.detail).toBe('audit_failed');
    expect(end.audit?.reason).toBe(e.reason);
    if ('evidence' in e) expect(end.audit?.evidence).toEqual(e.evidence);
    expect(end.result).toMatchObject({ completed: true, audit_passed: false });
    // No receipt is signed over a game that failed its audit.
    expect(run.sent[other(cheater)].some((m) => m.action === 'mp_terminal_receipt')).toBe(e.reason === 'peer_receipt_signature_invalid');
  }
  expect(end.proof).toMatchObject({ offender: cheater, reason: e.reason });
  if (e.evidence !== undefined) expect(end.proof!.evidence).toEqual(e.evidence);
  expect(end.receipt).toBeNull();
}

/** Every check of a case on a run of it. */
function check(run: PairRun, c: CheatCase, crypto: OtCrypto): void {
  if (c.expect) expectCaught(run, c.cheater, c.expect);
  c.more?.(run, crypto);
}

/** The games of the suite, in order: the honest game, then the cheats. */
export function cheatCases(): CheatCase[] {
  const cases: CheatCase[] = [
    {
      title: 'the honest game these cheats alter completes, and never fetches card 51 (whose sealed entries are poisoned below)',
      cheater: 'host',
      cheat: () => ({}),
      more(run) {
        expect([run.ends.host!.reason, run.ends.guest!.reason]).toEqual(['completed', 'completed']);
        const witnesses = run.sent.host
          .concat(run.sent.guest)
          .filter((m) => m.action === 'mp_witness')
          .flatMap((m) => (m['witnesses'] as string[]).map((s) => JSON.parse(s) as { label: string }));
        expect(witnesses.some((w) => w.label.endsWith('-51'))).toBe(false);
      },
    },
  ];

  for (const cheater of ['host', 'guest'] as const) {
    const [setup, pre, key] = cheater === 'host' ? ['mp_setup_a', 'h-', 'k_inner'] : ['mp_setup_b', 'g-', 'k_outer'];
    // The n-th mp_ot_response for `id`, counted from 0 in each game.
    const nth = () => {
      let seen = 0;
      return (m: Message, id: string, n: number) => m.action === 'mp_ot_response' && m['id'] === id && seen++ === n;
    };
    const list: [string, (t: Tools) => Partial<SideSetup>, Expect][] = [
      [
        `poisoned sealed payload (${pre}51, never fetched)`,
        () => ({ wrap: rewrite({ out: onAction(setup, (m) => editJsonItems(m, 'sealed_keys', (ks) => ((ks[51]!['c'] = flipHex(ks[51]!['c']!, 40)), ks))) }) }),
        { reason: 'sealed_payload_poisoned', evidence: { label: `${pre}51` } },
      ],
      [
        `forged token (${pre}7 + 1)`,
        () => ({
          wrap: rewrite({
            out: onAction('mp_opening', (m) =>
              editJsonItems(m, 'openings', (es) =>
                es.map((e) => (e['kind'] === 'token' && e['label'] === `${pre}7` ? { ...e, token: plusOne(e['token']!) } : e)),
              ),
            ),
          }),
        }),
        { reason: 'forged_token', evidence: { label: `${pre}7` } },
      ],
      [
        `keyset mismatch (token of ${pre}0 withheld)`,
        () => ({
          wrap: rewrite({
            out: onAction('mp_opening', (m) => editJsonItems(m, 'openings', (es) => es.filter((e) => !(e['kind'] === 'token' && e['label'] === `${pre}0`)))),
          }),
        }),
        { reason: 'keyset_mismatch' },
      ],
      [
        `wrong ${key} disclosed for ${pre}5`,
        () => ({
          wrap: rewrite({
            out: onAction('mp_opening', (m) =>
              editJsonItems(m, 'openings', (es) => es.map((e) => (e['kind'] === key && e['label'] === `${pre}5` ? { ...e, k: flipHex(e['k']!, 3) } : e))),
            ),
          }),
        }),
        cheater === 'host'
          ? { reason: 'payload_mismatch', evidence: { label: 'h-5' } }
          : { reason: 'derive_id_map_failed', evidence: { detail: "cannot open blob_B for id_b '5'" } },
      ],
      [
        `witness for another label`,
        () => ({
          wrap: rewrite({
            out: onAction('mp_witness', (m) => editJsonItems(m, 'witnesses', (ws) => ((ws[0]!['label'] = `${cheater === 'host' ? 'g-' : 'h-'}40`), ws))),
          }),
        }),
        { reason: 'bad_witness', evidence: { ot_id: `${cheater}-0` } },
      ],
      [
        `a witness withheld`,
        () => ({ wrap: rewrite({ out: onAction('mp_witness', (m) => editJsonItems(m, 'witnesses', (ws) => ws.slice(1))) }) }),
        { reason: 'witness_transcript_mismatch', evidence: { missing: [`${cheater}-0`], extra: [] } },
      ],
      [
        `a witness repeated`,
        () => ({ wrap: rewrite({ out: onAction('mp_witness', (m) => editJsonItems(m, 'witnesses', (ws) => [...ws, ws[0]!])) }) }),
        { reason: 'duplicate_witness_ot_id', evidence: null },
      ],
      [
        `a witness for an OT that never happened`,
        () => ({
          wrap: rewrite({
            out: onAction('mp_witness', (m) =>
              editJsonItems(m, 'witnesses', (ws) => [...ws, { ot_id: `${cheater}-999`, label: `${pre}0`, r: '1'.padStart(512, '0') }]),
            ),
          }),
        }),
        { reason: 'ot_snapshot_missing', evidence: { ot_id: `${cheater}-999` } },
      ],
      [
        `duplicate OT id (its second OT sent as ${cheater}-0)`,
        () => {
          const second = nth();
          return {
            wrap: rewrite({
              out: onAction('mp_ot_request', (m) => (m['id'] === `${cheater}-1` ? { ...m, id: `${cheater}-0` } : m)),
              in: (m) => (second(m, `${cheater}-0`, 1) ? { ...m, id: `${cheater}-1` } : m),
            }),
          };
        },
        { reason: 'ot_snapshot_missing', evidence: { ot_id: `${cheater}-1` } },
      ],
      [
        `duplicate OT id, its witness relabelled too`,
        () => {
          const second = nth();
          return {
            wrap: rewrite({
              out: (m) =>
                m.action === 'mp_ot_request' && m['id'] === `${cheater}-1`
                  ? { ...m, id: `${cheater}-0` }
                  : m.action === 'mp_witness'
                    ? editJsonItems(m, 'witnesses', (ws) => ws.map((w) => (w['ot_id'] === `${cheater}-1` ? { ...w, ot_id: `${cheater}-0` } : w)))
                    : m,
              in: (m) => (second(m, `${cheater}-0`, 1) ? { ...m, id: `${cheater}-1` } : m),
            }),
          };
        },
        { reason: 'duplicate_transcript_ot_id', evidence: null },
      ],
      [
        `peeked non-hand card (two deal OTs swapped)`,
        ({ crypto, secrets }) => ({
          wrap: swappedOts(crypto, cheater, secrets, `${cheater}-1`, `${cheater}-2`, (otId) =>
            cheater === 'guest' ? `h-${otId.slice(-1)}` : `g-${5 + Number(otId.slice(-1))}`,
          ),
        }),
        {
          reason: 'peeked_non_hand',
          evidence: cheater === 'guest' ? { ot_id: 'guest-1', id_b: '2', label: 'h-2' } : { ot_id: 'host-1', id_b: '7', label: 'g-7' },
        },
      ],
      [
        `bad terminal receipt`,
        () => ({ wrap: rewrite({ out: onAction('mp_terminal_receipt', (m) => ({ ...m, signature: flipHex(m['signature'] as string, 127) })) }) }),
        { reason: 'peer_receipt_signature_invalid', evidence: null },
      ],
      [
        `play with a wrong k_inner`,
        () => ({ wrap: rewrite({ out: onAction('mp_play', (m) => ({ ...m, k_inner: flipHex(m['k_inner'] as string) })) }) }),
        { reason: 'invalid_keys_or_blob', end: 'play_rejected' },
      ],
      [
        `play declaring another face`,
        () => ({ wrap: rewrite({ out: onAction('mp_play', (m) => ({ ...m, suit: ((m['suit'] as number) + 1) % 4 })) }) }),
        { reason: 'card_face_mismatch', end: 'play_rejected' },
      ],
      [
        `play of a card not in its hand`,
        () => ({ wrap: rewrite({ out: onAction('mp_play', (m) => ({ ...m, id_b: '51' })) }) }),
        { reason: 'card_not_in_hand', end: 'play_rejected' },
      ],
      [
        `play against the rules (call_suit on a card that is not an 8)`,
        () => ({ wrap: rewrite({ out: onAction('mp_play', (m) => (m['rank'] === 6 ? m : { ...m, call_suit: 0 })) }) }),
        { reason: 'unexpected_call_suit', end: 'rule_rejected' },
      ],
    ];
    for (const [name, cheat, e] of list) cases.push({ title: `${cheater} cheats: ${name} → ${e.end ?? 'audit'} ${e.reason}`, cheater, cheat, expect: e });
  }

  const evidence = { label: 'h-99', ot_id: 'guest-4' };
  cases.push({
    title: "guest cheats: a deal OT for a label outside the Host's table (h-99), honestly witnessed → audit label_not_in_map",
    cheater: 'guest',
    cheat: ({ crypto, secrets }) => unlistedLabel(crypto, secrets, 'guest-4', 4, 'h-99'),
    expect: { reason: 'label_not_in_map', evidence },
    more(run, crypto) {
      // The claim points at the Guest's mp_witness, the message that completed the evidence.
      expect(run.ends.host!.proof!.message).toBe(run.sent.guest.findIndex((m) => m.action === 'mp_witness'));
      // The witness is honest about the wire: z == FDH(h-99)·r^e under the Host's key, so bad_witness cannot be what caught it.
      const setupA = run.sent.host.find((m) => m.action === 'mp_setup_a')!;
      const n = fromHex((JSON.parse(setupA['rsa_pub'] as string) as { n: string }).n);
      const z = intFromHex(run.sent.guest.find((m) => m.action === 'mp_ot_request' && m['id'] === 'guest-4')!['z'] as string);
      const w = (run.sent.guest.find((m) => m.action === 'mp_witness')!['witnesses'] as string[])
        .map((x) => JSON.parse(x) as Record<string, string>)
        .find((x) => x['ot_id'] === 'guest-4')!;
      const hostCtx = (label: string) =>
        crypto.ot.context({ protocolId: PROTOCOL, sessionId: SESSION, senderRole: ROLE_HOST, payloadType: PAYLOAD_K_INNER, label });
      expect(w['label']).toBe('h-99');
      expect(crypto.ot.checkWitness(n, hostCtx('h-99'), z, intFromHex(w['r']!))).toBe(true);
      expect(crypto.ot.checkWitness(n, hostCtx('h-4'), z, intFromHex(w['r']!))).toBe(false);
      // The game went on to its end: the skipped card was never played.
      expect(run.sent.guest.some((m) => m.action === 'mp_play' && m['id_b'] === '4')).toBe(false);
      // An offline verifier replaying the wire as the Host reaches the same verdict.
      const replay = replayGame(
        crypto,
        run.wire.map(({ from, msg }) => ({ direction: from === 'host' ? 'host_to_guest' : 'guest_to_host', message: msg })),
        {
          verifier: 'host',
          protocolId: PROTOCOL,
          sessionId: SESSION,
          universe: makeDeck(),
          deal: run.ends.host!.deal!,
          peerPublicKey: crypto.ed25519PublicKey(new Uint8Array(32).fill(2)),
        },
      );
      expect(replay.verdict).toEqual({ auditPassed: false, auditFailure: { reason: 'label_not_in_map', evidence }, raised: null });
    },
  });

  // A deck only the Host builds: its universe with a card missing or doubled; the Guest's own shuffle doubled.
  const withUniverse = (edit: (u: [number, number][]) => [number, number][]) => (): Partial<SideSetup> => {
    const h = instantiateHooks(crazyEights as HooksModule<'mental_poker'>, {
      role: 'host',
      options: {},
      args: [],
      stateDir: '/nonexistent',
      decision: null,
      random: () => 0.5,
    }) as MentalPokerHooks;
    const universe = h.proto_mp_deck_universe.bind(h);
    h.proto_mp_deck_universe = () => edit(universe().map(([r, s]) => [r, s]));
    return { hooks: h };
  };
  cases.push(
    {
      title: 'host cheats: a deck short of a card → audit deck_size_mismatch',
      cheater: 'host',
      cheat: withUniverse((u) => u.slice(0, 51)),
      expect: { reason: 'deck_size_mismatch', evidence: { actual: 51, expected: 52 } },
    },
    {
      title: 'host cheats: a deck with a card doubled (not the universe) → audit deck_universe_mismatch',
      cheater: 'host',
      cheat: withUniverse((u) => [...u.slice(0, 51), u[0]!]),
      expect: { reason: 'deck_universe_mismatch', evidence: { missing: ['0c03'], extra: [] } },
    },
    {
      title: 'guest cheats: a blob_A wrapped twice in its deck → audit derive_id_map_failed',
      cheater: 'guest',
      cheat: ({ secrets }) => ({ secrets: { ...secrets, shuffle: (n: number) => Array.from({ length: n }, (_, i) => (i === n - 1 ? 0 : i)) } }),
      expect: { reason: 'derive_id_map_failed', evidence: { detail: "many-to-one: id_a '0' claimed by multiple id_b" } },
    },
  );
  return cases;
}

/** The whole cheat suite on one backend (cheats-wasm.test.ts runs it on wasm). */
export function cheatSuite(name: 'wasm' | 'js'): void {
  describe(`cheating peers against our engine (${name})`, () => {
    for (const c of cheatCases()) {
      it(
        c.title,
        async () => {
          const crypto = backend(name);
          check(await game(crypto, c), c, crypto);
        },
        120_000,
      );
    }
  });
}

/** What a run shows the world and the sides' verdicts: every message on the wire, both ends, every event, both transcript roots. */
function observed(run: PairRun): unknown {
  return {
    wire: run.wire,
    ends: run.ends,
    events: run.events,
    roots: { host: run.modes.host.transcript.rootHex(), guest: run.modes.guest.transcript.rootHex() },
  };
}

/**
 * The differential (cheats-js.test.ts): each game of the suite played on both backends. The js run
 * must be the wasm run (every message byte for byte, so every crypto output the audit reads: blobs,
 * sealed entries, z, y, tokens, signatures; both ends with their audit reason, evidence, proof claim
 * and result; every event; both transcript roots), and must pass the case's own checks on js.
 */
export function backendsAgree(): void {
  describe('cheating peers against our engine: the js backend plays each game exactly as the wasm backend', () => {
    for (const c of cheatCases()) {
      it(`${c.title} (js = wasm)`, async () => {
        const [w, j] = [await game(backend('wasm'), c), await game(backend('js'), c)];
        expect(j.wire.length).toBeGreaterThan(2);
        expect(observed(j)).toEqual(observed(w));
        check(j, c, backend('js'));
      }, 120_000);
    }
  });
}
