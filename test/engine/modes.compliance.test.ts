// One suite run against every flow mode the engine runs, on a virtual clock (ts/engine/virtual.ts): a
// whole session of a built-in of that mode completes and both transcripts verify offline; a frame
// replayed, tampered, dropped or cut off ends the session with a typed reason on the side that saw it,
// and never as a success. Modes are found through the registry, so a mode added there without a
// built-in here fails the first test.
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

/** A built-in of each mode the engine runs, with the options that keep it short. */
const CASES: Partial<Record<FlowMode, { folder: string; options?: Record<string, unknown> }>> = {
  session_loop: { folder: 'guess-number' },
  request_response: { folder: 'qna' },
  free: { folder: 'human-chat' },
  simultaneous_round: { folder: 'rps', options: { best_of: 3 } },
  mental_poker: { folder: 'crazy-eights' },
  authoritative_realtime: { folder: 'tank-battle', options: BUILTINS.find((b) => b.folder === 'tank-battle')!.profiles['short']!.options },
};
/** Modes that are not two-party sessions (the registry refuses them with a typed reason; the group engine runs them). */
const NOT_YET: FlowMode[] = ['authoritative_group'];

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
    for (const mode of Object.keys(MODES) as FlowMode[]) expect(CASES[mode] !== undefined || NOT_YET.includes(mode), mode).toBe(true);
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

  it.each(NOT_YET)('%s: a two-party session of a group mode ends at start with a typed reason', async (mode) => {
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
