// Texas Hold'em as four processes on loopback: `aigenora host` leads and plays seat 0, three
// `aigenora join` members play the other seats. One member is killed mid-game and rejoins from its
// own session directory; then the leader is killed: the members name seat 1 as the successor, it
// leads epoch 1 from its checkpoint (the interrupted hand is refunded and redealt), and the old
// leader comes back as a member. The game completes and every member's directory verifies offline.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { verifyGroupSessionAt } from '../../ts/group/session-dir.js';
import { tempDir } from '../shared/tmp.js';
import { BIN, groupMemberDir, initDataDir, startCli, until, type CliProcess } from './helpers.js';

const HOLDEM = new URL('../../ts/protocols/texas-holdem', import.meta.url).pathname;
// Six hands: long enough that the crashes land mid-game on a loaded machine.
const OPTIONS = JSON.stringify({ max_hands: 6, deal_seed: 'group-net' });
const DELAY = ['--action-delay-ms', '120'];

const entries = (dir: string | undefined) =>
  dir && existsSync(join(dir, 'transcript.jsonl')) ? readFileSync(join(dir, 'transcript.jsonl'), 'utf8').split('\n').filter(Boolean).length - 1 : 0;
const lines = (dir: string) =>
  readFileSync(join(dir, 'transcript.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .slice(1)
    .map((l) => JSON.parse(l) as { kind: string; bootstrap?: boolean; envelope?: Record<string, unknown>; leader_public_key?: string; leader_epoch?: number });

describe('authoritative_group over the network', () => {
  it("a leader and three member processes play Hold'em through a member crash and a leader failover; every transcript verifies", async () => {
    const out = tempDir('group-net');
    const data = [0, 1, 2, 3].map((i) => join(out, `agent${i}`));
    for (const d of data) initDataDir(d);
    const invFile = join(out, 'invitation');
    const procs: CliProcess[] = [];
    // A wait that times out says what every process printed.
    const wait = (cond: () => boolean, what: string) =>
      until(cond, what, 90_000).catch((e: Error) => {
        throw new Error(`${e.message}\n${procs.map((p, i) => `--- process ${i}\n${p.output()}`).join('\n')}`);
      });
    try {
      const leader = startCli(['host', '--protocol-dir', HOLDEM, '--options', OPTIONS, '--data-dir', data[0]!, '--invitation-file', invFile, ...DELAY]);
      procs.push(leader);
      await until(() => existsSync(invFile), 'the invitation', 20_000);
      const members = [1, 2, 3].map((i) => startCli(['join', `@${invFile}`, '--protocol-dir', HOLDEM, '--data-dir', data[i]!, ...DELAY]));
      procs.push(...members);

      // A member crashes mid-hand and rejoins from its own directory.
      await wait(() => entries(groupMemberDir(data[2]!)) >= 4, 'four frames at member 2');
      members[1]!.child.kill('SIGKILL');
      expect(await members[1]!.exited).toBeNull();
      const dir2 = groupMemberDir(data[2]!)!;
      const crashedAt = entries(dir2);
      const rejoined = startCli(['join', `@${invFile}`, '--protocol-dir', HOLDEM, '--data-dir', data[2]!, '--resume', dir2, ...DELAY]);
      procs.push(rejoined);

      // Then the leader crashes; it comes back as a member of its successor.
      await wait(() => entries(dir2) >= crashedAt + 3, 'member 2 to be back in play');
      expect(existsSync(join(dir2, 'receipt.json')), 'the game ended before the leader could be stopped').toBe(false);
      leader.child.kill('SIGKILL');
      expect(await leader.exited).toBeNull();
      const dir0 = groupMemberDir(data[0]!)!;
      const oldLeader = startCli(['join', `@${invFile}`, '--protocol-dir', HOLDEM, '--data-dir', data[0]!, '--resume', dir0, ...DELAY]);
      procs.push(oldLeader);

      const finals = [oldLeader, members[0]!, rejoined, members[2]!];
      const codes = await Promise.race([
        Promise.all(finals.map((p) => p.exited)),
        new Promise<never>((_, reject) =>
          setTimeout(
            () => reject(new Error(`the group did not finish in 150 s\n${procs.map((p, i) => `--- process ${i}\n${p.output()}`).join('\n')}`)),
            150_000,
          ),
        ),
      ]);
      expect(codes, finals.map((p) => p.output()).join('\n----\n')).toEqual([0, 0, 0, 0]);

      const c = getCrypto();
      const dirs = data.map((d) => groupMemberDir(d)!);
      const receipts = dirs.map((d) => JSON.parse(readFileSync(join(d, 'receipt.json'), 'utf8')) as Record<string, unknown>);
      for (const [i, d] of dirs.entries()) {
        expect(verifyGroupSessionAt(c, d), d).toMatchObject({ ok: true, receipt: true, completed: true });
        const cli = spawnSync(process.execPath, [BIN, 'receipt', 'verify', d], { encoding: 'utf8' });
        expect(cli.status, cli.stdout + cli.stderr).toBe(0);
        expect(receipts[i]!['leader_epoch']).toBe(1);
      }
      // One final frame, one outcome, one successor: the member in seat 1.
      expect(new Set(receipts.map((r) => r['frame_hash'])).size).toBe(1);
      expect(new Set(receipts.map((r) => r['outcome'])).size).toBe(1);
      const firstCheckpoint = lines(dirs[0]!).find((e) => e.kind === 'envelope')!.envelope!['checkpoint'] as {
        members: { seat: number; public_key: string }[];
      };
      const seat1 = firstCheckpoint.members.find((m) => m.seat === 1)!.public_key;
      expect(receipts[0]!['leader_public_key']).toBe(seat1);
      // The rejoined member was admitted again and its transcript continued past the crash (with a
      // bootstrap envelope, unless the group had not moved while it was away); everyone followed the epoch change.
      expect(rejoined.output()).toMatch(/\(admitted: seat \d, epoch 0\)/);
      expect(lines(dir2).length).toBeGreaterThan(crashedAt + 3);
      for (const d of dirs) {
        const epochs = lines(d).filter((e) => e.kind === 'epoch');
        expect(epochs.map((e) => [e.leader_public_key, e.leader_epoch])).toEqual([[seat1, 1]]);
      }
      // The new leader restored from its checkpoint: the interrupted hand was refunded and redealt.
      const views = lines(dirs[3]!).filter((e) => e.kind === 'envelope' && e.envelope!['leader_epoch'] === 1);
      expect(JSON.stringify(views[0]!.envelope)).toMatch(/refunded/);
    } finally {
      for (const p of procs) p.child.kill('SIGKILL');
    }
  }, 300_000);
});
