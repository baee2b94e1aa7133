// Every seat of a group protocol in one process (ts/group/local.ts), each member's session directory
// (ts/group/session-dir.ts) rechecked offline, with tampered evidence; a staged leader failover under
// the serverless successor rule and the in-process arbiter; an equivocating leader caught with a proof
// that `aigenora proof verify` accepts; and `receipt verify` / `proof verify` from the CLI.
import { mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { toHex } from '../../ts/crypto/encoding.js';
import type { GroupAutoplay, GroupHooks, HooksModule } from '../../ts/hooks/types.js';
import { LocalArbiter, serverlessSuccessor } from '../../ts/group/arbiter.js';
import { GroupLeader, groupConfigFromSpec } from '../../ts/group/leader.js';
import { runGroupLocal, GroupRunError } from '../../ts/group/local.js';
import { GroupReplica } from '../../ts/group/member.js';
import { groupProofOf, verifyGroupProof } from '../../ts/group/proof.js';
import { verifyGroupSession, verifyGroupSessionAt } from '../../ts/group/session-dir.js';
import landlord, { legalActions, type LandlordView } from '../../ts/protocols/landlord/hooks.js';
import meetingRoom from '../../ts/protocols/meeting-room/hooks.js';
import { loadSpec } from '../../ts/spec/index.js';
import { tempDir } from '../shared/tmp.js';

import { cli as runCli } from '../shared/cli.js';
const DIR = new URL('../../ts/protocols/landlord', import.meta.url).pathname;
const cli = async (args: string[]) => {
  const r = await runCli(args);
  return { code: r.status, out: r.stdout, err: r.stderr };
};

// Landlord played from each member's own view: the test's own player, so this file does not depend on
// the module's autoplay choices.
const play: GroupAutoplay = (view, me, random) => {
  const v = view as LandlordView;
  if (v.current_player !== me.public_key || v.phase === 'completed') return null;
  const choices = legalActions(v);
  return choices.length ? (choices[Math.floor(random() * choices.length)] as Record<string, unknown>) : null;
};
const hooks: HooksModule = { ...landlord, autoplay: play };

// One whole game per backend (each takes seconds): the plain game on WASM, the failover on pure JS.
const setup = (backend: 'wasm' | 'js') => {
  const c = getCrypto(backend);
  const l = loadSpec(c, DIR);
  return { c, base: { crypto: c, spec: l.spec, specText: l.text, protocolId: l.protocolId!, hooks } };
};

describe('group sessions in one process', () => {
  {
    const { c, base } = setup('wasm');
    it('(wasm) plays Landlord to completion; every seat writes a session dir that verifies, and all end on one frame', async () => {
      const out = tempDir('group-run');
      const r = await runGroupLocal({ ...base, seed: 2, outDir: out });
      expect(r.reason).toBeUndefined();
      expect(r.completed).toBe(true);
      expect(['landlord', 'farmers']).toContain(r.outcome);
      expect(r.members.map((m) => m.seat)).toEqual([0, 1, 2, 3]);
      expect(
        readdirSync(out)
          .filter((d) => d.startsWith('seat-'))
          .sort(),
      ).toEqual(['seat-0', 'seat-1', 'seat-2', 'seat-3']);
      const heads = new Set(r.members.map((m) => m.receipt.frame_hash));
      expect(heads.size).toBe(1);
      for (const m of r.members) {
        const v = verifyGroupSessionAt(c, m.dir);
        expect(v, m.dir).toMatchObject({ ok: true, receipt: true, completed: true, outcome: r.outcome, member_public_key: m.public_key });
        expect(readFileSync(join(m.dir, 'transcript.jsonl'), 'utf8')).not.toContain('private_key');
      }
      // The deal: each member's first view holds its own hand and none of another member's cards.
      const first = r.members.map((m) => JSON.stringify(JSON.parse(readFileSync(join(m.dir, 'transcript.jsonl'), 'utf8').split('\n')[1]!).envelope.view));
      const hands = first.map((v) => (JSON.parse(v).my_hand as { card_id: string }[]).map((x) => x.card_id));
      expect(hands.map((h) => h.length)).toEqual([25, 25, 25, 25]);
      first.forEach((text, i) => {
        hands.forEach((h, j) => {
          if (j !== i) for (const id of h) expect(text.includes(id)).toBe(false);
        });
      });
    }, 120_000);
  }
  {
    const { c, base } = setup('js');
    it('(js) a staged leader failure: the members name one successor, the arbiter grants epoch 1, the game completes and verifies', async () => {
      const out = tempDir('group-failover');
      const r = await runGroupLocal({ ...base, seed: 5, outDir: out, failoverAfter: 6 });
      expect(r.reason).toBeUndefined();
      expect([r.completed, r.epochs]).toEqual([true, 2]);
      for (const m of r.members) {
        expect(m.receipt.leader_epoch).toBe(1);
        expect(m.receipt.leader_public_key).toBe(r.members[1]!.public_key);
        expect(verifyGroupSessionAt(c, m.dir)).toMatchObject({ ok: true, receipt: true, completed: true });
        const lines = readFileSync(join(m.dir, 'transcript.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((x) => JSON.parse(x));
        expect(lines.filter((e) => e.kind === 'epoch')).toEqual([{ kind: 'epoch', leader_public_key: r.members[1]!.public_key, leader_epoch: 1 }]);
      }
    }, 120_000);
  }
});

describe('tampered group evidence is refused', () => {
  const c = getCrypto('wasm');
  const l = loadSpec(c, DIR);
  let dir = '';
  const files = () => ({
    t: readFileSync(join(dir, 'transcript.jsonl'), 'utf8'),
    s: readFileSync(join(dir, 'spec.json'), 'utf8'),
    r: readFileSync(join(dir, 'receipt.json'), 'utf8'),
  });

  it('setup: one verified session', async () => {
    const r = await runGroupLocal({ crypto: c, spec: l.spec, specText: l.text, protocolId: l.protocolId!, hooks, seed: 9, outDir: tempDir('group-tamper') });
    dir = r.members[2]!.dir;
    const f = files();
    expect(verifyGroupSession(c, f.t, f.s, f.r)).toMatchObject({ ok: true, receipt: true });
  }, 120_000);

  it('an envelope changed in the transcript', async () => {
    const f = files();
    const lines = f.t.split('\n');
    const e = JSON.parse(lines[5]!);
    e.envelope.seq = e.envelope.seq + 1;
    lines[5] = JSON.stringify(e);
    const v = verifyGroupSession(c, lines.join('\n'), f.s, f.r);
    expect(v.ok).toBe(false);
    expect(v.reason).toMatch(/^transcript entry 5: /);
  });

  it('a view edited to show another hand (the view hash no longer matches)', async () => {
    const f = files();
    const lines = f.t.split('\n');
    const e = JSON.parse(lines[1]!);
    e.envelope.view.hand_counts = {};
    lines[1] = JSON.stringify(e);
    expect(verifyGroupSession(c, lines.join('\n'), f.s, f.r)).toMatchObject({ ok: false });
  });

  it('a transcript cut short no longer matches its receipt', async () => {
    const f = files();
    const lines = f.t.trim().split('\n');
    const v = verifyGroupSession(c, `${lines.slice(0, -3).join('\n')}\n`, f.s, f.r);
    expect(v.ok).toBe(false);
    expect(v.reason).toMatch(/^receipt\.json: /);
  });

  it('a receipt with another outcome, another member, or a signature by someone else', async () => {
    const f = files();
    const receipt = JSON.parse(f.r);
    const edited = (patch: Record<string, unknown>) => verifyGroupSession(c, f.t, f.s, JSON.stringify({ ...receipt, ...patch }));
    expect(edited({ outcome: receipt.outcome === 'farmers' ? 'landlord' : 'farmers' }).reason).toMatch(/outcome is/);
    expect(edited({ completed: false }).ok).toBe(false);
    expect(edited({ signature: toHex(c.ed25519Sign(new Uint8Array(32).fill(7), new Uint8Array(1))) + '' }).reason).toMatch(/not the member's/);
    expect(edited({ extra: 1 }).reason).toMatch(/fields/);
    expect(verifyGroupSession(c, f.t, f.s, '{"kind":')).toMatchObject({ ok: false, reason: 'receipt.json: not strict JSON' });
  });

  it("another protocol's spec, or a two-party spec", async () => {
    const f = files();
    const holdem = readFileSync(new URL('../../ts/protocols/texas-holdem/spec.json', import.meta.url), 'utf8');
    expect(verifyGroupSession(c, f.t, holdem, f.r).reason).toMatch(/^spec\.json hashes to /);
    const rps = readFileSync(new URL('../../ts/protocols/rps/spec.json', import.meta.url), 'utf8');
    const rpsId = loadSpec(c, new URL('../../ts/protocols/rps', import.meta.url).pathname).protocolId!;
    const relabelled = f.t.replace(l.protocolId!, rpsId);
    expect(verifyGroupSession(c, relabelled, rps, null).reason).toBe('spec.json is a simultaneous_round protocol, not authoritative_group');
  });

  it('a leader change to a key that is not a member', async () => {
    const f = files();
    const lines = f.t.trim().split('\n');
    lines.splice(4, 0, JSON.stringify({ kind: 'epoch', leader_public_key: 'ab'.repeat(32), leader_epoch: 1 }));
    expect(verifyGroupSession(c, lines.join('\n'), f.s, null)).toMatchObject({
      ok: false,
      reason: 'transcript entry 4: new leader is not an active group member',
    });
  });

  it('files that are empty, not UTF-8, directories or symlinks get one-line reasons', async () => {
    const bad = tempDir('group-bad');
    mkdirSync(join(bad, 'empty'));
    writeFileSync(join(bad, 'empty', 'transcript.jsonl'), '');
    writeFileSync(join(bad, 'empty', 'spec.json'), readFileSync(join(dir, 'spec.json')));
    expect(verifyGroupSessionAt(c, join(bad, 'empty')).ok).toBe(false);
    mkdirSync(join(bad, 'binary'));
    writeFileSync(join(bad, 'binary', 'transcript.jsonl'), Buffer.from([0xff, 0xfe, 0x00, 0x0a]));
    const b = verifyGroupSessionAt(c, join(bad, 'binary'));
    expect(b.ok).toBe(false);
    expect(b.reason).not.toContain('\n');
    mkdirSync(join(bad, 'dir', 'transcript.jsonl'), { recursive: true });
    expect(verifyGroupSessionAt(c, join(bad, 'dir')).ok).toBe(false);
    mkdirSync(join(bad, 'link'));
    symlinkSync(join(dir, 'transcript.jsonl'), join(bad, 'link', 'transcript.jsonl'));
    expect(verifyGroupSessionAt(c, join(bad, 'link')).ok).toBe(false);
  });

  it('receipt verify from the CLI: exit 0 for the real session, 1 for a tampered receipt', async () => {
    const ok = await cli(['receipt', 'verify', dir]);
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toMatch(
      /^verified: \d+ entries of group grp-[0-9a-f]{16} as seen by member [0-9a-f]{16}…, completed \((landlord|farmers)\), receipt signed by the member/,
    );
    const copy = tempDir('group-cli');
    for (const f of ['transcript.jsonl', 'spec.json']) writeFileSync(join(copy, f), readFileSync(join(dir, f)));
    const receipt = JSON.parse(readFileSync(join(dir, 'receipt.json'), 'utf8'));
    writeFileSync(join(copy, 'receipt.json'), JSON.stringify({ ...receipt, seq: receipt.seq - 1 }));
    const bad = await cli(['receipt', 'verify', copy, '--json']);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out)).toMatchObject({ ok: false, receipt: false });
  });
});

describe('an equivocating leader is caught with a portable proof', () => {
  const c = getCrypto('js');
  const spec = JSON.parse(readFileSync(new URL('../../ts/protocols/meeting-room/spec.json', import.meta.url), 'utf8')) as unknown;
  const config = groupConfigFromSpec(spec);
  const seeds = [1, 2, 3].map((i) => toHex(new Uint8Array(32).fill(i)));
  const pks = seeds.map((s) => toHex(c.ed25519PublicKey(Buffer.from(s, 'hex'))));
  const members = pks.map((public_key, seat) => ({ member_id: `m${seat}`, public_key, seat, status: 'active' }));
  const ctx = { role: 'host' as const, options: {}, args: [], stateDir: '', decision: null, random: () => 0.5 };

  it('two different frames for one seq make an equivocation proof; the CLI proves it and refuses a tampered one', async () => {
    const leader = GroupLeader.start({
      crypto: c,
      hooks: meetingRoom.create(ctx) as GroupHooks,
      config,
      groupId: 'grp-equivocate',
      leaderSeed: seeds[0]!,
      leaderEpoch: 0,
      membershipVersion: 3,
      members,
    });
    const replica = new GroupReplica({
      crypto: c,
      groupId: 'grp-equivocate',
      viewerPublicKey: pks[1]!,
      leaderPublicKey: leader.leaderPublicKey,
      leaderEpoch: 0,
    });
    expect(replica.apply(leader.bootstrapEnvelope(pks[1]!), { bootstrap: true }).status).toBe('applied');
    const twin = leader.fork();
    const a = leader.applyInput({ actor_public_key: pks[1]!, client_seq: 1, action: { kind: 'add_agenda', text: 'hello' } }).envelopes[pks[1]!]!;
    const b = twin.applyInput({ actor_public_key: pks[2]!, client_seq: 1, action: { kind: 'add_agenda', text: 'something else' } }).envelopes[pks[1]!]!;
    expect(replica.apply(a)).toEqual({ status: 'applied' });
    expect(replica.apply(b).status).toBe('refused');
    const proof = groupProofOf(c, a as unknown as Record<string, unknown>, b as unknown as Record<string, unknown>)!;
    expect(proof.fault).toBe('equivocation');
    expect(JSON.stringify(proof)).not.toContain('"view":');
    expect(verifyGroupProof(c, proof)).toEqual({ ok: true, fault: 'equivocation' });
    const dir = tempDir('group-proof');
    writeFileSync(join(dir, 'proof.json'), JSON.stringify(proof));
    const ok = await cli(['proof', 'verify', join(dir, 'proof.json')]);
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toMatch(/^proven \(aigenora-group-proof-v1, equivocation, leader [0-9a-f]{16}…\)/);
    // Blame moved to another key: the signatures no longer verify.
    writeFileSync(
      join(dir, 'proof.json'),
      JSON.stringify({ ...proof, leader_public_key: pks[2], frames: proof.frames.map((f) => ({ ...f, leader_public_key: pks[2] })) }),
    );
    const bad = await cli(['proof', 'verify', join(dir, 'proof.json')]);
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/^not proven \(aigenora-group-proof-v1\): /);
  });
});

describe('who leads after a failure', () => {
  const m = (seat: number, status = 'active') => ({ member_id: `m${seat}`, public_key: String(seat).repeat(64).slice(0, 64), seat, status });

  it('the serverless rule names the next active seat after the failed leader, wrapping around', async () => {
    const ms = [m(0), m(1, 'left'), m(2), m(5)];
    expect(serverlessSuccessor(ms, ms[0]!.public_key)?.seat).toBe(2);
    expect(serverlessSuccessor(ms, ms[2]!.public_key)?.seat).toBe(5);
    expect(serverlessSuccessor(ms, ms[3]!.public_key)?.seat).toBe(0);
    expect(serverlessSuccessor([m(0)], m(0).public_key)).toBeUndefined();
  });

  it('the arbiter grants the first claim of the next epoch only, and repeats its grant to the winner', async () => {
    const a = new LocalArbiter();
    a.open('g', 'leader0');
    expect(a.claim({ groupId: 'g', epoch: 2, claimant: 'x', checkpointHash: 'h' })).toMatchObject({ granted: false, epoch: 0, leader: 'leader0' });
    expect(a.claim({ groupId: 'g', epoch: 1, claimant: 'x', checkpointHash: 'h' })).toEqual({ granted: true, epoch: 1, leader: 'x' });
    expect(a.claim({ groupId: 'g', epoch: 1, claimant: 'y', checkpointHash: 'h' })).toMatchObject({ granted: false, leader: 'x' });
    expect(a.claim({ groupId: 'g', epoch: 1, claimant: 'x', checkpointHash: 'h' })).toMatchObject({ granted: true });
    expect(a.claim({ groupId: 'other', epoch: 1, claimant: 'x', checkpointHash: 'h' })).toMatchObject({ granted: false, reason: 'unknown group' });
  });

  it('a group run refuses hooks without an autoplay and a seat count outside the spec', async () => {
    const c = getCrypto('js');
    const l = loadSpec(c, DIR);
    const args = { crypto: c, spec: l.spec, specText: l.text, protocolId: l.protocolId!, outDir: tempDir('group-refuse') };
    await expect(runGroupLocal({ ...args, hooks: { mode: landlord.mode, create: landlord.create } })).rejects.toThrow(GroupRunError);
    await expect(runGroupLocal({ ...args, hooks, members: 5 })).rejects.toThrow(/takes 4–4 members, not 5/);
  });
});

describe('protocol test of a group protocol from the CLI', () => {
  it('--members and --failover-after: five seats, two leader epochs, every seat verified; a seat count outside the spec is refused', async () => {
    const out = tempDir('group-cli-failover');
    const r = await cli([
      'protocol',
      'test',
      new URL('../../ts/protocols/meeting-room', import.meta.url).pathname,
      '--members',
      '5',
      '--failover-after',
      '4',
      '--json',
      '--out',
      out,
    ]);
    expect(r.code, r.out + r.err).toBe(0);
    const j = JSON.parse(r.out) as { ok: boolean; epochs: number; members: { seat: number; verify: { ok: boolean; receipt: boolean } }[] };
    expect([j.ok, j.epochs, j.members.length]).toEqual([true, 2, 5]);
    for (const m of j.members) expect([m.verify.ok, m.verify.receipt]).toEqual([true, true]);
    const many = await cli(['protocol', 'test', new URL('../../ts/protocols/meeting-room', import.meta.url).pathname, '--members', '40']);
    expect([many.code, many.out, many.err]).toEqual([1, '', 'aigenora protocol test: GROUP_SEATS: the spec takes 2–16 members, not 40\n']);
    expect((await cli(['protocol', 'test', new URL('../../ts/protocols/meeting-room', import.meta.url).pathname, '--members', 'x'])).code).toBe(2);
  }, 60_000);
});
