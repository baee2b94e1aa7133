/**
 * The reference's authoritative_group vectors (../shared/conformance/aigenora-reference/
 * aigenora-group-vectors.json, described in that folder's README, "group") against one backend: the
 * JSON delta (made and applied), delta refusals with the reference's texts, admission strings and
 * signatures, the channel admission handshake, checkpoint certificates and group canonical JSON; the
 * whole Community Room session replayed through our Leader and Member replicas (every envelope byte for
 * byte), and the reference's bool/int delta quirk.
 */
import type { Crypto } from '../crypto/backend.js';
import { fromHex, toHex, utf8 } from '../crypto/encoding.js';
import type { GroupHooks, GroupMember } from '../hooks/types.js';
import { applyDelta, makeDelta } from '../group/delta.js';
import { GroupError } from '../group/errors.js';
import { groupCanonical, groupJsonHash } from '../group/json.js';
import { GroupLeader, groupConfigFromSpec, type GroupInput } from '../group/leader.js';
import { GroupReplica } from '../group/member.js';
import { checkGroupSession } from '../group/session-check.js';
import communityRoom from '../protocols/community-room/hooks.js';
import {
  admissionCanonical,
  channelReadyBytes,
  checkChannelChallenge,
  checkpointCertificate,
  checkpointHash,
  normalizeMembers,
  readJoin,
  signAdmission,
  signChannelReady,
  signCheckpoint,
  transportBindingCanonical,
  verifyAdmission,
  verifyChannelReady,
  verifyCheckpoint,
  type AdmissionFields,
  type ChannelReadyFields,
  type UnsignedCheckpoint,
} from '../group/wire.js';
import { rtCanonical } from '../realtime/json.js';
import type { Suite } from './formats.js';
import { eq, readVectors, revive, vectorSuite, type Vec } from './mp-vectors.js';

export const GROUP_FORMAT = 'aigenora-group-vectors/1';

/** Compares JSON values by their text (no group limits: the delta vectors go beyond them on purpose). */
const same = (got: unknown, want: unknown, what: string) => eq(rtCanonical(got), rtCanonical(want), what);

/** What a call threw, as the reference's vectors give it: the message of a refusal. */
function refusal(f: () => unknown): string | undefined {
  try {
    f();
    return undefined;
  } catch (e) {
    if (e instanceof GroupError) return e.message;
    throw e;
  }
}

function jsonDelta(v: Vec): void {
  for (const item of v['items'] as Vec[]) {
    const name = `${String(v['id'])} ${String(item['name'])}`;
    const want = item['expect'] as Vec;
    const ops = makeDelta(item['before'], item['after']);
    // Replaying the reference's own ops reproduces its recorded result, whatever that is.
    same(applyDelta(item['before'], want['ops']), want['apply_result'], `${name} applying the reference's ops`);
    same(applyDelta(item['before'], ops), item['after'], `${name} applying our ops gives after`);
    if (item['name'] === 'bool_int_equal_quirk') {
      // The reference compares with Python's ==, under which 1 == True and 0 == False: it makes no op
      // and its replay keeps the old values (apply_equals_after false), so the hash it sends no longer
      // matches its own state. Our delta is exact: each changed key gets a set of its new value, and the
      // replay equals `after`. The vector must still record the reference's bug for this to mean anything.
      eq(want['ops'], [], `${name} the reference makes no op`);
      eq(want['apply_equals_after'], false, `${name} the reference's replay differs from after`);
      const after = item['after'] as Record<string, unknown>;
      same(
        ops,
        Object.keys(after)
          .sort()
          .map((k) => ({ op: 'set', path: [k], value: after[k] })),
        `${name} our ops`,
      );
      continue;
    }
    eq(want['apply_equals_after'], true, `${name} apply_equals_after`);
    same(ops, want['ops'], `${name} ops`);
  }
}

function jsonDeltaApply(v: Vec): void {
  for (const item of v['items'] as Vec[]) {
    const name = `${String(v['id'])} ${String(item['name'])}`;
    const want = item['expect'] as Vec;
    if (want['ok']) same(applyDelta(v['before'], item['ops']), want['result'], `${name} result`);
    else
      eq(
        refusal(() => applyDelta(v['before'], item['ops'])),
        want['message'],
        `${name} refusal`,
      );
  }
}

function admission(c: Crypto, v: Vec): void {
  for (const [i, item] of (v['items'] as Vec[]).entries()) {
    const f = item as unknown as AdmissionFields;
    const want = item['expect'] as Vec;
    eq(admissionCanonical(f), want['canonical'], `${String(v['id'])}[${i}] canonical`);
    eq(signAdmission(c, String(item['leader_seed']), f), want['leader_signature'], `${String(v['id'])}[${i}] leader_signature`);
    eq(signAdmission(c, String(item['member_seed']), f), want['member_signature'], `${String(v['id'])}[${i}] member_signature`);
    eq(
      verifyAdmission(c, f.leader_public_key, f, String(want['member_signature'])),
      false,
      `${String(v['id'])}[${i}] the member's signature is not the leader's`,
    );
    eq(verifyAdmission(c, f.member_public_key, f, String(want['member_signature'])), true, `${String(v['id'])}[${i}] member_signature verifies`);
  }
}

function handshake(c: Crypto, v: Vec): void {
  const id = String(v['id']);
  const [leaderPk, memberPk, protocolId] = [String(v['leader_public_key']), String(v['member_public_key']), String(v['protocol_id'])];
  const binding = transportBindingCanonical(leaderPk, 'iroh', String(v['iroh_ticket']), protocolId);
  eq(binding, v['transport_binding_canonical'], `${id} transport binding`);
  eq(toHex(c.ed25519Sign(fromHex(String(v['leader_seed'])), utf8(binding))), v['transport_binding_signature'], `${id} transport binding signature`);
  const [join, adm, ready] = (v['messages'] as Vec[]).map((m) => m['message'] as Vec) as [Vec, Vec, Vec];
  eq(
    (v['messages'] as Vec[]).map((m) => `${String(m['from'])}:${String(m['message']['_group'])}`),
    ['member:join', 'leader:admission', 'member:ready'],
    `${id} message order`,
  );
  const joined = readJoin(join, String(v['group_id']));
  eq(joined, { member_public_key: memberPk, join_nonce: join['join_nonce'] }, `${id} join as the leader reads it`);
  const fields: AdmissionFields = {
    group_id: String(v['group_id']),
    leader_public_key: leaderPk,
    member_public_key: memberPk,
    protocol_id: protocolId,
    leader_epoch: Number(v['leader_epoch']),
    join_nonce: joined.join_nonce,
  };
  eq(admissionCanonical(fields), v['admission_canonical'], `${id} admission canonical`);
  eq(signAdmission(c, String(v['leader_seed']), fields), adm['leader_signature'], `${id} admission leader_signature`);
  eq(verifyAdmission(c, leaderPk, fields, String(adm['leader_signature'])), true, `${id} the member verifies the admission`);
  checkChannelChallenge(adm['channel_challenge']);
  const body = v['server_member_post_body'] as Vec;
  same(
    body,
    {
      join_nonce: joined.join_nonce,
      leader_epoch: fields.leader_epoch,
      leader_signature: adm['leader_signature'],
      member_signature: signAdmission(c, String(v['member_seed']), fields),
    },
    `${id} server post body`,
  );
  const proof: ChannelReadyFields = {
    group_id: String(ready['group_id']),
    protocol_id: String(ready['protocol_id']),
    leader_epoch: Number(ready['leader_epoch']),
    member_public_key: String(ready['member_public_key']),
    member_id: String(ready['member_id']),
    seat: Number(ready['seat']),
    join_nonce: String(ready['join_nonce']),
    channel_challenge: String(adm['channel_challenge']),
  };
  eq(ready['channel_challenge'], adm['channel_challenge'], `${id} the ready echoes the challenge`);
  eq(toHex(channelReadyBytes(proof)), v['channel_ready_bytes'], `${id} channel-ready bytes`);
  eq(signChannelReady(c, String(v['member_seed']), proof), ready['member_signature'], `${id} ready member_signature`);
  eq(
    verifyChannelReady(c, memberPk, { ...proof, channel_challenge: '0'.repeat(32) }, String(ready['member_signature'])),
    false,
    `${id} the proof is bound to the challenge`,
  );
  const want = v['expect'] as Vec;
  same(
    normalizeMembers([{ member_id: ready['member_id'], public_key: ready['member_public_key'], seat: ready['seat'] }])[0],
    want['leader_admitted_member'],
    `${id} the member record the leader accepts`,
  );
  same(want['member_view_of_member']['request'], body, `${id} what the member posted`);
}

function checkpoint(c: Crypto, v: Vec): void {
  for (const [i, item] of (v['items'] as Vec[]).entries()) {
    const name = `${String(v['id'])}[${i}]`;
    const unsigned = item['checkpoint_unsigned'] as UnsignedCheckpoint;
    const want = item['expect'] as Vec;
    eq(groupCanonical(unsigned), want['canonical'], `${name} canonical`);
    eq(checkpointHash(c, unsigned as unknown as Record<string, unknown>), want['checkpoint_hash'], `${name} checkpoint_hash`);
    const signed = signCheckpoint(c, String(item['leader_seed']), unsigned);
    eq(checkpointCertificate(signed as unknown as Record<string, unknown>), want['certificate'], `${name} certificate`);
    eq(signed.checkpoint_signature, want['signature'], `${name} signature`);
    eq(verifyCheckpoint(c, unsigned.leader_public_key, signed as unknown as Record<string, unknown>), true, `${name} verifies`);
  }
}

function canonicalJson(c: Crypto, v: Vec): void {
  for (const item of v['items'] as Vec[]) {
    const name = `${String(v['id'])} ${String(item['name'])}`;
    const value = revive(item['value']);
    const want = item['expect'] as Vec;
    if (want['ok']) {
      eq(groupCanonical(value), want['canonical'], `${name} canonical`);
      eq(groupJsonHash(c, value), toHex(c.sha256(utf8(String(want['canonical'])))), `${name} json_hash`);
    } else
      eq(
        refusal(() => groupCanonical(value)),
        want['message'],
        `${name} refusal`,
      );
  }
}

/** The reference session is the shipped Community Room's; its hooks never draw randomness. */
const roomHooks = (options: Readonly<Record<string, unknown>>): GroupHooks =>
  communityRoom.create({ role: 'host', options, args: [], stateDir: '', decision: null, random: () => 0 });

function session(c: Crypto, v: Vec): void {
  const r = checkGroupSession(c, revive(v), roomHooks);
  if (r.failures.length) throw new Error(`${String(v['id'])}: ${r.failures.length} differences, the first: ${r.failures[0]}`);
  if (r.checked === 0) throw new Error(`${String(v['id'])}: nothing was compared`);
}

/** The fields of the quirk frame that carry or sign over the deltas, the one place ours differs. */
const DELTA_FIELDS = ['view_delta', 'checkpoint_delta', 'view_hash', 'signature'];

function sessionQuirk(c: Crypto, v: Vec): void {
  const id = String(v['id']);
  const boot = v['bootstrap_envelope'] as Vec;
  const frame = v['frame_envelope'] as Vec;
  const want = v['expect'] as Vec;
  const viewer = String(boot['viewer_public_key']);
  // The vector must record the reference's bug for the rest to mean anything: its delta drops the change.
  eq(want['view_delta'], [], `${id} the reference's view delta omits the change`);
  same(frame['view_delta'], [], `${id} the reference's frame carries that delta`);
  eq(want['replica_apply']['ok'], false, `${id} the reference's replica refuses its own frame`);

  // Our replica refuses the reference's frame with the reference's text.
  const replica = () =>
    new GroupReplica({
      crypto: c,
      groupId: String(v['group_id']),
      viewerPublicKey: viewer,
      leaderPublicKey: String(boot['leader_public_key']),
      leaderEpoch: 0,
    });
  const theirs = replica();
  eq(theirs.apply(boot, { bootstrap: true }).status, 'applied', `${id} bootstrap applies`);
  const verdict = theirs.apply(frame);
  eq(verdict.status === 'refused' ? verdict.reason : verdict.status, want['replica_apply']['message'], `${id} our replica's verdict on the reference's frame`);

  // Our leader with the hooks the case describes sends the same bootstrap and receipt, and a frame that
  // differs only in its deltas (which now carry the change) and what signs over them; our replica applies it.
  const initial = (boot['checkpoint'] as Vec)['protocol_state'] as Record<string, unknown>;
  const hooks: GroupHooks = {
    proto_group_initial_state: () => structuredClone(initial),
    proto_group_member_joined: (state) => ({ state }),
    proto_group_member_left: (state) => ({ state }),
    proto_group_handle: (state, _actor, action) => ({ state: { ...state, flag: action['v'] } }),
    proto_group_view: (state) => state,
  };
  const members = v['members'] as GroupMember[];
  const config = groupConfigFromSpec({
    flow: {
      group: {
        min_participants: members.length,
        max_participants: members.length,
        recovery_mode: (boot['checkpoint'] as Vec)['recovery_mode'],
        start_policy: 'all_ready',
      },
    },
  });
  const leader = GroupLeader.start({
    crypto: c,
    hooks,
    config,
    groupId: String(v['group_id']),
    leaderSeed: String(v['leader_seed']),
    leaderEpoch: 0,
    membershipVersion: members.length,
    members,
  });
  same(leader.bootstrapEnvelope(viewer), boot, `${id} our bootstrap envelope`);
  const { envelopes, receipt } = leader.applyInput(v['action'] as GroupInput);
  same(receipt, v['receipt'], `${id} our receipt`);
  const ours = envelopes[viewer] as unknown as Vec;
  const rest = (e: Vec) =>
    Object.fromEntries(
      Object.keys(e)
        .filter((k) => !DELTA_FIELDS.includes(k))
        .map((k) => [k, e[k]]),
    );
  same(rest(ours), rest(frame), `${id} our frame outside the deltas`);
  same(ours['view_delta'], [{ op: 'set', path: ['flag'], value: true }], `${id} our view delta`);
  same(
    ours['checkpoint_delta'],
    [...(frame['checkpoint_delta'] as unknown[]), { op: 'set', path: ['protocol_state', 'flag'], value: true }],
    `${id} our checkpoint delta`,
  );
  const mine = replica();
  mine.apply(boot, { bootstrap: true });
  eq(mine.apply(ours).status, 'applied', `${id} our frame applies`);
  eq(mine.view?.['flag'], true, `${id} the replica sees the change`);
}

function checkCase(c: Crypto, v: Vec): void {
  switch (v['kind']) {
    case 'json_delta':
      return jsonDelta(v);
    case 'json_delta_apply':
      return jsonDeltaApply(v);
    case 'admission':
      return admission(c, v);
    case 'admission_handshake':
      return handshake(c, v);
    case 'checkpoint':
      return checkpoint(c, v);
    case 'canonical_json':
      return canonicalJson(c, v);
    case 'session':
      return session(c, v);
    case 'session_quirk':
      return sessionQuirk(c, v);
    default:
      throw new Error(`unknown case kind ${String(v['kind'])}`);
  }
}

/** Checks every case of the file (its text): counts per kind. */
export function checkGroupVectors(c: Crypto, fileText: string): Record<string, number> {
  const doc = readVectors(fileText);
  eq(doc.format, GROUP_FORMAT, 'format');
  const checked: Record<string, number> = {};
  for (const v of doc.cases) {
    checkCase(c, v);
    checked[String(v['kind'])] = (checked[String(v['kind'])] ?? 0) + 1;
  }
  return checked;
}

/** The file (its text) as a conformance suite: one case per vector. */
export function groupSuite(fileText: string): Suite {
  return vectorSuite(GROUP_FORMAT, readVectors(fileText).cases, checkCase);
}
