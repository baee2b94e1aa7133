// The reference's recorded Crazy Eights game against our engine, message by message, on both backends:
// our engine as the Host fed the reference Guest's messages must send exactly the reference Host's, and
// as the Guest exactly the reference Guest's, reaching the same result, transcript hash and receipt
// signatures. Then the 24 altered games (`mutated_game`): our engine as the verifier, fed the altered
// peer messages, must reach the reference's verdict and send what the reference's verifier sent.
//
// Every replay here runs the same recorded game, so it asks its backend the same costly RSA questions
// (the recorded keys' sealed tables and OT answers, the audit's token and witness checks) on the same
// inputs, test after test. Each backend is wrapped once in memoCrypto (deal.ts): the first replay on a
// backend computes everything on that backend, later ones get that backend's own answer for an input it
// has already seen (never the other backend's, never a remembered throw), and whatever an altered game
// changes is computed afresh.
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import type { Message, Role } from '../../ts/hooks/types.js';
import { corpus } from './corpus.js';
import { instantiateHooks } from '../../ts/hooks/load.js';
import type { HooksModule, MentalPokerHooks } from '../../ts/hooks/types.js';
import { replayRules } from '../../ts/mp/mode-rules.js';
import crazyEights from '../../ts/protocols/crazy-eights/hooks.js';
import { runSide, sentBy, type GameVector } from './replay-vector.js';
import { memoCrypto } from './deal.js';

const AUDITS = corpus('aigenora-mp-audit-vectors.json');
const doc = AUDITS.text ? (JSON.parse(AUDITS.text) as { cases: ({ kind: string; id: string } & Record<string, unknown>)[] }) : null;
const game = doc?.cases.find((c) => c.kind === 'game') as unknown as GameVector | undefined;
const mutated = (doc?.cases.filter((c) => c.kind === 'mutated_game') ?? []) as unknown as MutatedCase[];
// The file is there but holds no game: a broken corpus fails, it never turns the suites into skips.
if (doc && !game) throw new Error('aigenora-mp-audit-vectors.json has no `game` case');

type Op =
  | { op: 'set_field'; index: number; field: string; value: unknown }
  | { op: 'remove_field'; index: number; field: string }
  | { op: 'set_item'; index: number; field: string; item: number; value: unknown }
  | { op: 'remove_item'; index: number; field: string; item: number }
  | { op: 'append_item'; index: number; field: string; value: unknown }
  | { op: 'replace_message'; index: number; message: Message };

interface MutatedCase {
  id: string;
  verifier: Role;
  mutated_direction: 'host_to_guest' | 'guest_to_host';
  description: string;
  ops: Op[];
  expect: {
    audit_passed: boolean;
    audit_failure: { reason: string; evidence?: unknown } | null;
    raised: { error: string; message: string } | null;
    result: unknown;
    verifier_sent_changes: { index: number; message: Message }[];
    verifier_sent_count: number;
  };
}

function applyOps(messages: readonly Message[], ops: readonly Op[]): Message[] {
  const out = messages.map((m) => structuredClone(m));
  for (const op of ops) {
    const m = out[op.index]!;
    if (op.op === 'set_field') m[op.field] = op.value;
    else if (op.op === 'remove_field') delete m[op.field];
    else if (op.op === 'set_item') (m[op.field] as unknown[])[op.item] = op.value;
    else if (op.op === 'remove_item') (m[op.field] as unknown[]).splice(op.item, 1);
    else if (op.op === 'append_item') (m[op.field] as unknown[]).push(op.value);
    else out[op.index] = structuredClone(op.message);
  }
  return out;
}

const other = (r: Role): Role => (r === 'host' ? 'guest' : 'host');

/** One memo per backend, for the whole file. */
const backends = { wasm: memoCrypto(getCrypto('wasm')), js: memoCrypto(getCrypto('js')) };

for (const backend of ['wasm', 'js'] as const) {
  const crypto = backends[backend];
  const label = backend;

  describe.skipIf(!doc)(`the reference's recorded game replayed against our engine (${label})${AUDITS.missing ? ` (${AUDITS.missing})` : ''}`, () => {
    for (const role of ['host', 'guest'] as const) {
      it(`as the ${role}: every message the reference ${role} sent, the same result, transcript hash and receipt`, async () => {
        const g = game!;
        const run = await runSide(crypto, g, role, sentBy(g, other(role)));
        const expected = sentBy(g, role);
        expect(run.end?.reason, run.end?.detail).toBe('completed');
        expect(run.sent.length).toBe(expected.length);
        for (let i = 0; i < expected.length; i++) expect(run.sent[i], `${role} message ${i} (${expected[i]!.action})`).toEqual(expected[i]);
        expect(run.end!.result).toEqual(role === 'host' ? g.expect.host_result : g.expect.guest_result);
        expect(run.mode.transcript.rootHex()).toBe(g.expect.transcript_hash);
        expect(run.end!.receipt).toEqual({
          transcript_hash: g.expect.transcript_hash,
          signature: role === 'host' ? g.expect.host_receipt_signature : g.expect.guest_receipt_signature,
          peer_signature: role === 'host' ? g.expect.guest_receipt_signature : g.expect.host_receipt_signature,
          audit_status: 'passed',
        });
      }, 120_000);
    }
  });

  describe.skipIf(!doc)(`the reference's altered games against our verifier (${label})${AUDITS.missing ? ` (${AUDITS.missing})` : ''}`, () => {
    it('has the 24 altered games', () => expect(mutated.length).toBe(24));
    for (const c of mutated) {
      it(`${c.id}: ${c.description}`, async () => {
        const g = game!;
        const peerMessages = applyOps(sentBy(g, other(c.verifier)), c.ops);
        const run = await runSide(crypto, g, c.verifier, peerMessages);
        const end = run.end!;
        expect(end, 'the verifier reached an end').toBeTruthy();
        const e = c.expect;
        expect(end.result?.audit_passed ?? false).toBe(e.audit_passed);
        const failure = end.audit
          ? end.audit.reason === 'peer_receipt_signature_invalid'
            ? { reason: end.audit.reason }
            : { reason: end.audit.reason, evidence: end.audit.evidence }
          : null;
        expect(failure).toEqual(e.audit_failure);
        expect(['play_rejected', 'rule_rejected'].includes(end.reason) ? { error: 'ValueError', message: end.detail } : null).toEqual(e.raised);
        expect(end.result).toEqual(e.result);
        const recorded = sentBy(g, c.verifier);
        const changes = run.sent
          .map((m, index) => ({ index, message: m }))
          .filter(({ index, message }) => JSON.stringify(message) !== JSON.stringify(recorded[index]));
        expect(changes).toEqual(e.verifier_sent_changes);
        expect(run.sent.length).toBe(e.verifier_sent_count);
        // A cheat the verifier can prove names the peer and the step that failed.
        if (end.reason !== 'completed') {
          expect(end.proof?.offender).toBe(other(c.verifier));
          expect(end.proof?.reason).toBe(e.audit_failure?.reason ?? e.raised!.message.replace(/^peer play (rule-)?rejected: /, ''));
        }
      }, 120_000);
    }
  });
}

// A peer message swapped for garbage at each kind of step ends our side with a typed reason, never a throw.
describe.skipIf(!doc)(`garbage from the peer at every kind of step ends with a typed reason (wasm)${AUDITS.missing ? ` (${AUDITS.missing})` : ''}`, () => {
  const crypto = backends.wasm;
  const TYPED = ['audit_failed', 'audit_refused', 'play_rejected', 'rule_rejected', 'peer_error', 'unexpected_message', 'bad_peer_material'];
  const garbage: [string, (m: Message) => Message][] = [
    ['only its action', (m) => ({ action: m.action })],
    ['every field a float', (m) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, k === 'action' ? v : 1.5])) as Message],
    [
      'every string field not hex, every list of strings not JSON',
      (m) =>
        Object.fromEntries(
          Object.entries(m).map(([k, v]) => [k, k === 'action' ? v : typeof v === 'string' ? 'zz' : Array.isArray(v) ? v.map(() => '{"kind":') : v]),
        ) as Message,
    ],
    ['another action', (m) => ({ ...m, action: m.action === 'mp_pass' ? 'mp_play' : 'mp_pass' })],
  ];
  for (const role of ['host', 'guest'] as const) {
    const theirs = game ? sentBy(game, other(role)) : [];
    const firsts = ['mp_setup_a', 'mp_setup_b', 'mp_ot_request', 'mp_ot_response', 'mp_play', 'mp_opening', 'mp_witness', 'mp_terminal_receipt']
      .map((a) => theirs.findIndex((m) => m.action === a))
      .filter((i) => i > 0);
    it(`as the ${role}`, async () => {
      for (const i of firsts) {
        for (const [name, g] of garbage) {
          const msgs = theirs.map((m, j) => (j === i ? g(m) : m));
          const run = await runSide(crypto, game!, role, msgs);
          // A changed game can need a secret the recording never drew (another card to draw): not the mode's fault.
          if (run.end?.reason === 'hook_error' && /the vector has no/.test(run.end.detail)) continue;
          expect(TYPED, `${theirs[i]!.action} with ${name}: ${run.end?.detail}`).toContain(run.end?.reason);
        }
      }
    }, 300_000);
  }
});

describe.skipIf(!doc)(`the game's rules replayed offline over the recorded game${AUDITS.missing ? ` (${AUDITS.missing})` : ''}`, () => {
  const fresh = (role: Role) => {
    const h = instantiateHooks(crazyEights as HooksModule<'mental_poker'>, {
      role,
      options: {},
      args: [],
      stateDir: '',
      decision: null,
      random: () => 0,
    }) as MentalPokerHooks;
    h.proto_init?.({}, role, [], '', null);
    return h;
  };
  const wire = (msgs: readonly { direction: string; message: Message }[]) =>
    msgs.map((m) => ({ from: (m.direction === 'host_to_guest' ? 'host' : 'guest') as Role, msg: m.message }));
  it('accept every play, from either side', () => {
    for (const role of ['host', 'guest'] as const) expect(replayRules(fresh(role), wire(game!.messages), role, { host: 5, guest: 5 })).toEqual({ ok: true });
  });
  it("refuse the altered play of play_rule_rejected_host, at its place, for the reference's reason", () => {
    const c = mutated.find((m) => m.id === 'play_rule_rejected_host')!;
    const hostMsgs = applyOps(sentBy(game!, 'host'), c.ops);
    let k = 0;
    const msgs = game!.messages.map((m) => (m.direction === 'host_to_guest' ? { ...m, message: hostMsgs[k++]! } : m));
    const v = replayRules(fresh('guest'), wire(msgs), 'guest', { host: 5, guest: 5 });
    expect(v).toEqual({ ok: false, index: game!.messages.findIndex((m) => m.message.action === 'mp_play'), reason: 'unexpected_call_suit' });
  });
});
