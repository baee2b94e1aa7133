// The mental-poker audit (ts/mp/audit.ts) and the game replay (ts/mp/replay.ts) on both backends: every
// covered case of the reference's audit vectors, then the recorded game's evidence tampered in ways the
// vectors do not reach.
import { describe, expect, it } from 'vitest';
import { getCrypto, type Crypto } from '../../ts/crypto/index.js';
import { fromHex, toHex } from '../../ts/crypto/encoding.js';
import { PAYLOAD_K_INNER, ROLE_HOST } from '../../ts/crypto/ot.js';
import { AUDIT_FORMAT, auditSuite, checkAuditVectors } from '../../ts/conformance/mp-audit.js';
import { readVectors, type Vec } from '../../ts/conformance/mp-vectors.js';
import { auditFullDeck, auditGame, deriveIdMap, type AuditInput } from '../../ts/mp/audit.js';
import { MpError } from '../../ts/mp/errors.js';
import { bytesToBigint, hexToBytes, pyRepr, pyReprList } from '../../ts/mp/numbers.js';
import { replayGame } from '../../ts/mp/replay.js';
import type { OpeningEntry } from '../../ts/mp/types.js';
import { corpus } from './corpus.js';
import { memoCrypto } from './deal.js';

const AUDITS = corpus('aigenora-mp-audit-vectors.json');
const doc = AUDITS.text ? readVectors(AUDITS.text) : null;

describe('pure checks', () => {
  it('counts duplicates in the deck size and reports sorted missing / extra cards', () => {
    const [a, b, c] = [Uint8Array.of(0, 1), Uint8Array.of(0, 2), Uint8Array.of(1, 0)];
    expect(auditFullDeck([a, b, c], [c, a, b])).toEqual({ ok: true, reason: null, evidence: null });
    expect(auditFullDeck([a, a], [a, b, c])).toEqual({ ok: false, reason: 'deck_size_mismatch', evidence: { actual: 2, expected: 3 } });
    expect(auditFullDeck([c, c, a], [c, a, b])).toEqual({ ok: false, reason: 'deck_universe_mismatch', evidence: { missing: ['0002'], extra: [] } });
    expect(auditFullDeck([Uint8Array.of(255, 255), Uint8Array.of(14, 255), a], [c, a, b])).toEqual({
      ok: false,
      reason: 'deck_universe_mismatch',
      evidence: { missing: ['0002', '0100'], extra: ['0eff', 'ffff'] },
    });
    // A repeated expected card counts once, as the reference's set does.
    expect(auditFullDeck([a, b], [a, b, b])).toEqual({ ok: true, reason: null, evidence: null });
  });

  it("reads wire hex as Python's bytes.fromhex does (less its spaces), and bytes back as integers", () => {
    expect(hexToBytes('')).toEqual(new Uint8Array(0));
    expect(hexToBytes('00aBcDeF19')).toEqual(Uint8Array.of(0, 0xab, 0xcd, 0xef, 0x19));
    for (const bad of ['0', 'abc', 'zz', '0g', ' 0', '0 ', 'é0', '\uff10\uff10', '0x', '-1', '\u0000a'])
      expect(hexToBytes(bad), JSON.stringify(bad)).toBeNull();
    for (let i = 0; i < 50; i++) {
      const b = crypto.getRandomValues(new Uint8Array(i * 3));
      const hex = Buffer.from(b).toString('hex');
      expect(hexToBytes(i % 2 ? hex.toUpperCase() : hex)).toEqual(b);
      expect(bytesToBigint(b)).toBe(BigInt(`0x0${hex}`));
    }
  });

  it("quotes ids in the audit's messages as Python's repr does", () => {
    expect(pyRepr('5')).toBe("'5'");
    expect(pyRepr("it's")).toBe('"it\'s"');
    expect(pyRepr('say "x"')).toBe('\'say "x"\'');
    expect(pyRepr('a\'b"c\\')).toBe("'a\\'b\"c\\\\'");
    expect(pyRepr('\x00\t\x7f\xa0\u2028é😀 ')).toBe("'\\x00\\t\\x7f\\xa0\\u2028é😀 '");
    expect(pyRepr('\u{e0001}\ud800')).toBe("'\\U000e0001\\ud800'");
    expect(pyReprList(['0', '10'])).toBe("['0', '10']");
    expect(pyReprList([])).toBe('[]');
  });
});

describe.each(['wasm', 'js'])('%s backend', (name) => {
  // The backend with its RSA checks (checkToken, checkWitness, ...) computed once per distinct input
  // (deal.ts): both vector runs and every `honest` replay check the same recorded game, and each answer
  // is what this backend computed for those very inputs, never the other backend's.
  const c: Crypto = memoCrypto(getCrypto(name));
  const why = AUDITS.missing;

  it.skipIf(!doc)(`passes every case of aigenora-mp-audit-vectors.json${why ? ` (${why})` : ''}`, () => {
    expect(checkAuditVectors(c, AUDITS.text!)).toEqual({
      game: 1,
      audit_full_deck: 1,
      audit_sealed_payload: 1,
      derive_id_map: 1,
      audit_witnesses: 1,
      mutated_game: 24,
    });
  });

  it.skipIf(!doc)('gives `aigenora conformance` one passing case per vector', () => {
    const suite = auditSuite(AUDITS.text!);
    expect(suite.format).toBe(AUDIT_FORMAT);
    expect(new Set(suite.cases.map((x) => x.key)).size).toBe(29);
    expect(suite.cases.map((x) => [x.id, x.run(c)]).filter(([, r]) => !(r as { ok: boolean }).ok)).toEqual([]);
  });

  describe.skipIf(!doc)(`the recorded game, tampered${why ? ` (${why})` : ''}`, () => {
    const game = doc?.cases.find((v) => v['kind'] === 'game') as Vec;
    const universe = (doc?.cases.find((v) => v['kind'] === 'audit_full_deck')?.['expected_cards'] as string[] | undefined)?.map(
      (h) => [fromHex(h)[0]!, fromHex(h)[1]!] as const,
    );
    const oc = c;

    function honest(verifier: 'host' | 'guest'): AuditInput {
      const r = replayGame(oc, game['messages'], {
        verifier,
        protocolId: game['protocol_id_in_ot_context'],
        sessionId: game['session_id'],
        universe: universe!,
        deal: { guest: 5, host: 5 },
        peerPublicKey: fromHex(game[verifier === 'host' ? 'guest' : 'host'].public_key),
      });
      expect(r.verdict).toEqual({ auditPassed: true, auditFailure: null, raised: null });
      expect(auditGame(oc, r.input!)).toEqual({ ok: true, reason: null, evidence: null });
      return r.input!;
    }

    const key = (entries: readonly OpeningEntry[], label: string) => fromHex(entries.find((e) => e.label === label && e.k)!.k!);
    const audit = (input: AuditInput) => {
      try {
        return auditGame(oc, input);
      } catch (e) {
        if (e instanceof MpError) return e.code;
        throw e;
      }
    };

    /** The Host re-deals card id-A `idA` with another face, sealed under the same disclosed keys. */
    function reface(input: AuditInput, idA: number, face: Uint8Array): AuditInput {
      const idB = Number(Object.entries(game['derived'].id_b_to_id_a as Record<string, string>).find(([, a]) => a === String(idA))![0]);
      const blobA = oc.deck.sealInner(key(input.openings.host, `h-${idA}`), new Uint8Array(12).fill(1), oc.deck.packInner(face, new Uint8Array(14)));
      const blobB = oc.deck.sealOuter(key(input.openings.guest, `g-${idB}`), new Uint8Array(12).fill(2), blobA);
      const hostBlobs = [...input.host.blobs];
      const guestBlobs = [...input.guest.blobs];
      hostBlobs[idA] = blobA;
      guestBlobs[idB] = blobB;
      return { ...input, host: { ...input.host, blobs: hostBlobs }, guest: { ...input.guest, blobs: guestBlobs } };
    }

    it('finds a foreign card and a repeated card in a deck whose layers and sealed keys are all consistent', () => {
      const input = honest('guest');
      const faceOf = (idA: number) => toHex(oc.deck.openLayer(key(input.openings.host, `h-${idA}`), input.host.blobs[idA]!).subarray(0, 2));
      const [f7, f9] = [faceOf(7), faceOf(9)];
      expect(audit(reface(input, 7, Uint8Array.of(14, 255)))).toEqual({
        ok: false,
        reason: 'deck_universe_mismatch',
        evidence: { missing: [f7], extra: ['0eff'] },
      });
      expect(audit(reface(input, 7, fromHex(f9)))).toEqual({ ok: false, reason: 'deck_universe_mismatch', evidence: { missing: [f7], extra: [] } });
    });

    it('stops without a verdict where the reference raises: a key never disclosed, hex that is not hex, a card that does not open', () => {
      const input = honest('host');
      const without = (label: string) => ({
        ...input,
        openings: { ...input.openings, host: input.openings.host.filter((e) => !(e.label === label && e.kind === 'k_inner')) },
      });
      expect(audit(without('h-3'))).toBe('MP_AUDIT_INPUT');
      const badToken = input.openings.host.map((e) => (e.label === 'h-0' && e.kind === 'token' ? { ...e, token: 'zz' } : e));
      expect(audit({ ...input, openings: { ...input.openings, host: badToken } })).toBe('MP_AUDIT_INPUT');
      // The Host seals, under the genuine token, a key that does not open its blob, and discloses that key:
      // the sealed table checks out and the card cannot be opened.
      const label = 'h-51';
      const token = BigInt(`0x${input.openings.host.find((e) => e.label === label && e.kind === 'token')!.token!}`);
      const ctx = oc.ot.context({ protocolId: input.protocolId, sessionId: input.sessionId, senderRole: ROLE_HOST, payloadType: PAYLOAD_K_INNER, label });
      const tokenBytes = fromHex(token.toString(16).padStart(512, '0'));
      const other = new Uint8Array(32).fill(9);
      const sealed = new Map(input.host.sealed);
      sealed.set(label, toHex(oc.ot.sealPayload(oc.ot.tokenKey(tokenBytes, ctx), new Uint8Array(12), other, ctx)));
      const entries = input.openings.host.map((e) => (e.label === label && e.kind === 'k_inner' ? { ...e, k: toHex(other) } : e));
      expect(audit({ ...input, host: { ...input.host, sealed }, openings: { ...input.openings, host: entries } })).toBe('MP_AUDIT_INPUT');
    });

    it("reads the verifier's own opening entries first, so a peer's later entry replaces its own", () => {
      // A Guest discloses a token for the Host's label h-3. The Host reads it after its own and checks the
      // Guest's; the Guest reads the Host's genuine one after it.
      for (const verifier of ['host', 'guest'] as const) {
        const input = honest(verifier);
        const genuine = input.openings.host.find((e) => e.label === 'h-3' && e.kind === 'token')!;
        const forged = { kind: 'token', label: 'h-3', token: (BigInt(`0x${genuine.token}`) + 1n).toString(16) };
        const tampered = { ...input, openings: { ...input.openings, guest: [...input.openings.guest, forged] } };
        expect(audit(tampered), verifier).toEqual(
          verifier === 'host' ? { ok: false, reason: 'forged_token', evidence: { label: 'h-3' } } : { ok: true, reason: null, evidence: null },
        );
      }
    });

    it('derives id-Bs from every k_outer entry by its label less two characters, as the reference does', () => {
      const input = honest('host');
      const odd = { kind: 'k_outer', label: 'x-5', k: '00'.repeat(32) };
      expect(audit({ ...input, openings: { ...input.openings, guest: [...input.openings.guest, odd] } })).toEqual({
        ok: false,
        reason: 'derive_id_map_failed',
        evidence: { detail: "cannot open blob_B for id_b '5'" },
      });
      const short = { kind: 'k_outer', label: 'g-5', k: '00'.repeat(31) };
      expect(audit({ ...input, openings: { ...input.openings, guest: [...input.openings.guest, short] } })).toBe('MP_AUDIT_INPUT');
    });

    it('ignores witnesses whose ot_id names neither side, and reports a record missing for either side', () => {
      const input = honest('guest');
      const stray = { otId: 'x-1', label: 'h-0', r: 1n };
      expect(audit({ ...input, witnesses: { ...input.witnesses, host: [...input.witnesses.host, stray] } })).toEqual({
        ok: true,
        reason: null,
        evidence: null,
      });
      const records = new Map(input.otIdToIdB);
      records.delete('host-4');
      expect(audit({ ...input, otIdToIdB: records })).toEqual({ ok: false, reason: 'ot_snapshot_missing', evidence: { ot_id: 'host-4' } });
      records.delete('guest-8');
      // The Guest's OTs are checked before the Host's.
      expect(audit({ ...input, otIdToIdB: records })).toEqual({ ok: false, reason: 'ot_snapshot_missing', evidence: { ot_id: 'guest-8' } });
    });

    it('refuses decks of different sizes, and an id map that misses a card', () => {
      const input = honest('host');
      expect(audit({ ...input, guest: { ...input.guest, blobs: input.guest.blobs.slice(1) } })).toBe('MP_AUDIT_INPUT');
      const m = deriveIdMap(oc, new Map([['0', new Uint8Array(32)]]), new Map([['0', input.guest.blobs[0]!]]), new Map([['a', input.host.blobs[0]!]]));
      expect(m).toEqual({ ok: false, detail: "cannot open blob_B for id_b '0'" });
    });
  });
});

describe('vector file format', () => {
  it.skipIf(!doc)('is the one this suite reads', () => {
    expect(doc!.format).toBe(AUDIT_FORMAT);
  });
});
