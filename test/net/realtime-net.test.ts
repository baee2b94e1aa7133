// A realtime match between two processes over the network transport at the spec's tick rate
// (Tank Battle, 10 Hz, the short 100-tick profile): both sides complete with verified receipts, the
// host sends one frame per tick, none before its deadline, the host reports how late its ticks fired
// and the guest how long its commands took to be acknowledged.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { verifyTranscriptAt } from '../../ts/engine/verify.js';
import { BUILTINS } from '../../ts/protocols/index.js';
import { tempDir } from '../shared/tmp.js';
import { BIN, hostProcess, initDataDir } from './helpers.js';

const SHORT = BUILTINS.find((b) => b.folder === 'tank-battle')!.profiles['short']!.options;

const sessionDir = (dataDir: string, role: 'host' | 'guest') => {
  const sessions = join(dataDir, 'sessions');
  return join(sessions, readdirSync(sessions)[0]!, role);
};
const events = (dir: string) =>
  readFileSync(join(dir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { ts: string; type: string; data: Record<string, unknown> });

describe('authoritative_realtime over the network', () => {
  it('two processes play Tank Battle at 10 Hz; both receipts verify and the ticks keep time', async () => {
    const out = tempDir('rt-net');
    const [alice, bob] = [join(out, 'alice'), join(out, 'bob')];
    initDataDir(alice);
    initDataDir(bob);
    const h = await hostProcess(alice, ['--protocol', 'tank-battle-v1', '--options', JSON.stringify(SHORT)]);
    const guest = spawn(process.execPath, [BIN, 'join', h.invitation, '--data-dir', bob], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    guest.stdout!.on('data', (d: Buffer) => (text += d.toString()));
    guest.stderr!.on('data', (d: Buffer) => (text += d.toString()));
    const code = await new Promise<number | null>((r) => guest.on('exit', r));
    expect(code, text).toBe(0);
    expect(await h.exited, h.output()).toBe(0);
    const c = getCrypto();
    const hostDir = sessionDir(alice, 'host');
    const guestDir = sessionDir(bob, 'guest');
    for (const dir of [hostDir, guestDir]) expect(verifyTranscriptAt(c, dir)).toMatchObject({ ok: true, receipt: true });
    // The host's frames carry its clock: one frame per tick, in order, each stamped later than the last
    // and never before its tick's deadline (n tick intervals, 100 ms at 10 Hz, after the start). How
    // closely the ticks keep to their deadlines is the virtual clock's to show, where it is exact
    // (test/engine/realtime-session.test.ts); on a shared machine real timers only ever fire late.
    const frames = readFileSync(join(hostDir, 'transcript.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .slice(1)
      .map((l) => JSON.parse(l) as { from: string; msg: { action: string; frame?: { tick: number; host_time_ns: number } } })
      .filter((f) => f.from === 'host' && f.msg.action === 'rt_frame')
      .map((f) => f.msg.frame!);
    expect(frames.length).toBeGreaterThan(10);
    expect(frames.map((f) => f.tick)).toEqual(frames.map((_f, i) => i + 1));
    for (const [i, f] of frames.entries()) {
      expect(f.host_time_ns, `tick ${f.tick}`).toBeGreaterThanOrEqual(f.tick * 100e6);
      if (i > 0) expect(f.host_time_ns, `tick ${f.tick}`).toBeGreaterThan(frames[i - 1]!.host_time_ns);
    }
    const late = events(hostDir).find((e) => e.type === 'timer_lateness');
    expect(late?.data['count']).toBe(frames.length);
    expect(typeof late?.data['p99_ms']).toBe('number');
    // The guest timed each command to its ack.
    const rtt = events(guestDir).find((e) => e.type === 'realtime_command_rtt');
    expect(rtt?.data['count']).toBeGreaterThan(frames.length / 2);
    expect(rtt!.data['p50_ms']).toBeGreaterThan(0);
  }, 60_000);
});
