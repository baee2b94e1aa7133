/**
 * mental_poker as a third party checks it: the message sequence (the host's `mp_setup_a`, the guest's
 * `mp_setup_b`, then any mp message of either side, except that an `mp_ot_request` must be answered by
 * the other side's `mp_ot_response` with its id, or an `error`, before anything else, and nothing
 * follows an `error`; whole once both sides sent their `mp_terminal_receipt`; turns, deals and draws
 * are the game's own checks), the closing evidence (both terminal receipts and transcript_receipt.json),
 * and the cheat proofs the mode writes, rejudged by replaying the whole game from the accuser's side.
 */
import type { Crypto } from '../../crypto/backend.js';
import { fromHex } from '../../crypto/encoding.js';
import { instantiateHooks } from '../../hooks/instantiate.js';
import type { HooksModule, MentalPokerHooks, Message, Role } from '../../hooks/types.js';
import { replayRules } from '../../mp/mode-rules.js';
import { replayGame, type WireMessage } from '../../mp/replay.js';
import type { Spec } from '../../spec/types.js';
import { wholeChains, type FlowStep, type OfflineEvidence, type ProofCheck, type ProofClaim, type ProofJudge, type WireSequence } from '../mode.js';
import { canonical, strictParse } from '../strict-json.js';

const HEX64 = /^[0-9a-f]{64}$/;
const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const other = (r: Role): Role => (r === 'host' ? 'guest' : 'host');

export function mentalPokerSequence(): WireSequence {
  let phase: 'play' | 'done' | 'closed' = 'play';
  let setups = 0;
  let pending: { from: Role; id: unknown } | undefined;
  const sent: Record<Role, boolean> = { host: false, guest: false };
  const receipts: Partial<Record<Role, Message>> = {};
  const refuse = (reason: string): FlowStep => ({ ok: false, reason });
  return {
    get complete() {
      return phase === 'done';
    },
    next(from, msg) {
      const what = `the ${from}'s ${msg.action}`;
      if (phase === 'closed') return refuse(`${what} follows the end of the session`);
      if (phase === 'done') return refuse(`${what} follows the end of the mental_poker sequence`);
      if (msg.action === 'error') {
        phase = 'closed';
        return { ok: true };
      }
      if (setups < 2) {
        const [sender, action] = setups === 0 ? (['host', 'mp_setup_a'] as const) : (['guest', 'mp_setup_b'] as const);
        if (from !== sender || msg.action !== action) return refuse(`expected the ${sender}'s ${action}, got ${what}`);
        setups++;
        return { ok: true };
      }
      if (sent[from]) return refuse(`${what} follows its own mp_terminal_receipt`);
      if (pending) {
        if (from === pending.from) return refuse(`${what} before the answer to its mp_ot_request ${JSON.stringify(pending.id)}`);
        if (msg.action !== 'mp_ot_response' || msg['id'] !== pending.id)
          return refuse(`expected the ${from}'s mp_ot_response to ${JSON.stringify(pending.id)}, got ${what}`);
        pending = undefined;
        return { ok: true };
      }
      if (msg.action === 'mp_ot_response') return refuse(`${what} answers no mp_ot_request`);
      if (msg.action === 'mp_ot_request') pending = { from, id: msg['id'] };
      if (msg.action === 'mp_terminal_receipt') sent[from] = true;
      if (sent.host && sent.guest) phase = 'done';
      return { ok: true };
    },
    record(from, msg) {
      if (msg.action === 'mp_terminal_receipt') receipts[from] = msg;
    },
    checkClose: (crypto, evidence) => terminalReceipts(crypto, evidence, receipts),
  };
}

/**
 * A finished game: both terminal receipts name one transcript hash, each signed by its sender's
 * handshake key over that root, and transcript_receipt.json holds exactly the writer's signature, the
 * peer's and `passed`. Answers why not, or undefined.
 */
function terminalReceipts(crypto: Crypto, evidence: OfflineEvidence, r: Partial<Record<Role, Message>>): string | undefined {
  const { header, mpReceiptText: text } = evidence;
  const [h, g] = [r.host, r.guest];
  if (!h || !g) return 'a mental_poker game completed without both terminal receipts';
  const hash = h['transcript_hash'];
  if (typeof hash !== 'string' || !HEX64.test(hash) || g['transcript_hash'] !== hash) return 'the two terminal receipts name different transcript hashes';
  for (const [side, m] of [
    ['host', h],
    ['guest', g],
  ] as const) {
    const key = side === 'host' ? header.host_key : header.guest_key;
    const sig = m['signature'];
    if (m['public_key'] !== key || typeof sig !== 'string' || !/^[0-9a-f]{128}$/.test(sig) || !crypto.ed25519Verify(fromHex(key), fromHex(hash), fromHex(sig)))
      return `the ${side}'s terminal receipt is not signed by its handshake key over the transcript hash`;
  }
  if (text === null) return 'transcript_receipt.json is missing beside a finished mental_poker game';
  const got = strictParse(crypto, text);
  const [mine, theirs] = header.role === 'host' ? [h, g] : [g, h];
  const expected = { transcript_hash: hash, signature: mine['signature'], peer_signature: theirs['signature'], audit_status: 'passed' };
  if (!got || canonical(crypto, got.value) !== canonical(crypto, expected))
    return 'transcript_receipt.json does not match the terminal receipts in the transcript';
  return undefined;
}

const hooksAs = (hooks: HooksModule, verifier: Role) =>
  instantiateHooks(hooks as HooksModule<'mental_poker'>, {
    role: verifier,
    options: {},
    args: [],
    stateDir: '',
    decision: null,
    random: () => 0,
  }) as unknown as MentalPokerHooks;

/**
 * A cheat: the proof holds every frame of the game, each sender's from its first, and the game is
 * replayed from the accuser's side (ts/mp/replay.ts) up to the claimed failure: a play that fails the
 * card check, a play the game's rules refuse (replayed through the protocol's hooks), or the audit
 * step (or refused receipt) named. The deck comes from the protocol's hooks, the deal plan from the
 * proof (it shows in the frames anyway: that many OTs before the first play).
 */
function judgeMentalPoker(crypto: Crypto, proof: ProofClaim, spec: Spec, hooks: HooksModule | undefined): ProofCheck {
  const no = (reason: string): ProofCheck => ({ proven: false, reason });
  if (!hooks) return no("a mental-poker proof is checked with the protocol's deck: pass --protocol-dir");
  const gap = wholeChains(proof.frames);
  if (gap) return no(gap);
  const d = proof.detail;
  const deal = d['deal'] as { host?: unknown; guest?: unknown } | null;
  if (!isObject(deal) || !Number.isSafeInteger(deal['host']) || !Number.isSafeInteger(deal['guest'])) return no('the proof names no deal plan');
  if (typeof d['reason'] !== 'string') return no('the proof names no failed step');
  const verifier = other(proof.offender);
  const h = hooksAs(hooks, verifier);
  const frames = proof.frames.filter((f) => !f.msg.action.startsWith('_'));
  const messages: WireMessage[] = frames.map((f) => ({ direction: f.from === 'host' ? 'host_to_guest' : 'guest_to_host', message: f.msg }));
  const specId = (spec as { protocol_id?: unknown }).protocol_id;
  const replay = replayGame(crypto, messages, {
    verifier,
    protocolId: typeof specId === 'string' && specId ? specId : spec.name || 'mental-poker',
    sessionId: proof.sid,
    universe: h.proto_mp_deck_universe(),
    deal: { host: deal['host'] as number, guest: deal['guest'] as number },
    peerPublicKey: fromHex(proof.offender === 'host' ? proof.host_key : proof.guest_key),
  });
  const v = replay.verdict;
  if (proof.kind === 'mp_play_rejected') {
    return v.raised === `peer play rejected: ${d['reason']}`
      ? { proven: true, reason: `the ${proof.offender}'s play fails the card check: ${d['reason']}` }
      : no(`the replay does not reject that play (${v.raised ?? 'no stop'})`);
  }
  if (proof.kind === 'mp_rule_rejected') {
    if (v.raised?.startsWith('peer play rejected')) return no(`that play fails the card check, not the rules (${v.raised})`);
    const fresh = hooksAs(hooks, verifier);
    fresh.proto_init?.({}, verifier, [], '', null);
    const played = frames.map((f) => ({ from: f.from, msg: f.msg }));
    const r = replayRules(fresh, played, verifier, { host: deal['host'] as number, guest: deal['guest'] as number });
    if (r.ok === null) return no(`the game cannot be replayed: ${r.error}`);
    if (r.ok) return no("the game's rules accept every play of the offender");
    const lastPlay = played
      .map((m, i) => [m, i] as const)
      .filter(([m]) => m.from === proof.offender && m.msg.action === 'mp_play')
      .at(-1)?.[1];
    if (r.index !== lastPlay) return no('the rules refuse an earlier play than the one the session ended on');
    return r.reason === d['reason']
      ? { proven: true, reason: `the ${proof.offender}'s play breaks the game's rules: ${r.reason}` }
      : no(`the rules refuse that play for another reason (${r.reason})`);
  }
  const f = v.auditFailure;
  if (!f || f.reason !== d['reason']) return no(`the replayed audit does not fail with ${String(d['reason'])} (${f ? f.reason : (v.raised ?? 'it passes')})`);
  if (f.evidence !== undefined && canonical(crypto, f.evidence ?? null) !== canonical(crypto, d['evidence'] ?? null))
    return no('the replayed audit fails with other evidence');
  return { proven: true, reason: `the ${proof.offender} is caught by the audit: ${f.reason}` };
}

/** A mental-poker proof holds the whole game. */
const WHOLE_GAME: ProofJudge = { maxFrames: 4096, judge: (crypto, claim, spec, hooks) => judgeMentalPoker(crypto, claim, spec, hooks) };

export const MENTAL_POKER_PROOFS: Record<string, ProofJudge> = {
  mp_play_rejected: WHOLE_GAME,
  mp_rule_rejected: WHOLE_GAME,
  mp_audit_failed: WHOLE_GAME,
};
