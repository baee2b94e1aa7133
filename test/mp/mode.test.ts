// The mental_poker mode, our Host against our Guest in memory: whole Crazy Eights and Briscola games on
// both crypto backends, with fresh secrets from the CSPRNG. Both sides must pass the audit, build the
// same transcript, and hold each other's verifying receipt.
//
// The Crazy Eights game draws everything live, RSA keys included (a key generation per side on each
// backend, about 0.2 s each). The Briscola and local-decision games draw every other secret live (card
// keys, nonces, pads, shuffle, blinding values) and import each side's pinned key (deal.ts) instead:
// a fresh import per game, the same key handling from there on.
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { fromHex } from '../../ts/crypto/encoding.js';
import type { Ot } from '../../ts/crypto/ot.js';
import type { HooksModule, Role } from '../../ts/hooks/types.js';
import { randomSecrets, type MpSecrets } from '../../ts/mp/secrets.js';
import briscola from '../../ts/protocols/briscola/hooks.js';
import crazyEights from '../../ts/protocols/crazy-eights/hooks.js';
import { runPair } from './pair.js';
import { pinnedKeyParts } from './deal.js';

/** The CSPRNG's secrets for `role`; with `key: 'pinned'`, the side's pinned RSA key in place of a generated one. */
function secrets(ot: Ot, role: Role, key: 'live' | 'pinned'): MpSecrets {
  const fresh = randomSecrets(ot);
  return key === 'live' ? fresh : { ...fresh, rsaKey: async () => ot.importKey(pinnedKeyParts(role)) };
}

const A20 = [
  'mp_setup_started',
  'mp_setup_completed',
  'mp_ot_started',
  'mp_ot_completed',
  'deal_requested',
  'play_verified',
  'mp_opening_sent',
  'mp_opening_received',
  'mp_witness_sent',
  'mp_witness_received',
  'audit_started',
  'audit_passed',
  'mp_terminal_receipt_signed',
  'mp_terminal_receipt_verified',
  'game_over',
];

const GAMES: [string, HooksModule, string, 'live' | 'pinned'][] = [
  ['crazy-eights', crazyEights as HooksModule, 'Crazy Eights', 'live'],
  ['briscola', briscola as HooksModule, 'Briscola', 'pinned'],
];

for (const backend of ['wasm', 'js'] as const) {
  const crypto = getCrypto(backend);
  describe(`mental_poker mode, our Host vs our Guest (${backend})`, () => {
    for (const [folder, module, name, key] of GAMES) {
      it(`plays ${folder} to a passed audit with equal transcripts and verifying receipts${key === 'live' ? ' (live RSA keys)' : ''}`, async () => {
        const seed = (b: number) => new Uint8Array(32).fill(b);
        const run = await runPair({
          crypto,
          module,
          options: {},
          otProtocolId: name,
          sessionId: `mode-test-${folder}`,
          host: { secrets: secrets(crypto.ot, 'host', key), seed: seed(1) },
          guest: { secrets: secrets(crypto.ot, 'guest', key), seed: seed(2) },
        });
        const [h, g] = [run.ends.host!, run.ends.guest!];
        expect(h.reason, h.detail).toBe('completed');
        expect(g.reason, g.detail).toBe('completed');
        expect(h.result!.audit_passed).toBe(true);
        expect(h.result!.outcome).toBe(g.result!.outcome);
        expect(h.result!.metadata).toEqual(g.result!.metadata);
        const root = run.modes.host.transcript.rootHex();
        expect(run.modes.guest.transcript.rootHex()).toBe(root);
        expect(h.receipt!.transcript_hash).toBe(root);
        // Each side holds the other's signature, and it verifies under the other's key.
        expect(h.receipt!.peer_signature).toBe(g.receipt!.signature);
        expect(crypto.ed25519Verify(crypto.ed25519PublicKey(seed(2)), fromHex(root), fromHex(h.receipt!.peer_signature))).toBe(true);
        expect(crypto.ed25519Verify(crypto.ed25519PublicKey(seed(1)), fromHex(root), fromHex(g.receipt!.peer_signature))).toBe(true);
        for (const side of ['host', 'guest'] as const) {
          const names = new Set(run.events[side].map((e) => e.name));
          for (const e of A20) expect(names, `${side} emits ${e}`).toContain(e);
        }
        // No card face travels before its play: every mp_play's card is the holder's, and nothing else names a face.
        const plays = run.wire.filter((w) => w.msg.action === 'mp_play');
        expect(plays.length).toBeGreaterThan(0);
        expect(run.wire.filter((w) => ['mp_ot_request', 'mp_ot_response'].includes(w.msg.action)).every((w) => !('rank' in w.msg))).toBe(true);
        // The transcript has the reference's event types, in order: two setups first, openings and witnesses last.
        const types = run.modes.host.transcript.events.map((e) => e.type);
        expect(types.slice(0, 2)).toEqual(['mp_setup_a', 'mp_setup_b']);
        expect(types.slice(-4)).toEqual(['mp_opening', 'mp_opening', 'mp_witness', 'mp_witness']);
      }, 120_000);
    }
  });

  describe(`mental_poker mode, local decisions (${backend})`, () => {
    it("an explicit decision replaces the hooks' choice; a refused one is reported and the hooks choose", async () => {
      const chosen: string[] = [];
      const run = await runPair({
        crypto,
        module: crazyEights as HooksModule,
        options: {},
        otProtocolId: 'Crazy Eights',
        sessionId: 'decisions',
        guest: { secrets: secrets(crypto.ot, 'guest', 'pinned'), seed: new Uint8Array(32).fill(2) },
        // The Host's first turn is the game's first play, where every card plays.
        host: {
          secrets: secrets(crypto.ot, 'host', 'pinned'),
          seed: new Uint8Array(32).fill(1),
          decisions: true,
          decide: (seq, legal) => {
            if (seq === 1) return { kind: 'play', id_b: 'not-a-card' };
            if (seq !== 0) return undefined;
            const plays = (legal as { kind: string; id_b?: string; call_suit_required?: boolean }[]).filter((a) => a.kind === 'play');
            expect(plays).toHaveLength(5);
            const pick = plays.at(-1)!;
            chosen.push(pick.id_b!);
            return pick.call_suit_required ? { kind: 'play', id_b: pick.id_b, call_suit: 0 } : { kind: 'play', id_b: pick.id_b };
          },
        },
      });
      expect([run.ends.host!.reason, run.ends.guest!.reason]).toEqual(['completed', 'completed']);
      expect(chosen).toHaveLength(1);
      const first = run.sent.host.find((m) => m.action === 'mp_play')!;
      expect(first['id_b']).toBe(chosen[0]);
      expect(run.events.host.filter((e) => e.name === 'local_decision_rejected').map((e) => e.data['match_value'])).toEqual([1]);
    }, 120_000);
  });
}
