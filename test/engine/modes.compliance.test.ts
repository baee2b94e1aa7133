// One suite run against every flow mode the engine runs, on a virtual clock (ts/engine/virtual.ts): a
// whole session of a built-in of that mode completes and both transcripts verify offline; a frame
// replayed, tampered, dropped or cut off ends the session with a typed reason on the side that saw it,
// and never as a success. The N-party group mode gets the same on its own virtual clock
// (ts/net/group-virtual.ts: the network host, members and hub over in-memory channels and an in-memory
// registry), plus a leader failover. Modes are found through the registry, so a mode added there
// without a built-in here fails the first test.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MODES } from '../../ts/engine/modes/index.js';
import { runVirtual, type VirtualRun } from '../../ts/engine/virtual.js';
import { verifyTranscriptAt } from '../../ts/engine/verify.js';
import type { EndReason } from '../../ts/engine/mode.js';
import type { FlowMode } from '../../ts/spec/types.js';
import { tempDir } from '../shared/tmp.js';
import { BUILTINS } from '../../ts/protocols/index.js';
import { builtin, c, hooksOf } from './harness.js';
import { verifyGroupSessionAt, type GroupReceipt } from '../../ts/group/session-dir.js';
import type { ReplicaRefusal } from '../../ts/group/member.js';
import { runGroupVirtual, type EnvelopeFault, type GroupVirtualResult } from '../../ts/net/group-virtual.js';

/** A built-in of each mode the engine runs, with the options that keep it short. */
const CASES: Partial<Record<FlowMode, { folder: string; options?: Record<string, unknown> }>> = {
  session_loop: { folder: 'guess-number' },
  request_response: { folder: 'qna' },
  free: { folder: 'human-chat' },
  simultaneous_round: { folder: 'rps', options: { best_of: 3 } },
  mental_poker: { folder: 'crazy-eights' },
  authoritative_realtime: { folder: 'tank-battle', options: BUILTINS.find((b) => b.folder === 'tank-battle')!.profiles['short']!.options },
};
/** Modes that are not two-party sessions (the registry refuses them with a typed reason): a built-in of each for the group engine. */
const GROUP_CASES: Partial<Record<FlowMode, { folder: string; members: number; options: Record<string, unknown> }>> = {
  authoritative_group: { folder: 'texas-holdem', members: 4, options: { max_hands: 2, deal_seed: 'compliance' } },
};
const GROUP_MODES = Object.keys(GROUP_CASES) as FlowMode[];

const TYPED: EndReason[] = [
  'peer_aborted',
  'peer_disconnected',
  'peer_timeout',
  'malformed_json',
  'bad_envelope',
  'bad_sequence',
  'bad_chain',
  'bad_ack',
  'bad_signature',
  'receipt_mismatch',
  'unexpected_message',
];

async function run(mode: FlowMode, extra: Partial<VirtualRun> = {}) {
  const k = CASES[mode]!;
  const b = builtin(k.folder);
  const hooks = await hooksOf(k.folder);
  return runVirtual({
    crypto: c,
    spec: b.spec,
    specText: b.specText,
    protocolId: b.protocolId,
    hooks,
    options: k.options ?? {},
    outDir: tempDir(`compliance-${mode}`),
    chat: { host: ['hi', 'there'], guest: ['hello'] },
    ...extra,
  });
}

const done = (mode: FlowMode) => (mode === 'request_response' ? 'request_response_complete' : 'completed');

describe('every flow mode behind one interface', () => {
  it('the registry has a definition for every mode, and this suite a case for each it runs', () => {
    for (const mode of Object.keys(MODES) as FlowMode[]) expect(CASES[mode] !== undefined || GROUP_CASES[mode] !== undefined, mode).toBe(true);
  });

  const modes = Object.keys(CASES) as FlowMode[];

  it.each(modes)('%s: a whole session completes and both transcripts verify offline', async (mode) => {
    const r = await run(mode);
    expect([r.host.reason, r.guest.reason], `${r.host.detail ?? ''} ${r.guest.detail ?? ''}`).toEqual([done(mode), done(mode)]);
    for (const side of [r.host, r.guest]) expect(verifyTranscriptAt(c, side.dir)).toMatchObject({ ok: true, receipt: true });
  });

  // mental_poker draws its RSA keys from WebCrypto, so its sessions do not repeat.
  it.each(modes.filter((m) => m !== 'mental_poker'))('%s: the same seed gives the same session, byte for byte', async (mode) => {
    const a = await run(mode, { seed: 9 });
    const b = await run(mode, { seed: 9 });
    expect(readFileSync(join(b.host.dir, 'transcript.jsonl'), 'utf8')).toBe(readFileSync(join(a.host.dir, 'transcript.jsonl'), 'utf8'));
  });

  it.each(modes)('%s: a replayed frame is refused', async (mode) => {
    const r = await run(mode, { fault: (from, line, n) => (from === 'guest' && n === 1 ? [line, line] : [line]) });
    expect(r.host.completed).toBe(false);
    expect(r.host.reason).toBe('bad_sequence');
    expect(TYPED).toContain(r.guest.reason);
  });

  it.each(modes)('%s: a tampered signature is refused as bad_signature', async (mode) => {
    const flip = (line: string) => line.replace(/"sig":"(.)/, (_m, ch: string) => `"sig":"${ch === 'a' ? 'b' : 'a'}`);
    const r = await run(mode, { fault: (from, line, n) => (from === 'host' && n === 1 ? [flip(line)] : [line]) });
    expect(r.guest).toMatchObject({ completed: false, reason: 'bad_signature' });
    expect(r.host.completed).toBe(false);
    expect(TYPED).toContain(r.host.reason);
  });

  it.each(modes)('%s: a truncated line is malformed_json, a dropped one never completes', async (mode) => {
    const cut = await run(mode, { fault: (from, line, n) => (from === 'guest' && n === 1 ? [line.slice(0, -2)] : [line]) });
    expect(cut.host).toMatchObject({ completed: false, reason: 'malformed_json' });
    const dropped = await run(mode, { fault: (from, line, n) => (from === 'host' && n === 1 ? [] : [line]) });
    expect(dropped.host.completed && dropped.guest.completed).toBe(false);
    for (const side of [dropped.host, dropped.guest]) if (!side.completed) expect([...TYPED, 'bad_ack']).toContain(side.reason);
  });

  it.each(modes)('%s: a link cut mid-session ends both sides as a disconnect, each transcript still verifying up to the cut', async (mode) => {
    const r = await run(mode, { fault: (_from, line, n) => (n === 2 ? 'disconnect' : [line]) });
    for (const side of [r.host, r.guest]) {
      expect(side.completed).toBe(false);
      expect(['peer_disconnected', 'peer_timeout']).toContain(side.reason);
      expect(verifyTranscriptAt(c, side.dir)).toMatchObject({ ok: true, receipt: false });
    }
  });

  it('mode code does no I/O of its own: no node:* import, no Date, no timers, no OS randomness', () => {
    const root = new URL('../../ts/', import.meta.url).pathname;
    const files = [
      ...readdirSync(join(root, 'engine/modes')).map((f) => `engine/modes/${f}`),
      'engine/core.ts',
      'engine/mode.ts',
      'engine/flow.ts',
      ...readdirSync(join(root, 'realtime'))
        .filter((f) => f !== 'ruleset-dir.ts')
        .map((f) => `realtime/${f}`),
      ...readdirSync(join(root, 'mp'))
        .filter((f) => f.startsWith('mode'))
        .map((f) => `mp/${f}`),
      'group/json.ts',
      'group/delta.ts',
      'group/wire.ts',
      'group/errors.ts',
      'group/leader.ts',
      'group/member.ts',
      'group/admission.ts',
      'group/proof.ts',
      'group/arbiter.ts',
      'group/action-message.ts',
    ];
    expect(files.length).toBeGreaterThan(15);
    for (const f of files) {
      // Comments may name what the code avoids.
      const code = readFileSync(join(root, f), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/\/\/.*$/gm, '');
      for (const banned of [/from 'node:/, /\bDate\b/, /setTimeout|setInterval|setImmediate/, /getRandomValues|randomBytes\(|Math\.random|performance\.now/])
        expect(banned.test(code.replace(/ctx\.randomBytes\(|randomBytes\(n: number\)|randomBytes\(n\)/g, '')), `${f}: ${banned}`).toBe(false);
    }
  });

  it.each(GROUP_MODES)('%s: a two-party session of a group mode ends at start with a typed reason', async (mode) => {
    const b = builtin('rps');
    const spec = { ...b.spec, flow: { ...b.spec.flow, mode } };
    const r = await runVirtual({
      crypto: c,
      spec,
      specText: b.specText,
      protocolId: b.protocolId,
      hooks: await hooksOf('rps'),
      outDir: tempDir('compliance-not-yet'),
    });
    expect(r.host).toMatchObject({ completed: false, reason: 'hook_error' });
    expect(r.host.detail).toContain('is not a two-party session; it runs on the group engine');
  });
});

async function runGroup(mode: FlowMode, extra: { fault?: EnvelopeFault; leaderDiesAfter?: number } = {}): Promise<GroupVirtualResult> {
  const k = GROUP_CASES[mode]!;
  const b = builtin(k.folder);
  const protocol = { spec: b.spec, specText: b.specText, protocolId: b.protocolId, hooks: await hooksOf(k.folder) };
  return runGroupVirtual({ crypto: c, protocol, options: k.options, members: k.members, outDir: tempDir(`compliance-${mode}`), ...extra });
}

const receiptOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'receipt.json'), 'utf8')) as GroupReceipt;

/** Every listed seat completed on one final frame: one outcome, seq and checkpoint, each directory verifying offline. */
function sameEnd(r: GroupVirtualResult, indices: number[]): void {
  for (const i of indices) {
    const s = r.seats[i]!;
    expect(s.error, `seat ${i}`).toBeUndefined();
    expect(s.result, `seat ${i}`).toMatchObject({ completed: true });
    expect(verifyGroupSessionAt(c, s.result!.dir), s.result!.dir).toMatchObject({ ok: true, receipt: true, completed: true });
  }
  const ends = indices.map((i) => {
    const rc = receiptOf(r.seats[i]!.result!.dir);
    return JSON.stringify([rc.outcome, rc.seq, rc.frame_hash, rc.checkpoint_hash, rc.leader_epoch]);
  });
  expect(new Set(ends).size, ends.join('\n')).toBe(1);
}

/** Member 2's envelope of index `at` (0-based), rewritten. */
function onMember2(at: number, rewrite: (line: string, previous: string) => string[] | 'disconnect'): EnvelopeFault {
  let previous = '';
  return (seat, line, n) => {
    if (seat !== 2) return [line];
    const out = n === at ? rewrite(line, previous) : [line];
    previous = line;
    return out;
  };
}

describe('the group mode behind the same suite, on its virtual clock', () => {
  it.each(GROUP_MODES)('%s: a whole session completes and every member directory verifies offline', async (mode) => {
    const real = Date.now();
    const r = await runGroup(mode);
    sameEnd(r, [0, 1, 2, 3]);
    expect(r.seats.map((s) => s.result!.role)).toEqual(['leader', 'member', 'member', 'member']);
    expect(r.group).toMatchObject({ status: 'closed', leader_epoch: 0 });
    expect(Date.now() - real).toBeLessThan(20_000);
  });

  const refused: [string, (line: string, previous: string) => string[], ReplicaRefusal][] = [
    // A frame repeated at once is the same frame (the wire tolerates it); one replayed after a newer one is not.
    ['a replayed frame', (line, prev) => [line, prev], 'SEQ_BACKWARDS'],
    ['a tampered signature', (line) => [line.replace(/"signature":"(.)/, (_m, ch: string) => `"signature":"${ch === 'a' ? 'b' : 'a'}`)], 'SIGNATURE_INVALID'],
    // A cut line is no message on the reference wire: the next envelope shows the hole.
    ['a truncated frame', (line) => [line.slice(0, -2)], 'SEQ_GAP'],
    ['a dropped frame', () => [], 'SEQ_GAP'],
  ];
  it.each(GROUP_MODES.flatMap((m) => refused.map(([what, rewrite, code]) => [m, what, rewrite, code] as const)))(
    '%s: %s ends with a typed reason on the member that saw it, never as a success; the others complete',
    async (mode, _what, rewrite, code) => {
      const r = await runGroup(mode, { fault: onMember2(4, rewrite) });
      const victim = r.seats[2]!;
      expect(victim.result).toMatchObject({ completed: false, fault: code });
      expect(victim.result!.reason).toContain(`the leader's envelope was refused: ${code}`);
      // Its directory holds what it accepted: it verifies offline, as not completed.
      expect(verifyGroupSessionAt(c, victim.result!.dir)).toMatchObject({ ok: true, receipt: true, completed: false });
      sameEnd(r, [0, 1, 3]);
    },
  );

  it.each(GROUP_MODES)('%s: a channel cut mid-session is a lost leader: the member asks the registry, rejoins the same epoch and completes', async (mode) => {
    const r = await runGroup(mode, { fault: onMember2(4, () => 'disconnect') });
    sameEnd(r, [0, 1, 2, 3]);
    expect(r.seats[2]!.result).toMatchObject({ epochs: 1, role: 'member' });
  });

  it.each(GROUP_MODES)(
    '%s: the leader dies mid-session: a member claims the next epoch at the registry, the others follow, and all end on the same outcome, seq and checkpoint',
    async (mode) => {
      const r = await runGroup(mode, { leaderDiesAfter: 6 });
      expect(r.seats[0]!.result).toMatchObject({ completed: false, role: 'leader', reason: 'stopped' });
      sameEnd(r, [1, 2, 3]);
      const roles = [1, 2, 3].map((i) => r.seats[i]!.result!.role);
      expect(roles.filter((x) => x === 'leader')).toHaveLength(1);
      for (const i of [1, 2, 3]) expect(r.seats[i]!.result!.epochs).toBe(2);
      const successor = r.seats[1 + roles.indexOf('leader')]!;
      expect(r.group).toMatchObject({ status: 'closed', leader_epoch: 1, leader_public_key: successor.publicKey });
      // The claim waited out the dead leader's lease (15 s) on the virtual clock.
      expect(r.elapsedMs).toBeGreaterThan(15_000);
    },
  );
});
