// The offline verifiers are the trust anchor: tampered evidence must never verify. Each case here is
// evidence an attacker (or a party rewriting history) could hand over: reordered transcripts, edited
// or foreign receipt.json files, transcripts both parties signed over a flow the protocol does not
// allow, proofs checked against another protocol's rules.
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toHex } from '../../ts/crypto/index.js';
import { ChainWriter, sessionId } from '../../ts/engine/frame.js';
import { runLocal } from '../../ts/engine/local.js';
import { verifyTranscriptAt } from '../../ts/engine/verify.js';
import type { Message, Role } from '../../ts/hooks/types.js';
import { tempDir } from '../shared/tmp.js';
import { builtin, c, hooksOf } from './harness.js';

const read = (p: string) => readFileSync(p, 'utf8');
const linesOf = (dir: string) => read(join(dir, 'transcript.jsonl')).trim().split('\n');
const fromOf = (line: string) => (JSON.parse(line) as { from: Role }).from;
/** Writes a tampered transcript into a copy of the session directory and verifies it. */
function verifyEdited(dir: string, lines: string[], receipt?: string) {
  const copy = tempDir('tampered');
  writeFileSync(join(copy, 'transcript.jsonl'), `${lines.join('\n')}\n`);
  copyFileSync(join(dir, 'spec.json'), join(copy, 'spec.json'));
  if (receipt !== undefined) writeFileSync(join(copy, 'receipt.json'), receipt);
  else copyFileSync(join(dir, 'receipt.json'), join(copy, 'receipt.json'));
  return verifyTranscriptAt(c, copy);
}
const accepted = (v: { ok: boolean; receipt: boolean }) => v.ok && v.receipt;

async function session(folder: string, options: Record<string, unknown> = {}, chat?: { host: string[]; guest: string[] }) {
  const b = builtin(folder);
  const r = await runLocal({ crypto: c, ...b, hooks: await hooksOf(folder), options, outDir: tempDir('verify'), timeoutMs: 10_000, ...(chat && { chat }) });
  expect([r.host.completed, r.guest.completed]).toEqual([true, true]);
  return r;
}

describe('the order between the two parties is fixed', () => {
  it('swapping any two adjacent frames of different senders is refused (rps, both copies)', async () => {
    const r = await session('rps', { best_of: 3 });
    for (const dir of [r.host.dir, r.guest.dir]) {
      const lines = linesOf(dir);
      expect(accepted(verifyEdited(dir, lines))).toBe(true);
      let swaps = 0;
      for (let i = 1; i + 1 < lines.length; i++) {
        if (fromOf(lines[i]!) === fromOf(lines[i + 1]!)) continue;
        const t = [...lines];
        [t[i], t[i + 1]] = [t[i + 1]!, t[i]!];
        expect(accepted(verifyEdited(dir, t)), `${dir}: swap ${i}`).toBe(false);
        swaps++;
      }
      expect(swaps).toBeGreaterThan(10);
    }
  });

  it('free mode, where both sides talk at once: every cross-party swap is refused too', async () => {
    const r = await session('human-chat', {}, { host: ['a', 'b', 'c'], guest: ['1', '2', '3', '4'] });
    for (const dir of [r.host.dir, r.guest.dir]) {
      const lines = linesOf(dir);
      for (let i = 1; i + 1 < lines.length; i++) {
        if (fromOf(lines[i]!) === fromOf(lines[i + 1]!)) continue;
        const t = [...lines];
        [t[i], t[i + 1]] = [t[i + 1]!, t[i]!];
        expect(accepted(verifyEdited(dir, t)), `${dir}: swap ${i}`).toBe(false);
      }
    }
  });

  it("every host frame before the guest's join is refused", async () => {
    const r = await session('guess-number', { range_min: 1, range_max: 100, max_attempts: 7 });
    const [header, ...frames] = linesOf(r.host.dir);
    const hostFirst = [header!, ...frames.filter((l) => fromOf(l) === 'host'), ...frames.filter((l) => fromOf(l) === 'guest')];
    const v = verifyEdited(r.host.dir, hostFirst);
    expect(v.ok).toBe(false);
    expect(v.reason).toMatch(/acknowledges/);
  });

  it("the copy's writer must have seen exactly what precedes each of its frames", async () => {
    // The header says which side wrote the copy; the host's copy claimed by the guest does not fit
    // where the two sides' views differ (free mode).
    const r = await session('human-chat', {}, { host: ['a', 'b', 'c'], guest: ['1', '2', '3', '4'] });
    const lines = linesOf(r.host.dir);
    const header = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(accepted(verifyEdited(r.host.dir, lines))).toBe(true);
    const guestLines = linesOf(r.guest.dir);
    if (guestLines.slice(1).join('\n') !== lines.slice(1).join('\n')) {
      const flipped = [JSON.stringify({ ...header, role: 'guest' }), ...lines.slice(1)];
      expect(accepted(verifyEdited(r.host.dir, flipped))).toBe(false);
    }
  });
});

describe('receipt.json is checked against the transcript', () => {
  it('garbage, empty, null, an edited count and a missing file are refused', async () => {
    const r = await session('coin-flip', { best_of: 1 });
    const dir = r.guest.dir;
    const lines = linesOf(dir);
    const good = read(join(dir, 'receipt.json'));
    expect(accepted(verifyEdited(dir, lines, good))).toBe(true);
    const edited = JSON.parse(good) as { heads: Record<string, unknown> };
    edited.heads['host_count'] = (edited.heads['host_count'] as number) + 1;
    for (const bad of ['garbage', '', 'null', '[]', '{}', JSON.stringify(edited), good.replace('"v": 1', '"v": 1, "v": 1')]) {
      const v = verifyEdited(dir, lines, bad);
      expect(accepted(v), bad.slice(0, 40)).toBe(false);
      expect(v.reason).toMatch(/receipt\.json/);
    }
    const copy = tempDir('tampered');
    writeFileSync(join(copy, 'transcript.jsonl'), `${lines.join('\n')}\n`);
    copyFileSync(join(dir, 'spec.json'), join(copy, 'spec.json'));
    const missing = verifyTranscriptAt(c, copy);
    expect(missing).toMatchObject({ ok: true, receipt: false });
    expect(missing.reason).toMatch(/receipt\.json/);
  });

  it("a receipt.json of another session, or of the other side's copy of an asymmetric session, is refused", async () => {
    const a = await session('coin-flip', { best_of: 1 });
    const b = await session('coin-flip', { best_of: 1 });
    const foreign = verifyEdited(a.host.dir, linesOf(a.host.dir), read(join(b.host.dir, 'receipt.json')));
    expect(accepted(foreign)).toBe(false);
    // The host's and the guest's receipt.json each name their own side first; both bind the same
    // frames, so either side's file fits either copy as long as it names the same two receipts.
    const other = verifyEdited(a.host.dir, linesOf(a.host.dir), read(join(a.guest.dir, 'receipt.json')));
    expect(accepted(other)).toBe(true);
  });

  it('a receipt.json beside a transcript that holds no receipts is refused', async () => {
    const r = await session('coin-flip', { best_of: 1 });
    const lines = linesOf(r.host.dir);
    const cut = lines.slice(0, -2);
    const v = verifyEdited(r.host.dir, cut);
    expect(v.ok).toBe(false);
    expect(v.reason).toMatch(/receipt\.json/);
  });
});

/**
 * A transcript both parties signed, frame by frame, with correct chains and acknowledgements: what two
 * colluding parties (or one party holding both keys) can produce. Only the protocol's flow can refuse it.
 */
function colluding(folder: string, script: [Role, Message][], receipts = true): string {
  const b = builtin(folder);
  const hk = c.ed25519Keypair(new Uint8Array(32).fill(7));
  const gk = c.ed25519Keypair(new Uint8Array(32).fill(8));
  const [hpub, gpub] = [toHex(hk.publicKey), toHex(gk.publicKey)];
  const nonce = 'ab'.repeat(16);
  const sid = sessionId(c, 'local', b.protocolId, hpub, gpub, nonce);
  const w: Record<Role, ChainWriter> = { host: new ChainWriter(c, sid, 'host', hk), guest: new ChainWriter(c, sid, 'guest', gk) };
  const out: string[] = [
    JSON.stringify({ _transcript: 1, sid, post_id: 'local', protocol_id: b.protocolId, host_key: hpub, guest_key: gpub, nonce, role: 'host' }),
  ];
  const send = (from: Role, msg: Message) => {
    const peer: Role = from === 'host' ? 'guest' : 'host';
    const f = w[from].next(msg, w[peer].head);
    out.push(f.line);
    return f.line;
  };
  for (const [from, msg] of script) send(from, msg);
  const lines: Record<Role, string> = { host: '', guest: '' };
  if (receipts) {
    const heads = { action: '_receipt', host_count: w.host.count, host_head: w.host.head, guest_count: w.guest.count, guest_head: w.guest.head };
    lines.host = send('host', heads);
    lines.guest = send('guest', heads);
  }
  const dir = tempDir('colluding');
  writeFileSync(join(dir, 'transcript.jsonl'), `${out.join('\n')}\n`);
  writeFileSync(join(dir, 'spec.json'), b.specText);
  if (receipts) {
    const heads = JSON.parse(lines.host).msg as Message;
    writeFileSync(
      join(dir, 'receipt.json'),
      JSON.stringify(
        { v: 1, sid, protocol_id: b.protocolId, host_key: hpub, guest_key: gpub, heads, frames: { host: lines.host, guest: lines.guest } },
        null,
        2,
      ),
    );
  }
  return dir;
}

describe('the flow of the protocol is replayed over the transcript', () => {
  const rpsReady: Message = { action: 'ready', best_of: 1, rounds_to_win: 1, termination: 'first_to_win', round_delay_seconds: 0 };
  const commit = (v: string, nonce: string) => c.commit(v, nonce);
  const round: [Role, Message][] = [
    ['guest', { action: 'join', best_of: 1 }],
    ['host', rpsReady],
    ['host', { action: 'commit', round: 0, hash: commit('rock', '1111111111111111') }],
    ['guest', { action: 'commit', round: 0, hash: commit('paper', '2222222222222222') }],
    ['host', { action: 'reveal', round: 0, choice: 'rock', nonce: '1111111111111111' }],
    ['guest', { action: 'reveal', round: 0, choice: 'paper', nonce: '2222222222222222' }],
    [
      'host',
      {
        action: 'round_result',
        round: 0,
        host_choice: 'rock',
        guest_choice: 'paper',
        round_winner: 'guest',
        host_wins: 0,
        guest_wins: 1,
        game_over: true,
        game_winner: 'guest',
      },
    ],
    ['host', { action: 'end' }],
  ];

  it('a well-formed colluding transcript of a whole game verifies (the fixture is sound)', () => {
    const v = verifyTranscriptAt(c, colluding('rps', round));
    expect(v, v.reason).toMatchObject({ ok: true, receipt: true });
  });

  it.each<[string, [Role, Message][]]>([
    ['receipts right after ready', round.slice(0, 2)],
    ['no join at all', round.slice(1)],
    ['the host reveals before the guest commits', [...round.slice(0, 3), round[4]!, round[3]!, ...round.slice(5)]],
    ['the guest commits first', [...round.slice(0, 2), round[3]!, round[2]!, ...round.slice(4)]],
    [
      'a reveal that does not open its commit',
      [...round.slice(0, 5), ['guest', { action: 'reveal', round: 0, choice: 'scissors', nonce: '2222222222222222' }], ...round.slice(6)],
    ],
    ['a round_result for another round', [...round.slice(0, 6), ['host', { ...round[6]![1], round: 3 }], round[7]!]],
    ['a second ready', [...round.slice(0, 2), round[1]!, ...round.slice(2)]],
    ['no end after the last round', round.slice(0, -1)],
  ])('rps: %s is refused even when both sides signed it', (_name, script) => {
    const v = verifyTranscriptAt(c, colluding('rps', script));
    expect(accepted(v), v.reason).toBe(false);
  });

  const qna: [Role, Message][] = [
    ['guest', { action: 'join' }],
    ['host', { action: 'ready', topics: ['engine'] }],
    ['guest', { action: 'question', request_id: 'q1', topic: 'engine', text: 'how?' }],
    ['host', { action: 'answer', request_id: 'q1', status: 'answered', text: 'so' }],
  ];
  it('qna: a colluding transcript of one question and its answer verifies (the fixture is sound)', () => {
    const v = verifyTranscriptAt(c, colluding('qna', qna));
    expect(v, v.reason).toMatchObject({ ok: true, receipt: true });
  });

  it.each<[string, [Role, Message][]]>([
    ['the host answers twice', [...qna, qna[3]!]],
    ['two questions', [...qna.slice(0, 3), qna[2]!]],
    ['no question', qna.slice(0, 2)],
  ])('qna (request_response): %s is refused', (_name, script) => {
    const v = verifyTranscriptAt(c, colluding('qna', script));
    expect(accepted(v), v.reason).toBe(false);
  });

  it('session_loop: the host may not speak twice in a row', async () => {
    const r = await session('guess-number', { range_min: 1, range_max: 100, max_attempts: 7 });
    const frames = linesOf(r.host.dir)
      .slice(1)
      .map((l) => JSON.parse(l) as { from: Role; msg: Message })
      .filter((f) => !f.msg.action.startsWith('_'));
    const script = frames.map((f) => [f.from, f.msg] as [Role, Message]);
    expect(accepted(verifyTranscriptAt(c, colluding('guess-number', script)))).toBe(true);
    const hint = script.findIndex(([from], i) => from === 'host' && i > 1);
    const doubled = [...script.slice(0, hint + 1), script[hint]!, ...script.slice(hint + 1)];
    expect(accepted(verifyTranscriptAt(c, colluding('guess-number', doubled)))).toBe(false);
  });

  it('free mode: nothing from a side after its own end', () => {
    const script: [Role, Message][] = [
      ['guest', { action: 'join' }],
      ['host', { action: 'ready' }],
      ['host', { action: 'end' }],
      ['host', { action: 'chat', text: 'late', seq: 1 }],
      ['guest', { action: 'end' }],
    ];
    expect(accepted(verifyTranscriptAt(c, colluding('human-chat', script)))).toBe(false);
    const fine: [Role, Message][] = [
      ['guest', { action: 'join' }],
      ['host', { action: 'ready' }],
      ['host', { action: 'end' }],
      ['guest', { action: 'chat', text: 'still here', seq: 1 }],
      ['guest', { action: 'end' }],
    ];
    expect(accepted(verifyTranscriptAt(c, colluding('human-chat', fine)))).toBe(true);
  });
});

describe('malformed transcripts end in a typed result, never an exception', () => {
  it.each([
    ['a null line', (l: string[]) => [l[0]!, 'null', ...l.slice(1)]],
    ['a null header', (l: string[]) => ['null', ...l.slice(1)]],
    ['a number line', (l: string[]) => [l[0]!, '7', ...l.slice(1)]],
    ['a header of the wrong shape', (l: string[]) => [JSON.stringify({ _transcript: 2, sid: 5 }), ...l.slice(1)]],
    ['a header with an extra field', (l: string[]) => [JSON.stringify({ ...JSON.parse(l[0]!), extra: 1 }), ...l.slice(1)]],
    [
      'a frame whose msg is an array',
      (l: string[]) => [...l.slice(0, 2), l[2]!.replace(/"msg":\{/, '"msg":[{').replace(/\},"sig"/, '}],"sig"'), ...l.slice(3)],
    ],
    ['an empty transcript', () => []],
  ])('%s', async (_name, edit) => {
    const r = await session('coin-flip', { best_of: 1 });
    const v = verifyEdited(r.host.dir, edit(linesOf(r.host.dir)));
    expect(v.ok).toBe(false);
    expect(typeof v.reason).toBe('string');
  });
});
