// The mental_poker mode run by the session engine over signed frames: Crazy Eights and Briscola end
// to end on both backends, receipt verify offline, transcript_receipt.json, and a cheating peer leaving a
// proof that `proof verify` checks.
//
// Every game is the pinned deal of test/mp/deal.ts (the sides' RSA keys from test/mp/fixtures/ot-keys.json,
// every other secret from a fixed seed, the identity shuffle) in a session of fixed keys and nonce, over
// a backend whose costly OT operations `memoCrypto` computes once per distinct input. So the games of a
// backend share their setup and deal, and each backend computes every operation itself at least once:
// every test runs with all its checks on both backends. Live key generation is tested in
// test/crypto/mp-ot.test.ts and test/mp/mode.test.ts, and through the engine's own default (randomSecrets)
// by `aigenora protocol test` of the mental-poker built-ins in test/engine/builtins.test.ts.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getCrypto, toHex } from '../../ts/crypto/index.js';
import type { Crypto } from '../../ts/crypto/backend.js';
import { sessionId } from '../../ts/engine/frame.js';
import { seeded } from '../../ts/engine/local.js';
import { runSession, type SessionConfig, type SessionResult } from '../../ts/engine/session.js';
import { memoryPair, type MemoryOptions } from '../../ts/engine/transport.js';
import { appendDecision } from '../../ts/engine/decision.js';
import { dealBytes, dealSecrets, memoCrypto } from '../mp/deal.js';
import { againstScript, c as harnessCrypto } from './harness.js';
import { verifyProof, verifyTranscriptAt } from '../../ts/engine/verify.js';
import type { HooksModule, Message, Role } from '../../ts/hooks/types.js';
import type { Mode } from '../../ts/engine/mode.js';
import { loadSpec } from '../../ts/spec/index.js';
import { tempDir } from '../shared/tmp.js';
import crazyEights from '../../ts/protocols/crazy-eights/hooks.js';

import { cli as runCli } from '../shared/cli.js';

export function builtinOf(c: Crypto, folder: string) {
  const dir = new URL(`../../ts/protocols/${folder}`, import.meta.url).pathname;
  const l = loadSpec(c, dir);
  return { dir, spec: l.spec, specText: l.text, protocolId: l.protocolId! };
}

/**
 * Host and guest sessions over the in-memory transport, with per-side extras (a cheating mode wrapper).
 * The session (keys, nonce, so its id) is the same every time, and each side plays the pinned deal unless
 * `extra` gives it other secrets.
 */
export async function runMpLocal(
  c: Crypto,
  folder: string,
  outDir: string,
  extra: Partial<Record<Role, Partial<SessionConfig>>> = {},
  faults: MemoryOptions = {},
): Promise<Record<Role, SessionResult>> {
  const b = builtinOf(c, folder);
  const hooks = (await import(`../../ts/protocols/${folder}/hooks.ts`)).default as HooksModule;
  const hostKey = c.ed25519Keypair(new Uint8Array(32).fill(7));
  const guestKey = c.ed25519Keypair(new Uint8Array(32).fill(9));
  const nonce = toHex(dealBytes('engine session nonce', 16));
  const [hk, gk] = [toHex(hostKey.publicKey), toHex(guestKey.publicKey)];
  const sid = sessionId(c, 'local', b.protocolId, hk, gk, nonce);
  const [ht, gt] = memoryPair(faults);
  const common = {
    crypto: c,
    spec: b.spec,
    specText: b.specText,
    protocolId: b.protocolId,
    hostKey: hk,
    guestKey: gk,
    sid,
    postId: 'local',
    nonce,
    hooks,
    options: {},
    controlMode: 'autonomous' as const,
    timeoutMs: 60_000,
  };
  const [host, guest] = await Promise.all([
    runSession({
      ...common,
      role: 'host',
      transport: ht,
      key: hostKey,
      stateDir: join(outDir, 'host'),
      random: seeded(3),
      mpSecrets: dealSecrets(c.ot, 'host'),
      ...extra.host,
    }),
    runSession({
      ...common,
      role: 'guest',
      transport: gt,
      key: guestKey,
      stateDir: join(outDir, 'guest'),
      random: seeded(4),
      mpSecrets: dealSecrets(c.ot, 'guest'),
      ...extra.guest,
    }),
  ]);
  return { host, guest };
}

/** A mode whose outgoing messages pass through `alter` (any mode: the cheats below alter mental poker's). */
export function tampering(alter: (msg: Message) => Message): (m: Mode) => Mode {
  return (mode) => ({
    async step(input) {
      const effects = await mode.step(input);
      return effects.map((e) => (e.kind === 'send' ? { ...e, msg: alter(e.msg) } : e));
    },
  });
}

for (const backend of ['wasm', 'js'] as const) {
  const c = memoCrypto(getCrypto(backend));
  describe(`mental_poker through the session engine (${backend})`, () => {
    for (const folder of ['crazy-eights', 'briscola']) {
      it(`${folder}: both sides complete, receipts verify offline, transcript_receipt.json on both sides`, async () => {
        const out = tempDir(`mp-${folder}`);
        const r = await runMpLocal(c, folder, out);
        expect([r.host.reason, r.guest.reason], `${r.host.detail ?? ''} ${r.guest.detail ?? ''}`).toEqual(['completed', 'completed']);
        for (const side of ['host', 'guest'] as const) {
          expect(verifyTranscriptAt(c, r[side].dir)).toMatchObject({ ok: true, receipt: true });
          const tr = JSON.parse(readFileSync(join(r[side].dir, 'transcript_receipt.json'), 'utf8')) as Record<string, string>;
          expect(Object.keys(tr).sort()).toEqual(['audit_status', 'peer_signature', 'signature', 'transcript_hash']);
          expect(tr['audit_status']).toBe('passed');
        }
        const [th, tg] = (['host', 'guest'] as const).map(
          (s) => JSON.parse(readFileSync(join(r[s].dir, 'transcript_receipt.json'), 'utf8')) as Record<string, string>,
        );
        expect(th!['transcript_hash']).toBe(tg!['transcript_hash']);
        expect(th!['peer_signature']).toBe(tg!['signature']);
        // transcript_receipt.json is checked against the signed terminal receipts: altered or missing, it fails.
        const trPath = join(r.guest.dir, 'transcript_receipt.json');
        const original = readFileSync(trPath, 'utf8');
        writeFileSync(trPath, JSON.stringify({ ...tg, peer_signature: tg!['signature'] }));
        expect(verifyTranscriptAt(c, r.guest.dir)).toMatchObject({ ok: false, reason: expect.stringMatching(/transcript_receipt\.json does not match/) });
        rmSync(trPath);
        expect(verifyTranscriptAt(c, r.guest.dir)).toMatchObject({ ok: false, reason: expect.stringMatching(/transcript_receipt\.json is missing/) });
        writeFileSync(trPath, original);
        expect(verifyTranscriptAt(c, r.guest.dir)).toMatchObject({ ok: true, receipt: true });
        const events = readFileSync(join(r.host.dir, 'events.jsonl'), 'utf8');
        for (const e of ['mp_setup_started', 'deal_requested', 'audit_passed', 'mp_terminal_receipt_verified', 'game_over'])
          expect(events).toContain(`"type":"${e}"`);
        // Events are written while the game runs. Besides the wire messages themselves (public), none
        // names an OT label (a Guest's would name its shuffle) or carries a card key.
        for (const side of ['host', 'guest'] as const) {
          const own = readFileSync(join(r[side].dir, 'events.jsonl'), 'utf8')
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as { type: string });
          const leaks = own.filter((e) => e.type !== 'protocol_message' && /"[hg]-\d+"|"k(_inner|_outer)?"/.test(JSON.stringify(e))).map((e) => e.type);
          expect(leaks, side).toEqual([]);
        }
      }, 180_000);
    }

    it("a hybrid side opens a decision window (match_key action_seq) for each own turn and plays the hooks' move when none comes", async () => {
      const r = await runMpLocal(c, 'crazy-eights', tempDir('mp-hybrid'), { guest: { controlMode: 'hybrid', minThinkMs: 0 } });
      expect([r.host.reason, r.guest.reason]).toEqual(['completed', 'completed']);
      const events = readFileSync(join(r.guest.dir, 'events.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; data?: Record<string, unknown> });
      const windows = events.filter((e) => e.type === 'local_decision_window_started');
      expect(windows.length).toBeGreaterThan(0);
      expect(windows.map((w) => w.data!['match_key'])).toEqual(windows.map(() => 'action_seq'));
      expect(windows.map((w) => w.data!['match_value'])).toEqual(windows.map((_, i) => i));
      expect(events.filter((e) => e.type === 'local_decision_fallback')).toHaveLength(windows.length);
    }, 180_000);

    it("a decision in the bus replaces the hooks' move: the host plays the card it was told to", async () => {
      // The Guest's identity shuffle (the pinned deal's) makes id-B j the deck's card j: the Host holds 5..9, and 9 is the four of diamonds.
      const out = tempDir('mp-decided');
      appendDecision(join(out, 'host'), { match_key: 'action_seq', match_value: 0, value: { kind: 'play', id_b: '9' }, _meta: { origin: 'test' } });
      expect(dealSecrets(c.ot, 'guest').shuffle(52)).toEqual(Array.from({ length: 52 }, (_, i) => i));
      const plays: string[] = [];
      const r = await runMpLocal(c, 'crazy-eights', out, {
        host: {
          controlMode: 'hybrid',
          minThinkMs: 0,
          onMessage: (from, m) => void (from === 'host' && m.action === 'mp_play' && plays.push(m['id_b'] as string)),
        },
      });
      expect([r.host.reason, r.guest.reason]).toEqual(['completed', 'completed']);
      expect(plays[0]).toBe('9');
      expect(readFileSync(join(r.host.dir, 'events.jsonl'), 'utf8')).toContain('"type":"local_decision_consumed"');
    }, 180_000);

    it('faults end with typed reasons, the transcripts up to them verify, and no receipt or transcript_receipt.json is left', async () => {
      const check = (r: Record<Role, SessionResult>) => {
        for (const side of ['host', 'guest'] as const) {
          expect(verifyTranscriptAt(c, r[side].dir)).toMatchObject({ ok: true, receipt: false });
          expect(existsSync(join(r[side].dir, 'transcript_receipt.json'))).toBe(false);
        }
      };
      // The guest's first deal OT request is lost with the connection (guest lines: join, mp_setup_b, mp_ot_request).
      const cut = await runMpLocal(c, 'crazy-eights', tempDir('mp-cut'), {}, { guestToHost: (line, n) => (n === 2 ? 'disconnect' : [line]) });
      expect([cut.host.reason, cut.guest.reason]).toEqual(['peer_disconnected', 'peer_disconnected']);
      check(cut);
      // The host's first OT response delivered twice: the replay is refused by the chain, not taken as a second answer.
      const replayed = await runMpLocal(c, 'crazy-eights', tempDir('mp-replayed'), {}, { hostToGuest: (line, n) => (n === 2 ? [line, line] : [line]) });
      expect(replayed.guest.reason).toBe('bad_sequence');
      check(replayed);
      // A setup larger than the guest accepts for a frame.
      const big = await runMpLocal(c, 'crazy-eights', tempDir('mp-big'), { guest: { maxFrameBytes: 8192 } });
      expect(big.guest.reason).toBe('frame_too_large');
      check(big);
    }, 180_000);

    it('a peer whose play carries a wrong key is rejected with play_rejected, and its proof verifies', async () => {
      const out = tempDir('mp-cheat-play');
      const r = await runMpLocal(c, 'crazy-eights', out, {
        guest: {
          wrapMode: tampering((m) =>
            m['action'] === 'mp_play' ? { ...m, k_inner: (m['k_inner'] as string).replace(/^./, (x) => (x === '0' ? '1' : '0')) } : m,
          ),
        },
      });
      expect(r.host.reason).toBe('play_rejected');
      expect(r.guest.reason).toBe('peer_aborted');
      expect(r.host.proof && existsSync(r.host.proof)).toBeTruthy();
      const proof = JSON.parse(readFileSync(r.host.proof!, 'utf8')) as Record<string, unknown>;
      expect(proof).toMatchObject({ kind: 'mp_play_rejected', offender: 'guest' });
      expect(verifyTranscriptAt(c, r.host.dir)).toMatchObject({ ok: true, receipt: false });
      const b = builtinOf(c, 'crazy-eights');
      const protocol = { hooks: crazyEights as HooksModule, protocolId: b.protocolId };
      expect(verifyProof(c, proof, b.specText, protocol)).toMatchObject({ proven: true });
      expect(verifyProof(c, proof, b.specText)).toMatchObject({ proven: false, reason: expect.stringMatching(/--protocol-dir/) });
      // The offender's play restored to an honest one (its signature then fails), or a frame left out: not proven.
      const frames = proof['frames'] as string[];
      expect(verifyProof(c, { ...proof, frames: frames.slice(0, -3) }, b.specText, protocol).proven).toBe(false);
      expect(verifyProof(c, { ...proof, frames: frames.filter((_, i) => i !== 5) }, b.specText, protocol).proven).toBe(false);
      expect(verifyProof(c, { ...proof, offender: 'host' }, b.specText, protocol).proven).toBe(false);
      // From the CLI, offline: proven with the protocol's directory, not without it, never a stack trace.
      const cli = (...a: string[]) => runCli(['proof', 'verify', r.host.proof!, ...a]);
      const proven = await cli('--protocol-dir', b.dir);
      expect([proven.status, proven.stdout], proven.stderr).toEqual([0, expect.stringMatching(/^proven \(mp_play_rejected, offender guest\)/)]);
      const without = await cli();
      expect([without.status, without.stderr]).toEqual([1, expect.not.stringMatching(/\n\s+at /)]);
    }, 180_000);

    it('a peer playing against the rules is rejected with rule_rejected, and its proof verifies by replaying the rules', async () => {
      const out = tempDir('mp-cheat-rule');
      const r = await runMpLocal(c, 'crazy-eights', out, {
        guest: { wrapMode: tampering((m) => (m['action'] === 'mp_play' && m['rank'] !== 6 ? { ...m, call_suit: 0 } : m)) },
      });
      expect(r.host.reason).toBe('rule_rejected');
      const proof = JSON.parse(readFileSync(r.host.proof!, 'utf8')) as Record<string, unknown>;
      expect(proof).toMatchObject({ kind: 'mp_rule_rejected', offender: 'guest', detail: { reason: 'unexpected_call_suit' } });
      const b = builtinOf(c, 'crazy-eights');
      const protocol = { hooks: crazyEights as HooksModule, protocolId: b.protocolId };
      expect(verifyProof(c, proof, b.specText, protocol)).toMatchObject({ proven: true });
      expect(verifyProof(c, { ...proof, detail: { ...(proof['detail'] as object), reason: 'illegal_play' } }, b.specText, protocol).proven).toBe(false);
      // The same frames claimed as a card-check failure: the card opens, so not proven.
      expect(
        verifyProof(c, { ...proof, kind: 'mp_play_rejected', detail: { ...(proof['detail'] as object), reason: 'card_face_mismatch' } }, b.specText, protocol)
          .proven,
      ).toBe(false);
    }, 180_000);

    it('a peer whose witness names another r is caught by the audit (bad_witness), and its proof verifies', async () => {
      const out = tempDir('mp-cheat-witness');
      const r = await runMpLocal(c, 'crazy-eights', out, {
        host: {
          wrapMode: tampering((m) => {
            if (m['action'] !== 'mp_witness') return m;
            const ws = (m['witnesses'] as string[]).map((w) => JSON.parse(w) as { ot_id: string; label: string; r: string });
            ws[0]!.r = (BigInt(`0x${ws[0]!.r}`) + 1n).toString(16).padStart(512, '0');
            return { ...m, witnesses: ws.map((w) => JSON.stringify(w)) };
          }),
        },
      });
      expect(r.guest.reason).toBe('audit_failed');
      const proof = JSON.parse(readFileSync(r.guest.proof!, 'utf8')) as Record<string, unknown>;
      expect(proof).toMatchObject({ kind: 'mp_audit_failed', offender: 'host', detail: { reason: 'bad_witness', evidence: { ot_id: 'host-0' } } });
      const b = builtinOf(c, 'crazy-eights');
      const protocol = { hooks: crazyEights as HooksModule, protocolId: b.protocolId };
      expect(verifyProof(c, proof, b.specText, protocol)).toMatchObject({ proven: true });
      expect(verifyProof(c, { ...proof, detail: { ...(proof['detail'] as object), reason: 'forged_token' } }, b.specText, protocol).proven).toBe(false);
    }, 180_000);
  });
}

describe('mental_poker against a scripted host (the harness backend)', () => {
  it('a host whose setup carries an oversize blob is refused by the spec, and leaves a proof', async () => {
    const { result } = await againstScript(
      'crazy-eights',
      'guest',
      async (peer) => {
        await peer.recv();
        peer.send({ action: 'ready' });
        const rsaPub = JSON.stringify({ e: 65537, n: 'c'.repeat(511) + 'd' });
        peer.send({
          action: 'mp_setup_a',
          rsa_pub: rsaPub,
          blobs: Array.from({ length: 52 }, () => 'ab'.repeat(300)),
          sealed_keys: Array.from({ length: 52 }, (_, i) => JSON.stringify({ label: `h-${i}`, c: '00' })),
        });
        await peer.recv();
      },
      { outDir: tempDir('mp-oversize') },
    );
    expect(result.reason).toBe('invalid_message');
    const proof = JSON.parse(readFileSync(result.proof!, 'utf8')) as Record<string, unknown>;
    expect(proof).toMatchObject({ kind: 'invalid_message', offender: 'host' });
    expect(verifyProof(harnessCrypto, proof, builtinOf(harnessCrypto, 'crazy-eights').specText)).toMatchObject({ proven: true });
  }, 60_000);
});
