/**
 * The reference's authoritative_realtime vectors (../shared/conformance/aigenora-reference/
 * aigenora-rt-hash-vectors.json, described in that folder's README, "rt-hash") against one backend:
 * canonical JSON and json_hash, the ruleset and match-config hashes, frame hashes, the guest's frame
 * check, the host's handshake refusals, and a whole host session driven by the vectors' scripted guest
 * (every ack and frame compared with what the reference's host sent).
 */
import type { Crypto } from '../crypto/backend.js';
import { fromBase64Url, toHex, utf8 } from '../crypto/encoding.js';
import type { Message } from '../hooks/types.js';
import { MessageValidator } from '../spec/messages.js';
import { referenceValidationText } from '../realtime/validation-text.js';
import type { Suite } from './formats.js';
import type { Spec, WireDirection } from '../spec/types.js';
import { RealtimeError } from '../realtime/errors.js';
import { joinInline, RealtimeHost, tickInline, type RealtimeHostHooks } from '../realtime/host.js';
import { parseRealtimeJson, rtCanonical, rtJsonHash } from '../realtime/json.js';
import { inRuleset, rulesetHash, rulesetObject } from '../realtime/ruleset.js';
import { matchConfigHash, matchConfigObject, realtimeConfig, verifyFrame, type RtFrame } from '../realtime/wire.js';
import { eq, readVectors, revive, vectorSuite, type Vec } from './mp-vectors.js';
import { vectorDuelHooks } from './rt-vector-duel.js';

export const RT_HASH_FORMAT = 'aigenora-rt-hash-vectors/1';

type Doc = { format: string; cases: Vec[] };

const bytesOf = (b64: string) => fromBase64Url(b64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''));

/** The Vector Duel spec and ruleset files, from the file's ruleset case with that hash. */
function ruleset(doc: Doc, hash: string): { files: { path: string; bytes: Uint8Array }[]; spec: Spec } {
  const r = doc.cases.find((c) => c['kind'] === 'ruleset_hash' && c['ruleset_hash'] === hash);
  if (!r) throw new Error(`no ruleset case with hash ${hash}`);
  const files = (r['files'] as Vec[]).map((f) => ({ path: String(f['path']), bytes: bytesOf(String(f['content_base64'])) }));
  const spec = files.find((f) => f.path === 'spec.json');
  if (!spec) throw new Error('the ruleset has no spec.json');
  return { files, spec: JSON.parse(new TextDecoder().decode(spec.bytes)) as Spec };
}

function checker(spec: Spec, direction: WireDirection): (msg: Record<string, unknown>) => string | undefined {
  const v = new MessageValidator(spec);
  return (msg) => {
    const r = v.check(msg, direction);
    return r.ok ? undefined : referenceValidationText(r.errors);
  };
}

/** A host as the engine runs it, on the vectors' protocol and clock; every message it sends passes the spec, as the core requires. */
function hostFor(c: Crypto, doc: Doc, v: Vec, spec: Spec, timeNs: (tick: number) => bigint | number) {
  const config = realtimeConfig(spec as never);
  const rh = String(v['ruleset_hash'] ?? v['guest_join']?.['ruleset_hash']);
  const options = (v['options'] ?? {}) as Record<string, unknown>;
  const mch = matchConfigHash(c, rh, options, config);
  const hooks = vectorDuelHooks('host', options);
  const host = new RealtimeHost({
    crypto: c,
    config,
    rulesetHash: rh,
    matchConfigHash: mch,
    validateCommands: hooks.validateCommands,
    check: checker(spec, 'guest_to_host'),
  });
  const outbound = checker(spec, 'host_to_guest');
  const sent: Message[] = [];
  const send = (m: Message) => {
    const bad = outbound(m);
    if (bad !== undefined) throw new ValidationFailure(bad);
    sent.push(m);
  };
  return { host, hooks, timeNs, sent, send, mch, config };
}

class ValidationFailure extends Error {}

/** Runs a scripted session: join, then each tick's deliveries (acked at once), then the tick. */
function runSession(
  s: { host: RealtimeHost; hooks: RealtimeHostHooks; timeNs: (tick: number) => bigint | number; send: (m: Message) => void },
  join: Vec,
  deliveries: Vec[],
): void {
  const { host, hooks, send } = s;
  const first = joinInline(host, hooks, join, s.timeNs(0));
  send(first);
  if (first.action === 'rt_reject') return;
  for (;;) {
    for (const d of deliveries.filter((x) => x['deliver_after_tick'] === host.tick)) {
      const a = host.command(d['message'] as Record<string, unknown>);
      if (a.ack) send(a.ack);
    }
    send(tickInline(host, hooks, s.timeNs).message);
    if (host.outcome !== 'none') return;
  }
}

const canon = (v: unknown) => rtCanonical(v);

function checkCase(c: Crypto, doc: Doc, v: Vec): void {
  const id = String(v['id']);
  switch (v['kind']) {
    case 'canonical_json':
      for (const [i, item] of (v['items'] as Vec[]).entries()) {
        const value = revive(item['value']);
        const want = item['expect'] as Vec;
        if (want['ok']) {
          eq(rtCanonical(value), want['canonical'], `${id}[${i}] canonical`);
          eq(rtJsonHash(c, value), want['json_hash'], `${id}[${i}] json_hash`);
        } else {
          let code: string | undefined;
          try {
            rtCanonical(value);
          } catch (e) {
            if (!(e instanceof RealtimeError)) throw e;
            code = `${e.code}: ${e.message}`;
          }
          eq(code, `RT_JSON_NOT_FINITE: ${String(want['message'])}`, `${id}[${i}] refusal`);
        }
      }
      return;
    case 'ruleset_hash': {
      const files = (v['files'] as Vec[]).map((f) => ({ path: String(f['path']), bytes: bytesOf(String(f['content_base64'])) }));
      for (const f of v['files'] as Vec[]) eq(inRuleset(String(f['path'])), f['included'], `${id} ${String(f['path'])} included`);
      eq(rtCanonical(rulesetObject(c, files)), v['hashed_object_canonical'], `${id} hashed object`);
      eq(toHex(c.sha256(utf8(String(v['hashed_object_canonical'])))), v['ruleset_hash'], `${id} sha256 of the object`);
      eq(rulesetHash(c, files), v['ruleset_hash'], `${id} ruleset_hash`);
      return;
    }
    case 'match_config_hash': {
      const config = realtimeConfig({ flow: { realtime: v['realtime'] } });
      for (const [i, item] of (v['items'] as Vec[]).entries()) {
        eq(rtCanonical(matchConfigObject(String(v['ruleset_hash']), item['options'], config)), item['hashed_object_canonical'], `${id}[${i}] object`);
        eq(matchConfigHash(c, String(v['ruleset_hash']), item['options'], config), item['match_config_hash'], `${id}[${i}] match_config_hash`);
      }
      return;
    }
    case 'frame_hashes':
      for (const item of v['items'] as Vec[]) {
        for (const [text, hash] of [
          ['state_canonical', 'state_hash'],
          ['core_canonical', 'chain_hash'],
        ] as const) {
          const parsed = parseRealtimeJson(String(item[text]));
          eq(rtCanonical(parsed), item[text], `${id} tick ${String(item['tick'])} ${text} round trip`);
          eq(rtJsonHash(c, parsed), item[hash], `${id} tick ${String(item['tick'])} ${hash}`);
        }
      }
      return;
    case 'verify_frame':
      for (const item of v['items'] as Vec[]) {
        const fault = verifyFrame(c, item['frame'], (item['previous'] ?? undefined) as RtFrame | undefined);
        const want = item['expect'] as Vec;
        eq(
          fault ? { ok: false, message: fault.message } : { ok: true },
          want['ok'] ? { ok: true } : { ok: false, message: want['message'] },
          `${id} ${String(item['name'])}`,
        );
      }
      return;
    case 'handshake':
      for (const item of v['items'] as Vec[]) {
        const { spec } = ruleset(
          doc,
          String(item['guest_join']['ruleset_hash']).startsWith('0000') ? firstRuleset(doc) : String(item['guest_join']['ruleset_hash']),
        );
        // The item's own spec: rt_join.wire_version may reach spec_rt_join_wire_version_max.
        const patched = structuredClone(spec);
        const join = patched.messages.find((m) => m.name === 'rt_join')!;
        join.fields['wire_version']!.max = Number(item['spec_rt_join_wire_version_max']);
        eq(checker(patched, 'guest_to_host')(item['guest_join']), undefined, `${id} ${String(item['name'])}: the join passes its spec`);
        const session = hostFor(c, doc, { ruleset_hash: firstRuleset(doc), options: sessionOptions(doc) }, patched, () => 0);
        runSession(session, item['guest_join'], []);
        eq(session.sent.map(canon), (item['expect']['host_messages'] as Vec[]).map(canon), `${id} ${String(item['name'])} host messages`);
        eq((session.sent[0] as Vec | undefined)?.['reason'], item['expect']['result_reason'], `${id} ${String(item['name'])} reason`);
      }
      return;
    case 'host_session': {
      const { spec, files } = ruleset(doc, String(v['ruleset_hash']));
      eq(rulesetHash(c, files), v['ruleset_hash'], `${id} ruleset_hash`);
      eq(realtimeConfig(spec as never), v['spec_realtime'], `${id} config`);
      const frames = v['expect']['frames'] as Vec[];
      const s = hostFor(c, doc, v, spec, (tick) => frames[tick]!['host_time_ns']);
      eq(s.mch, v['match_config_hash'], `${id} match_config_hash`);
      runSession(s, v['guest_join'], v['guest_messages']);
      const want = v['host_messages'] as Vec[];
      eq(s.sent.length, want.length, `${id} number of host messages`);
      s.sent.forEach((m, i) => eq(canon(m), canon(want[i]), `${id} host message ${i} (${m.action})`));
      const acks = s.sent
        .filter((m) => m.action === 'rt_command_ack')
        .map((m) => ({
          seq: m['seq'],
          target_tick: m['target_tick'],
          status: m['status'],
          received_at_tick: m['received_at_tick'],
          command_hash: m['command_hash'],
          reason: m['reason'] ?? null,
        }));
      eq(acks, v['expect']['acks'], `${id} acks`);
      const ours = s.sent.map((m) => (m.action === 'rt_ready' || m.action === 'rt_frame' ? (m['frame'] as RtFrame) : undefined)).filter((f) => f !== undefined);
      eq(
        ours.map((f) => ({ tick: f.tick, state_hash: f.state_hash, chain_hash: f.chain_hash, host_time_ns: f.host_time_ns, outcome: f.outcome })),
        frames,
        `${id} frames`,
      );
      eq({ completed: true, outcome: s.host.outcome, tick: s.host.tick, ruleset_hash: rulesetHash(c, files) }, v['expect']['result'], `${id} result`);
      return;
    }
    case 'host_session_quirk': {
      const { spec } = ruleset(doc, firstRuleset(doc));
      const want = v['expect'] as Vec;
      if (id === 'wire-version-2-with-shipped-spec') {
        // The shipped spec caps wire_version at 1, so the reference's host raises on validating the join
        // and sends nothing. Our core checks every inbound message against the spec before the mode sees
        // it, so the join ends the session as invalid_message and no rt_reject is sent either: the peer
        // observes the same silence. What the spec check says is the reference's text.
        eq(checker(spec, 'guest_to_host')(v['guest_join']), want['raised']['message'], `${id} the join's refusal`);
        eq(want['host_messages'], [], `${id} the reference's host sent nothing`);
        return;
      }
      if (id === 'seq-zero-kills-receiver') {
        // seq 0 fails the spec's seq >= 1, so the host rejects the command, and its rejection ack (seq 0)
        // fails the same check on the way out: the reference's receiver dies there and reads nothing
        // more. Our core checks every message the mode sends against the spec as well, so the run stops
        // at that ack with the same text and no ack reaches the guest; live, the core refuses the seq-0
        // command on arrival (invalid_message) and the session ends before any ack is made.
        const s = hostFor(c, doc, { ruleset_hash: firstRuleset(doc), options: sessionOptions(doc) }, spec, () => 0);
        eq(s.mch, v['guest_join']['match_config_hash'], `${id} match_config_hash`);
        let raised: string | undefined;
        try {
          runSession(s, v['guest_join'], v['guest_messages']);
        } catch (e) {
          if (!(e instanceof ValidationFailure)) throw e;
          raised = e.message;
        }
        eq(raised, want['raised']['message'], `${id} raised`);
        eq(
          s.sent.map((m) => m.action),
          ['rt_ready'],
          `${id} messages sent before the receiver stopped`,
        );
        eq(s.host.tick, 0, `${id} the host stopped at tick 0, before the second command`);
        return;
      }
      throw new Error(`unknown quirk ${id}`);
    }
    default:
      throw new Error(`unknown case kind ${String(v['kind'])}`);
  }
}

function firstRuleset(doc: Doc): string {
  const r = doc.cases.find((c) => c['kind'] === 'ruleset_hash');
  if (!r) throw new Error('the file has no ruleset case');
  return String(r['ruleset_hash']);
}

function sessionOptions(doc: Doc): Record<string, unknown> {
  return (doc.cases.find((c) => c['kind'] === 'host_session')?.['options'] ?? {}) as Record<string, unknown>;
}

/** Every case of the file (its text): counts per kind. */
export function checkRtHashVectors(c: Crypto, fileText: string): Record<string, number> {
  const doc = readVectors(fileText);
  eq(doc.format, RT_HASH_FORMAT, 'format');
  const counts: Record<string, number> = {};
  for (const v of doc.cases) {
    checkCase(c, doc, v);
    counts[v['kind']] = (counts[v['kind']] ?? 0) + 1;
  }
  return counts;
}

/** The file (its text) as a conformance suite: one case per vector. */
export function rtHashSuite(fileText: string): Suite {
  const doc = readVectors(fileText);
  return vectorSuite(RT_HASH_FORMAT, doc.cases, (c, v) => checkCase(c, doc, v));
}
