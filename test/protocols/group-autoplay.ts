// Plays a whole group session with every member acting only through the protocol's autoplay, as an
// unattended seat does: the real group leader, one verifying replica per member, round-robin turns, and
// each member deciding from the view its own replica verified. Every envelope must apply at every
// replica and every action the autoplay picks must be accepted.
import { expect } from 'vitest';
import type { Crypto } from '../../ts/crypto/backend.js';
import { seeded } from '../../ts/engine/local.js';
import { groupConfigFromSpec, type GroupLeader } from '../../ts/group/leader.js';
import type { GroupReplica } from '../../ts/group/member.js';
import type { GroupHooks, HooksModule } from '../../ts/hooks/types.js';
import { hostContext } from './group-fixtures.js';
import { derivedSeats, startTable } from './group-table.js';

export interface AutoplayRun {
  crypto: Crypto;
  module: HooksModule;
  spec: unknown;
  options: Record<string, unknown>;
  seats: number;
  seed: number;
  /** Actions the session may take before it counts as not completing. */
  maxActions: number;
}

export interface AutoplayResult {
  leader: GroupLeader;
  replicas: GroupReplica[];
  actions: Record<string, unknown>[];
}

export function playByAutoplay(r: AutoplayRun): AutoplayResult {
  const autoplay = r.module.autoplay;
  if (!autoplay) throw new Error('the hooks module has no autoplay');
  const seats = derivedSeats(r.crypto, `autoplay ${r.seed}`, r.seats, 'm-');
  const { members } = seats;
  const hooks = r.module.create(hostContext(r.options, r.seed)) as GroupHooks;
  const { leader, replicas, deliver } = startTable({ crypto: r.crypto, seats, config: groupConfigFromSpec(r.spec), groupId: `grp-autoplay-${r.seed}`, hooks });
  // Each member draws from its own random source, as separate processes would.
  const randoms = members.map((_, i) => seeded(r.seed * 1000 + i + 1));
  const seqs = members.map(() => 0);
  const actions: Record<string, unknown>[] = [];
  let idle = 0;
  for (let turn = 0; !leader.completed; turn++) {
    if (actions.length >= r.maxActions) throw new Error(`seed ${r.seed}: no completion after ${r.maxActions} actions`);
    const i = turn % r.seats;
    const action = autoplay(replicas[i]!.view!, members[i]!, randoms[i]!);
    if (action === null) {
      if (++idle > r.seats) throw new Error(`seed ${r.seed}: no member has anything to do and the session has not completed`);
      continue;
    }
    idle = 0;
    const { envelopes, receipt } = leader.applyInput({ actor_public_key: members[i]!.public_key, client_seq: ++seqs[i]!, action });
    if (receipt.status !== 'accepted') expect(receipt.status, `seed ${r.seed}: seat ${i} ${JSON.stringify(action)}`).toBe('accepted');
    actions.push(action);
    deliver(envelopes);
  }
  for (const rep of replicas) expect([rep.seq, rep.frameHash]).toEqual([leader.seq, leader.frameHash]);
  return { leader, replicas, actions };
}
