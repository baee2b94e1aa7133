// Issue 33 item 5, over the network: Texas Hold'em with `aigenora host` and three `aigenora join`
// processes on loopback. One member is killed (SIGKILL) while the hand waits on it; before the fix the
// table sat there for minutes. Now the leader folds (or checks) for it once --turn-timeout-seconds have
// passed, in a frame everyone verifies; the member comes back with --resume and plays its seat again;
// the match completes and every member's directory verifies offline.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { GroupReplica, type TranscriptEntry } from '../../ts/group/member.js';
import { verifyGroupSessionAt, type GroupTranscriptHeader } from '../../ts/group/session-dir.js';
import { tempDir } from '../shared/tmp.js';
import { groupMemberDir, startCli, until, type CliProcess } from './helpers.js';

const HOLDEM = new URL('../../ts/protocols/texas-holdem', import.meta.url).pathname;
// Enough hands that the killed member is back (a process start) well before the match ends.
const OPTIONS = JSON.stringify({ max_hands: 6, deal_seed: 'turn-timeout' });
const TURN = ['--turn-timeout-seconds', '2'];
const c = getCrypto();

function transcript(dir: string): { header: GroupTranscriptHeader; entries: TranscriptEntry[] } {
  const lines = readFileSync(join(dir, 'transcript.jsonl'), 'utf8').split('\n');
  // The line being written may be cut: only whole lines count.
  const whole = lines.slice(0, -1).filter(Boolean);
  return { header: JSON.parse(whole[0]!) as GroupTranscriptHeader, entries: whole.slice(1).map((l) => JSON.parse(l) as TranscriptEntry) };
}

/** Whether the hand waits on this member, by its own verified view (its transcript replayed). */
function onItsTurn(dir: string | undefined): boolean {
  if (!dir || !existsSync(join(dir, 'transcript.jsonl'))) return false;
  // The header itself may not be whole yet (the member is writing it): not its turn yet.
  if (!readFileSync(join(dir, 'transcript.jsonl'), 'utf8').includes('\n')) return false;
  const { header, entries } = transcript(dir);
  if (!entries.length) return false;
  const r = new GroupReplica({
    crypto: c,
    groupId: header.group_id,
    viewerPublicKey: header.member_public_key,
    leaderPublicKey: header.leader_public_key,
    leaderEpoch: header.leader_epoch,
  });
  for (const e of entries) if (e.kind === 'envelope') r.apply(e.envelope, { bootstrap: e.bootstrap });
  const v = r.view as { phase?: string; current_player?: string } | null;
  return v?.phase === 'betting' && v.current_player === header.member_public_key;
}

describe('authoritative_group turn deadlines over the network', () => {
  it('a member killed on its turn is folded for at the deadline, rejoins with --resume and plays on; the table completes', async () => {
    const out = tempDir('group-turns');
    const data = [0, 1, 2, 3].map((i) => join(out, `agent${i}`));
    // The four identities at once: one `aigenora init` process each.
    const inits = data.map((d) => startCli(['init', '--data-dir', d]));
    expect(await Promise.all(inits.map((p) => p.exited))).toEqual([0, 0, 0, 0]);
    const invFile = join(out, 'invitation');
    const procs: CliProcess[] = [];
    const dump = () => procs.map((p, i) => `--- process ${i}\n${p.output()}`).join('\n');
    const wait = (cond: () => boolean, what: string, ms: number) =>
      until(cond, what, ms).catch((e: Error) => {
        throw new Error(`${e.message}\n${dump()}`);
      });
    try {
      const leader = startCli([
        'host',
        '--protocol-dir',
        HOLDEM,
        '--options',
        OPTIONS,
        '--data-dir',
        data[0]!,
        '--invitation-file',
        invFile,
        '--action-delay-ms',
        '100',
        ...TURN,
      ]);
      procs.push(leader);
      await wait(() => existsSync(invFile), 'the invitation', 20_000);
      const join_ = (i: number, delayMs: number, extra: string[] = []) =>
        startCli(['join', `@${invFile}`, '--protocol-dir', HOLDEM, '--data-dir', data[i]!, '--action-delay-ms', String(delayMs), ...TURN, ...extra]);
      // The victim is slow to move, so the test can see its turn come and kill it while the hand waits.
      const members = [join_(1, 100), join_(2, 100), join_(3, 5_000)];
      procs.push(...members);
      await wait(() => onItsTurn(groupMemberDir(data[3]!)), "the victim's turn", 30_000);
      const victim = members[2]!;
      victim.child.kill('SIGKILL');
      expect(await victim.exited).toBeNull();
      const killedAt = Date.now();

      // The leader resolves the turn past the deadline (2 s from the turn's start), by Hold'em's rule.
      await wait(() => /\(turn_timeout: seat \d, reason absent\)/.test(leader.output()), 'the leader to time the turn out', 10_000);
      const timedOutAfter = Date.now() - killedAt;

      // The victim rejoins from its own directory and plays its seat again.
      const dir3 = groupMemberDir(data[3]!)!;
      const back = join_(3, 100, ['--resume', dir3]);
      procs.push(back);
      const finals = [leader, members[0]!, members[1]!, back];
      const codes = await Promise.race([
        Promise.all(finals.map((p) => p.exited)),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the table did not finish in 60 s\n${dump()}`)), 60_000)),
      ]);
      expect(codes, dump()).toEqual([0, 0, 0, 0]);
      expect(timedOutAfter).toBeLessThan(8_000);

      const dirs = data.map((d) => groupMemberDir(d)!);
      for (const d of dirs) expect(verifyGroupSessionAt(c, d), d).toMatchObject({ ok: true, receipt: true, completed: true });
      const receipts = dirs.map((d) => JSON.parse(readFileSync(join(d, 'receipt.json'), 'utf8')) as Record<string, unknown>);
      expect(new Set(receipts.map((r) => r['frame_hash'])).size).toBe(1);
      // Everyone saw the timed-out turn: the frame opens with the leader's turn_timeout event.
      const { header, entries } = transcript(dirs[1]!);
      expect(JSON.stringify(entries)).toContain(`{"kind":"turn_timeout","public_key":"${transcript(dir3).header.member_public_key}"`);
      expect(header.leader_epoch).toBe(0);
      // The victim played after its return: the leader accepted actions of its own after its bootstrap.
      const mine = transcript(dir3);
      const pk = mine.header.member_public_key;
      const envs = mine.entries.filter((e): e is Extract<TranscriptEntry, { kind: 'envelope' }> => e.kind === 'envelope');
      const boot = envs.findLastIndex((e) => e.bootstrap);
      const seqOf = (e: (typeof envs)[number]) => (e.envelope['checkpoint'] as { last_client_seq: Record<string, number> }).last_client_seq[pk] ?? 0;
      expect(boot).toBeGreaterThan(0);
      expect(seqOf(envs.at(-1)!)).toBeGreaterThan(seqOf(envs[boot]!));
    } finally {
      for (const p of procs) p.child.kill('SIGKILL');
    }
  }, 120_000);
});
