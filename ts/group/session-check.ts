/**
 * Replays a reference group session (the group vectors' `session` case) through this implementation:
 * our leader, driven with the case's inputs and keys, must send every viewer the reference's envelope
 * byte for byte (group canonical JSON), answer the same receipts and derived values (frame hash,
 * checkpoint, certificate, view hashes, signature payloads), and our replicas must apply what the
 * reference's did, end where they ended, refuse the probes and tampered envelopes the reference
 * refused with the same texts. Returns the list of differences (empty when the session reproduces).
 */
import type { Crypto } from '../crypto/backend.js';
import type { GroupHooks } from '../hooks/types.js';
import { groupCanonical } from './json.js';
import { GroupLeader, GroupLeaderError, groupConfigFromSpec, type Envelopes, type GroupInput } from './leader.js';
import { GroupReplica } from './member.js';
import { checkpointCertificate, signaturePayload, stripCheckpoint, privatePayloadOf } from './wire.js';
import { fromUtf8 } from '../crypto/encoding.js';

export interface SessionCheck {
  /** Comparisons made. */
  checked: number;
  /** One line per difference. */
  failures: string[];
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});

const canon = (v: unknown): string => {
  try {
    return groupCanonical(v);
  } catch (e) {
    return `<not canonical: ${(e as Error).message}>`;
  }
};

/** What a reference error name and text correspond to in our leader's refusal. */
function sameLeaderError(e: unknown, expect: Obj): boolean {
  if (!(e instanceof GroupLeaderError)) return false;
  const hook = e.code === 'HOOK_REJECTED';
  return (expect['error'] === 'ValueError') === hook && e.message === expect['message'];
}

/**
 * Checks one `session` case, as parsed with the vectors' stand-ins (`{"$float": ...}` and the like)
 * already revived. `hooksFor(options)` makes the protocol's hooks (Community Room's for the reference
 * corpus) for the case's options.
 */
export function checkGroupSession(crypto: Crypto, sessionCase: unknown, hooksFor: (options: Readonly<Obj>) => GroupHooks): SessionCheck {
  const c = obj(sessionCase);
  const failures: string[] = [];
  let checked = 0;
  const eq = (label: string, actual: unknown, expected: unknown) => {
    checked++;
    const a = canon(actual);
    const b = canon(expected);
    if (a !== b) failures.push(`${label}: got ${a.slice(0, 300)} expected ${b.slice(0, 300)}`);
  };

  const groupId = String(c['group_id']);
  const options = obj(c['options']);
  const config = groupConfigFromSpec({ flow: { group: c['spec_group'] } });
  const keys = (c['keys'] as Obj[]).map((k) => ({ seat: k['seat'] as number, seed: String(k['seed']), publicKey: String(k['public_key']) }));
  const seedOf = (pk: string) => keys.find((k) => k.publicKey === pk.toLowerCase())?.seed;
  const initialMembers = c['initial_members'] as Obj[];
  const leaderKey = keys.find((k) => k.seat === 0);
  if (!leaderKey) return { checked, failures: ['case has no seat 0 key'] };

  let leader: GroupLeader | undefined;
  const replicas = new Map<string, GroupReplica>();
  const histories = new Map<string, Obj[]>();
  let bootstrapped = false;
  let probeLeader: GroupLeader | undefined;
  const probeAfter = obj(c['input_probes'])['evaluated_after_step'];

  const newReplica = (pk: string, l: GroupLeader) =>
    new GroupReplica({ crypto, groupId, viewerPublicKey: pk, leaderPublicKey: l.leaderPublicKey, leaderEpoch: l.leaderEpoch });

  const deliver = (step: string, envelopes: Envelopes, expected: Obj, replicaApply: Obj, bootstrapAll: boolean, joiner?: string) => {
    eq(`${step}: viewers`, Object.keys(envelopes).sort(), Object.keys(expected).sort());
    for (const [pk, want] of Object.entries(expected)) eq(`${step}: envelope for ${pk.slice(0, 8)}`, envelopes[pk], want);
    if (!bootstrapped) return;
    for (const [pk, env] of Object.entries(envelopes)) {
      let r = replicas.get(pk);
      const asBootstrap = bootstrapAll || pk === joiner;
      if (!r && leader) replicas.set(pk, (r = newReplica(pk, leader)));
      if (!r) continue;
      const result = r.apply(env, { bootstrap: asBootstrap });
      if (pk in replicaApply) {
        const want = replicaApply[pk];
        eq(`${step}: replica ${pk.slice(0, 8)} applies`, result.status === 'refused' ? `refused: ${result.reason}` : result.status === 'applied', want);
      }
      const h = histories.get(pk) ?? [];
      h.push(env as unknown as Obj);
      histories.set(pk, h);
    }
  };

  for (const step of c['steps'] as Obj[]) {
    const name = String(step['step']);
    const input = step['input'] === null ? null : obj(step['input']);
    const expected = obj(step['envelopes']);
    const replicaApply = obj(step['replica_apply']);
    let envelopes: Envelopes;
    try {
      if (name === 'initial_snapshot_frame' || (!leader && input === null)) {
        leader = GroupLeader.start({
          crypto,
          hooks: hooksFor(options),
          config,
          groupId,
          leaderSeed: leaderKey.seed,
          leaderEpoch: 0,
          membershipVersion: initialMembers.length,
          members: initialMembers,
        });
        envelopes = leader.lastEnvelopes;
        deliver(name, envelopes, expected, replicaApply, false);
      } else if (!leader) {
        failures.push(`${name}: no leader`);
        break;
      } else if (input === null) {
        bootstrapped = true;
        envelopes = leader.bootstrapEnvelopes();
        deliver(name, envelopes, expected, replicaApply, true);
      } else if ('actor_public_key' in input) {
        const { envelopes: out, receipt } = leader.applyInput(input as unknown as GroupInput);
        eq(`${name}: receipt`, receipt, step['receipt']);
        envelopes = out;
        deliver(name, envelopes, expected, replicaApply, false);
      } else if ('member' in input) {
        envelopes = leader.addMember(input['member'], input['membership_version'] as number);
        const joiner = String(obj(input['member'])['public_key']).toLowerCase();
        replicas.delete(joiner);
        deliver(name, envelopes, expected, replicaApply, false, joiner);
      } else if ('public_key' in input && 'reason' in input) {
        const pk = String(input['public_key']).toLowerCase();
        envelopes = leader.removeMember(pk, input['membership_version'] as number, String(input['reason']));
        replicas.delete(pk);
        deliver(name, envelopes, expected, replicaApply, false);
      } else if ('restored_from_checkpoint' in input) {
        eq(`${name}: restored checkpoint is the last one`, leader.checkpoint, input['restored_from_checkpoint']);
        const newPk = String(input['new_leader_public_key']);
        const seed = seedOf(newPk);
        if (!seed) {
          failures.push(`${name}: no key for the new leader`);
          break;
        }
        const epoch = input['leader_epoch'] as number;
        leader = GroupLeader.fromCheckpoint(
          {
            crypto,
            hooks: hooksFor(options),
            config,
            groupId,
            leaderSeed: seed,
            leaderEpoch: epoch,
            membershipVersion: obj(input['restored_from_checkpoint'])['membership_version'] as number,
          },
          input['restored_from_checkpoint'],
        );
        for (const r of replicas.values()) r.advanceEpoch(newPk, epoch);
        envelopes = leader.lastEnvelopes;
        deliver(name, envelopes, expected, replicaApply, false);
      } else {
        failures.push(`${name}: unknown input`);
        continue;
      }
    } catch (e) {
      failures.push(`${name}: ${e instanceof Error ? `${e.name} ${e.message}` : String(e)}`);
      break;
    }
    checkDerived(name, leader, envelopes, obj(step['derived']), eq);
    if (name === probeAfter) probeLeader = leader.fork();
  }

  // The members still in the room end where the reference's ended.
  for (const [pk, want] of Object.entries(obj(obj(c['expect'])['final_replicas']))) {
    const r = replicas.get(pk);
    const w = obj(want);
    eq(`final replica ${pk.slice(0, 8)}`, r ? { seq: r.seq, frame_hash: r.frameHash, view: r.view, checkpoint_hash: r.checkpoint?.checkpoint_hash } : null, {
      seq: w['seq'],
      frame_hash: w['frame_hash'],
      view: w['view'],
      checkpoint_hash: w['checkpoint_hash'],
    });
  }

  // Inputs tried on the authority as it stood after one step: the same receipt or refusal.
  const probes = obj(c['input_probes']);
  for (const p of (probes['items'] as Obj[] | undefined) ?? []) {
    const want = obj(p['expect']);
    const l = probeLeader?.fork();
    if (!l) {
      failures.push(`probe ${String(p['name'])}: step ${String(probeAfter)} never ran`);
      continue;
    }
    checked++;
    try {
      const { receipt } = l.applyInput(p['input'] as unknown as GroupInput);
      if (want['ok'] !== true) failures.push(`probe ${String(p['name'])}: accepted, expected ${String(want['error'])}: ${String(want['message'])}`);
      else eq(`probe ${String(p['name'])}`, receipt, want['receipt']);
    } catch (e) {
      if (want['ok'] === true || !sameLeaderError(e, want)) {
        failures.push(
          `probe ${String(p['name'])}: ${e instanceof Error ? `${e.name}(${(e as GroupLeaderError).code}) ${e.message}` : String(e)}, expected ${JSON.stringify(want)}`,
        );
      }
    }
  }

  // A replica fed the viewer's first envelopes, then one more (valid, repeated or tampered).
  const rc = obj(c['replica_checks']);
  const viewer = String(rc['viewer_public_key']);
  const history = histories.get(viewer) ?? [];
  for (const item of (rc['items'] as Obj[] | undefined) ?? []) {
    const r = new GroupReplica({
      crypto,
      groupId,
      viewerPublicKey: viewer,
      leaderPublicKey: String(rc['leader_public_key']),
      leaderEpoch: rc['leader_epoch'] as number,
    });
    const n = item['history_frames'] as number;
    let setupOk = true;
    history.slice(0, n).forEach((env, i) => {
      if (r.apply(env, { bootstrap: i === 0 }).status !== 'applied') setupOk = false;
    });
    if (!setupOk || history.length < n) {
      failures.push(`replica check ${String(item['name'])}: history did not apply`);
      continue;
    }
    const result = r.apply(item['envelope'], { bootstrap: item['bootstrap'] === true });
    const want = obj(item['expect']);
    const got =
      result.status === 'refused'
        ? {
            ok: false,
            error: result.code === 'SIGNATURE_INVALID' ? 'InvalidSignature' : 'GroupProtocolError',
            message: result.code === 'SIGNATURE_INVALID' ? '' : result.reason,
          }
        : { ok: true, applied: result.status === 'applied' };
    eq(`replica check ${String(item['name'])}`, got, want);
  }
  return { checked, failures };
}

function checkDerived(step: string, leader: GroupLeader, envelopes: Envelopes, derived: Obj, eq: (l: string, a: unknown, b: unknown) => void): void {
  if (Object.keys(derived).length === 0) return;
  const any = Object.values(envelopes)[0] as Obj | undefined;
  if (!any) return;
  const core: Obj = {};
  for (const k of [
    '_group',
    'wire_version',
    'group_id',
    'leader_public_key',
    'leader_epoch',
    'seq',
    'previous_hash',
    'membership_version',
    'authority_state_hash',
    'recovery_state_hash',
    'events_hash',
    'completed',
    'outcome',
  ])
    core[k] = any[k];
  if ('core_canonical' in derived) eq(`${step}: core canonical`, canon(core), derived['core_canonical']);
  if ('frame_hash' in derived) eq(`${step}: frame hash`, leader.frameHash, derived['frame_hash']);
  const cp = leader.checkpoint as unknown as Obj;
  if ('checkpoint' in derived) eq(`${step}: checkpoint`, cp, derived['checkpoint']);
  if ('checkpoint_unsigned_canonical' in derived)
    eq(`${step}: unsigned checkpoint canonical`, canon(stripCheckpoint(cp)), derived['checkpoint_unsigned_canonical']);
  if ('checkpoint_certificate' in derived) eq(`${step}: checkpoint certificate`, checkpointCertificate(cp), derived['checkpoint_certificate']);
  for (const [pk, v] of Object.entries(obj(derived['views']))) {
    const w = obj(v);
    const env = envelopes[pk] as Obj | undefined;
    if (!env) {
      eq(`${step}: view for ${pk.slice(0, 8)}`, null, 'an envelope');
      continue;
    }
    if ('view_hash' in w) eq(`${step}: view hash ${pk.slice(0, 8)}`, env['view_hash'], w['view_hash']);
    if ('private_payload_canonical' in w) eq(`${step}: private payload ${pk.slice(0, 8)}`, canon(privatePayloadOf(env)), w['private_payload_canonical']);
    if ('signature_payload_canonical' in w) {
      eq(
        `${step}: signature payload ${pk.slice(0, 8)}`,
        fromUtf8(signaturePayload(String(env['frame_hash']), String(env['view_hash']), pk)),
        w['signature_payload_canonical'],
      );
    }
  }
}
