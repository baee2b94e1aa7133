// Every fault of issue 4 ends the session with a typed reason, never a crash; the transcript up to
// that point verifies; a proof exists where a party cheated, and verifies offline.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLocal } from '../../ts/engine/local.js';
import { reorderAt } from '../../ts/engine/transport.js';
import { verifyProof, verifyTranscriptAt, type Proof } from '../../ts/engine/verify.js';
import type { HooksModule, Message } from '../../ts/hooks/types.js';
import { tempDir } from '../shared/tmp.js';
import { againstScript, bendingHeroDuelHost, builtin, c, hooksOf, readJson, type RawPeer } from './harness.js';

const ended = (dir: string) =>
  readFileSync(join(dir, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((e) => e.type === 'session_ended')
    .at(-1);

/** The guest's opening of guess-number: join, then wait for ready. */
async function joinGuessNumber(peer: RawPeer) {
  peer.send({ action: 'join', max_attempts: 7 });
  await peer.recv();
}

/** Runs both sides; whatever happened, each side's transcript up to that point must verify. */
async function local(folder: string, extra: Partial<Parameters<typeof runLocal>[0]> = {}) {
  const b = builtin(folder);
  const r = await runLocal({ crypto: c, ...b, hooks: await hooksOf(folder), outDir: tempDir('engine'), timeoutMs: 10_000, ...extra });
  for (const side of [r.host, r.guest]) {
    const v = verifyTranscriptAt(c, side.dir);
    expect(v.ok, `${side.dir}: ${v.reason ?? ''}`).toBe(true);
    expect(v.receipt).toBe(side.completed);
  }
  return r;
}

describe('a well-behaved session', () => {
  it("completes, and each side's transcript and receipt verify offline", async () => {
    const r = await local('rps', { options: { best_of: 3 } });
    expect([r.host.completed, r.guest.completed]).toEqual([true, true]);
    for (const side of [r.host, r.guest]) {
      const v = verifyTranscriptAt(c, side.dir);
      expect(v).toMatchObject({ ok: true, receipt: true });
      expect(readJson(join(side.dir, 'snapshot.json')).phase).toBe('ended');
    }
  });

  it('a receipt stops verifying after any single byte of the transcript changes', async () => {
    const r = await local('coin-flip', { options: { best_of: 1 } });
    const text = readFileSync(join(r.host.dir, 'transcript.jsonl'), 'utf8');
    const spec = readFileSync(join(r.host.dir, 'spec.json'), 'utf8');
    const { verifyTranscript } = await import('../../ts/engine/verify.js');
    expect(verifyTranscript(c, text, spec, readFileSync(join(r.host.dir, 'receipt.json'), 'utf8'))).toMatchObject({ ok: true, receipt: true });
    const positions = Array.from({ length: 150 }, (_, i) => Math.floor((i * text.length) / 150)).filter((p) => text[p] !== '\n');
    for (const p of positions) {
      const code = text.charCodeAt(p);
      const changed = text.slice(0, p) + String.fromCharCode(code === 0x61 ? 0x62 : 0x61) + text.slice(p + 1);
      const v = verifyTranscript(c, changed, spec, readFileSync(join(r.host.dir, 'receipt.json'), 'utf8'));
      expect(v.ok && v.receipt, `byte ${p}`).toBe(false);
    }
  });
});

describe('faults on the wire', () => {
  it('peer silent past the timeout', async () => {
    const out = tempDir('engine');
    const { result, dir } = await againstScript('guess-number', 'host', async (peer) => joinGuessNumber(peer), { outDir: out, timeoutMs: 200 });
    expect(result).toMatchObject({ completed: false, reason: 'peer_timeout' });
    expect(verifyTranscriptAt(c, dir)).toMatchObject({ ok: true, receipt: false });
  });

  it('peer disconnects mid-round', async () => {
    const r = await local('rps', { options: { best_of: 5 }, faults: { guestToHost: (line, n) => (n === 4 ? 'disconnect' : [line]) } });
    expect(r.host).toMatchObject({ completed: false, reason: 'peer_disconnected' });
    expect(r.guest.completed).toBe(false);
    expect(verifyTranscriptAt(c, r.host.dir)).toMatchObject({ ok: true, receipt: false });
    expect(ended(r.host.dir).data).toMatchObject({ completed: false, reason: 'peer_disconnected' });
  });

  it('a dropped frame', async () => {
    const r = await local('guess-number', { faults: { guestToHost: (line, n) => (n === 2 ? [] : [line]) }, timeoutMs: 300 });
    // The host never sees guess 2 and times out waiting for it; the guest waits for an answer.
    expect(r.host.completed).toBe(false);
    expect(['peer_timeout', 'bad_sequence']).toContain(r.host.reason);
  });

  it('a dropped frame followed by another: the gap in the sequence is caught', async () => {
    const r = await local('human-chat', { chat: { host: ['a'], guest: ['1', '2', '3'] }, faults: { guestToHost: (line, n) => (n === 1 ? [] : [line]) } });
    expect(r.host).toMatchObject({ completed: false, reason: 'bad_sequence' });
  });

  it('malformed JSON', async () => {
    const r = await local('guess-number', { faults: { guestToHost: (line, n) => (n === 1 ? [line.slice(0, -3)] : [line]) } });
    expect(r.host).toMatchObject({ completed: false, reason: 'malformed_json' });
  });

  it('duplicate keys are malformed JSON too', async () => {
    const r = await local('guess-number', { faults: { guestToHost: (line, n) => (n === 1 ? [line.replace(/^\{"v":(\d+)/, '{"v":$1,"v":$1')] : [line]) } });
    expect(r.host.reason).toBe('malformed_json');
  });

  it('frame over the size limit', async () => {
    const r = await local('guess-number', { maxFrameBytes: 300 });
    expect(r.host).toMatchObject({ completed: false, reason: 'frame_too_large' });
  });

  it('bad signature', async () => {
    const flip = (line: string) => line.replace(/"sig":"(.)/, (_m, ch: string) => `"sig":"${ch === 'a' ? 'b' : 'a'}`);
    const r = await local('guess-number', { faults: { guestToHost: (line, n) => (n === 2 ? [flip(line)] : [line]) } });
    expect(r.host).toMatchObject({ completed: false, reason: 'bad_signature' });
  });

  it('replayed frame', async () => {
    const r = await local('guess-number', { faults: { guestToHost: (line, n) => (n === 1 ? [line, line] : [line]) } });
    // The host answers the first copy; the second arrives where the next guess should be.
    expect(r.host).toMatchObject({ completed: false, reason: 'bad_sequence' });
  });

  it('out-of-order sequence', async () => {
    const r = await local('human-chat', { chat: { host: ['a', 'b'], guest: ['1', '2', '3'] }, faults: { guestToHost: reorderAt(1) } });
    expect(r.host).toMatchObject({ completed: false, reason: 'bad_sequence' });
  });

  it('a frame re-signed by the wrong key', async () => {
    const out = tempDir('engine');
    const { result } = await againstScript(
      'guess-number',
      'host',
      async (peer) => {
        const { ChainWriter } = await import('../../ts/engine/frame.js');
        const forger = new ChainWriter(c, peer.writer.sid, 'guest', c.ed25519Keypair(new Uint8Array(32).fill(9)));
        peer.sendRaw(forger.next({ action: 'join' }).line);
      },
      { outDir: out },
    );
    expect(result.reason).toBe('bad_signature');
  });
});

describe('free mode', () => {
  it('/quit ends the chat like end', async () => {
    const r = await local('human-chat', { chat: { host: ['hi', '/quit', 'never sent'], guest: ['yo'] } });
    expect([r.host.completed, r.guest.completed]).toEqual([true, true]);
    expect(readFileSync(join(r.guest.dir, 'transcript.jsonl'), 'utf8')).not.toContain('never sent');
  });
});

describe('invalid messages never reach a hook', () => {
  const cases: [string, Message, string][] = [
    ['undeclared field', { action: 'guess', attempt: 1, number: 50, hint: 'pls' }, 'FIELD_UNDECLARED'],
    ['value out of range', { action: 'guess', attempt: 0, number: 50 }, 'FIELD_RANGE'],
    ['wrong type', { action: 'guess', attempt: 1, number: '50' }, 'FIELD_TYPE'],
    ['unknown action', { action: 'surrender' }, 'MESSAGE_ACTION_UNKNOWN'],
  ];
  it.each(cases)('%s', async (_name, bad, code) => {
    const out = tempDir('engine');
    let handled = 0;
    const hooks = await hooksOf('guess-number');
    const spy: HooksModule = {
      mode: hooks.mode,
      create: (ctx) => {
        const h = hooks.create(ctx) as unknown as Record<string, (...a: unknown[]) => unknown>;
        return {
          ...h,
          proto_host_handle: (m: unknown) => {
            handled++;
            return h['proto_host_handle']!(m);
          },
        } as never;
      },
    };
    const { result, dir } = await againstScript(
      'guess-number',
      'host',
      async (peer) => {
        await joinGuessNumber(peer);
        peer.send(bad);
      },
      { outDir: out, hooks: spy },
    );
    expect(result).toMatchObject({ completed: false, reason: 'invalid_message' });
    expect(handled).toBe(0);
    const proof = readJson(join(dir, 'proof.json')) as Proof;
    expect(proof).toMatchObject({ kind: 'invalid_message', offender: 'guest' });
    expect(JSON.stringify(proof.detail)).toContain(code);
    expect(verifyProof(c, proof, builtin('guess-number').specText)).toMatchObject({ proven: true });
    expect(verifyTranscriptAt(c, dir).ok).toBe(true);
  });

  it('free mode drops an invalid chat message instead of ending', async () => {
    const out = tempDir('engine');
    const { result } = await againstScript(
      'human-chat',
      'host',
      async (peer) => {
        peer.send({ action: 'join' });
        await peer.recv();
        peer.send({ action: 'chat', text: 'ok', seq: 1 });
        peer.send({ action: 'chat', text: 'no seq' });
        peer.send({ action: 'end' });
        for (;;) {
          const f = await peer.recv();
          if (!f) return;
          if (f.msg.action === '_receipt') {
            peer.send({
              action: '_receipt',
              host_count: f.msg['host_count'],
              host_head: f.msg['host_head'],
              guest_count: f.msg['guest_count'],
              guest_head: f.msg['guest_head'],
            });
            return;
          }
        }
      },
      { outDir: out },
    );
    expect(result.completed).toBe(true);
    const dropped = readFileSync(join(result.dir, 'events.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('message_dropped'));
    expect(dropped).toHaveLength(1);
  });
});

describe('cheating is caught and proven', () => {
  it('a guest whose reveal does not match its commit', async () => {
    const out = tempDir('engine');
    const { result, dir } = await againstScript(
      'rps',
      'host',
      async (peer) => {
        peer.send({ action: 'join', best_of: 3 });
        await peer.recv(); // ready
        await peer.recv(); // host commit
        peer.send({ action: 'commit', round: 0, hash: c.commit('rock', '00112233445566ff') });
        await peer.recv(); // host reveal
        peer.send({ action: 'reveal', round: 0, choice: 'paper', nonce: '00112233445566ff' });
        await peer.recv();
      },
      { outDir: out, options: { best_of: 3 } },
    );
    expect(result).toMatchObject({ completed: false, reason: 'commit_mismatch' });
    const proof = readJson(join(dir, 'proof.json')) as Proof;
    expect(proof).toMatchObject({ kind: 'commit_mismatch', offender: 'guest' });
    expect(verifyProof(c, proof, readFileSync(join(dir, 'spec.json'), 'utf8'))).toMatchObject({ proven: true });
    expect(readFileSync(join(dir, 'events.jsonl'), 'utf8')).toContain('commit_mismatch_detected');
    // A tampered proof proves nothing.
    const forged = { ...proof, frames: [proof.frames[0]!, proof.frames[1]!.replace('"paper"', '"rock"')] };
    expect(verifyProof(c, forged, readFileSync(join(dir, 'spec.json'), 'utf8')).proven).toBe(false);
  });

  it('a host whose reveal does not match its commit', async () => {
    const out = tempDir('engine');
    const { result, dir } = await againstScript(
      'rps',
      'guest',
      async (peer) => {
        await peer.recv(); // join
        peer.send({ action: 'ready', best_of: 3, rounds_to_win: 2, termination: 'first_to_win', round_delay_seconds: 0 });
        peer.send({ action: 'commit', round: 0, hash: c.commit('scissors', 'aabbccddeeff0011') });
        await peer.recv(); // guest commit
        peer.send({ action: 'reveal', round: 0, choice: 'rock', nonce: 'aabbccddeeff0011' });
        await peer.recv();
      },
      { outDir: out, options: { best_of: 3 } },
    );
    expect(result).toMatchObject({ completed: false, reason: 'commit_mismatch' });
    const proof = readJson(join(dir, 'proof.json')) as Proof;
    expect(proof.offender).toBe('host');
    expect(verifyProof(c, proof, readFileSync(join(dir, 'spec.json'), 'utf8'))).toMatchObject({ proven: true });
  });

  it('a host that bends hero-duel numbers is caught by the shadow judge', async () => {
    const honest = await hooksOf('hero-duel');
    const cheat = await bendingHeroDuelHost(1, (res) => ({ ...res, host_hp: (res['host_hp'] as number) + 40 }));
    const r = await local('hero-duel', { hostHooks: cheat, options: { max_rounds: 30 } });
    expect(r.guest).toMatchObject({ completed: false, reason: 'balance_mismatch' });
    expect(r.host.completed).toBe(false);
    const proof = readJson(r.guest.proof!) as Proof;
    expect(proof).toMatchObject({ kind: 'balance_mismatch', offender: 'host' });
    const spec = readFileSync(join(r.guest.dir, 'spec.json'), 'utf8');
    expect(verifyProof(c, proof, spec)).toMatchObject({ proven: false }); // needs the protocol's judge
    expect(verifyProof(c, proof, spec, { hooks: honest, protocolId: proof.protocol_id })).toMatchObject({ proven: true });
    // Another protocol's rules are refused, whatever its hooks would say.
    const rps = { hooks: await hooksOf('rps'), protocolId: builtin('rps').protocolId };
    expect(verifyProof(c, proof, spec, rps)).toMatchObject({ proven: false, reason: expect.stringMatching(/is not the proof's/) });
    // The host alone judges: the same frames do not prove anything against the guest.
    expect(verifyProof(c, { ...proof, offender: 'guest' }, spec, { hooks: honest, protocolId: proof.protocol_id }).proven).toBe(false);
    expect(readFileSync(join(r.guest.dir, 'events.jsonl'), 'utf8')).toContain('balance_mismatch_detected');
  });
});

describe('malformed proofs are not proven, and never throw', () => {
  type P = Record<string, unknown>;
  it.each<[string, (p: P) => unknown]>([
    ['null', () => null],
    ['an array', () => []],
    ['a string', () => 'proof'],
    ['an empty object', () => ({})],
    ['frames of null', (p) => ({ ...p, frames: [null] })],
    ['no frames', (p) => ({ ...p, frames: [] })],
    ['a frame that is not JSON', (p) => ({ ...p, frames: ['{'] })],
    ['a frame that is JSON null', (p) => ({ ...p, frames: ['null'] })],
    ['a frame with a short sig', (p) => ({ ...p, frames: ['{"v":2,"sid":"x","from":"host","seq":0,"prev":"","ack":"","msg":{"action":"x"},"sig":"ab"}'] })],
    ['an unknown kind', (p) => ({ ...p, kind: 'lies' })],
    ['an extra field', (p) => ({ ...p, extra: true })],
    ['a missing field', (p) => ({ ...p, detail: undefined })],
  ])('%s', async (_name, edit) => {
    const out = tempDir('engine');
    const { dir } = await againstScript(
      'rps',
      'host',
      async (peer) => {
        peer.send({ action: 'join', best_of: 3 });
        await peer.recv();
        await peer.recv();
        peer.send({ action: 'commit', round: 0, hash: c.commit('rock', '00112233445566ff') });
        await peer.recv();
        peer.send({ action: 'reveal', round: 0, choice: 'paper', nonce: '00112233445566ff' });
        await peer.recv();
      },
      { outDir: out, options: { best_of: 3 } },
    );
    const proof = readJson(join(dir, 'proof.json')) as Record<string, unknown>;
    const spec = readFileSync(join(dir, 'spec.json'), 'utf8');
    expect(verifyProof(c, proof, spec).proven).toBe(true);
    expect(verifyProof(c, JSON.parse(JSON.stringify(edit(proof)) ?? 'null'), spec)).toMatchObject({ proven: false, reason: expect.any(String) });
    expect(verifyProof(c, proof, 'not json').proven).toBe(false);
  });
});

describe('faulty local hooks', () => {
  it('a hook that throws ends the session as hook_error', async () => {
    const honest = await hooksOf('guess-number');
    const broken: HooksModule = {
      mode: honest.mode,
      create: (ctx) =>
        ({
          ...(honest.create(ctx) as object),
          proto_host_handle: () => {
            throw new Error('boom');
          },
        }) as never,
    };
    const r = await local('guess-number', { hostHooks: broken });
    expect(r.host).toMatchObject({ completed: false, reason: 'hook_error' });
    expect(r.guest).toMatchObject({ completed: false, reason: 'peer_aborted' });
  });

  it('a guest whose hooks send nothing cannot end the session as completed', async () => {
    const honest = await hooksOf('guess-number');
    const mute: HooksModule = { mode: honest.mode, create: (ctx) => ({ ...(honest.create(ctx) as object), proto_guest_first_action: () => null }) as never };
    const r = await local('guess-number', { guestHooks: mute });
    expect(r.guest).toMatchObject({ completed: false, reason: 'hook_error', detail: expect.stringMatching(/before the session_loop sequence was complete/) });
    expect(r.host).toMatchObject({ completed: false, reason: 'peer_aborted' });
  });

  it('a hook that returns an undeclared message is stopped before it is sent', async () => {
    const honest = await hooksOf('guess-number');
    const chatty: HooksModule = {
      mode: honest.mode,
      create: (ctx) =>
        ({ ...(honest.create(ctx) as object), proto_host_handle: () => ({ action: 'hint', attempt: 1, result: 'warmer', attempts_used: 1 }) }) as never,
    };
    const r = await local('guess-number', { hostHooks: chatty });
    expect(r.host).toMatchObject({ completed: false, reason: 'hook_invalid_message' });
    expect(existsSync(join(r.host.dir, 'proof.json'))).toBe(false);
    expect(readFileSync(join(r.guest.dir, 'transcript.jsonl'), 'utf8')).not.toContain('warmer');
  });

  it('an integer beyond 2^53 is refused from a peer (no hook sees it rounded, no proof) and from our own hooks', async () => {
    const out = tempDir('engine');
    const seen: unknown[] = [];
    const honest = await hooksOf('guess-number');
    const watching: HooksModule = {
      mode: honest.mode,
      create: (ctx) => {
        const h = honest.create(ctx) as unknown as Record<string, (...a: unknown[]) => unknown>;
        return { ...h, proto_host_handle: (m: Message, ...rest: unknown[]) => (seen.push(m['number']), h['proto_host_handle']!(m, ...rest)) } as never;
      },
    };
    const { result, dir } = await againstScript(
      'guess-number',
      'host',
      async (peer) => {
        await joinGuessNumber(peer);
        // Signed over RFC 8785, where this number is the double 2^53; the line carries 2^53 + 1.
        const line = peer.sign({ action: 'guess', attempt: 1, number: 2 ** 53 });
        expect(line).toContain('"number":9007199254740992');
        peer.sendRaw(line.replace('"number":9007199254740992', '"number":9007199254740993'));
        await peer.recv(2000);
      },
      { outDir: out, hooks: watching },
    );
    expect(result).toMatchObject({ completed: false, reason: 'invalid_message' });
    expect(result.detail).toMatch(/\/number = 9007199254740993, an integer beyond 2\^53 - 1/);
    expect(seen).toEqual([]);
    expect(existsSync(join(dir, 'proof.json'))).toBe(false);

    const big: HooksModule = {
      mode: honest.mode,
      create: (ctx) => ({ ...(honest.create(ctx) as object), proto_guest_first_action: () => ({ action: 'guess', attempt: 1, number: 2 ** 53 + 2 }) }) as never,
    };
    const r = await local('guess-number', { guestHooks: big });
    expect(r.guest, JSON.stringify([r.host, r.guest])).toMatchObject({ completed: false, reason: 'hook_invalid_message' });
    expect(r.guest.detail).toMatch(/\/number = 9007199254740994, an integer beyond 2\^53 - 1/);
  });
});
