// Property-based fuzzing of the transcript verifier with tampered evidence. Real sessions of each flow
// mode are mutated (bytes, lines, frame fields, the header, receipt.json, spec.json, and an attacker
// holding one party's key who re-signs its own frames); for every mutant, whatever verifyTranscript
// says, it must say it without throwing, and:
//   - ok: the frames it accepted are a prefix of each party's genuine chain (and, for the same
//     writer, of the genuine interleaving): nothing unsigned, reordered or foreign gets through;
//   - ok with receipt: the whole genuine session, receipt.json included (semantically identical).
// The counts of inputs tried are printed at the end (`[fuzz]` lines).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../../ts/crypto/index.js';
import { frameHash, signingBytes, type Frame } from '../../ts/engine/frame.js';
import { runLocal } from '../../ts/engine/local.js';
import { verifyTranscript } from '../../ts/engine/verify.js';
import type { Role } from '../../ts/hooks/types.js';
import { tempDir } from '../shared/tmp.js';
import { builtin, c, hooksOf } from './harness.js';

/** Inputs per property; AIGENORA_FUZZ_RUNS scales them (e.g. 10000 for a long soak). */
const RUNS = Number(process.env['AIGENORA_FUZZ_RUNS'] ?? 300);

interface Evidence {
  transcript: string;
  spec: string;
  receipt: string | null;
}
interface Fixture extends Evidence {
  name: string;
  seeds: Record<Role, Uint8Array>;
  view: View;
}
interface View {
  sid: string;
  role: string;
  frames: Record<Role, string[]>;
  order: string[];
  receipt: string | null;
}

const canon = (value: unknown) => new TextDecoder().decode(c.jcs(JSON.stringify(value)));

/** What a transcript says, canonically: per-sender frames, their interleaving, the receipt. */
function viewOf(e: Evidence): View {
  const lines = e.transcript.split('\n').filter((l) => l.length > 0);
  const header = JSON.parse(lines[0]!) as { sid: string; role: string };
  const frames: Record<Role, string[]> = { host: [], guest: [] };
  const order: string[] = [];
  for (const l of lines.slice(1)) {
    const f = JSON.parse(l) as Frame;
    const k = canon(f);
    frames[f.from].push(k);
    order.push(k);
  }
  return { sid: header.sid, role: header.role, frames, order, receipt: e.receipt === null ? null : canon(JSON.parse(e.receipt)) };
}

/** JSON.parse, or undefined for text an earlier mutation broke (then there is nothing to edit). */
const tryParse = (t: string): Record<string, unknown> | undefined => {
  try {
    const v = JSON.parse(t) as unknown;
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

const isPrefix = (a: string[], b: string[]) => a.length <= b.length && a.every((x, i) => x === b[i]);

const counts: Record<string, { tried: number; accepted: number; receipted: number; failures: number }> = {};
afterAll(() => {
  for (const [name, n] of Object.entries(counts))
    console.log(
      `[fuzz] ${name}: ${n.tried} inputs tried, ${n.receipted} verified with receipts (identical to the genuine session), ${n.accepted - n.receipted} verified as authentic prefixes, ${n.tried - n.accepted - n.failures} refused, failures ${n.failures}`,
    );
});

/**
 * Runs the verifier on a mutant and checks the property. An attacker holding one party's key can sign
 * new frames at the end of that party's chain (authentic: that party signed them), so only the other
 * party's frames must then be a prefix of its genuine chain; a verified session must still be the
 * genuine one.
 */
function check(name: string, f: Fixture, m: Evidence, attacker?: Role): void {
  const n = (counts[name] ??= { tried: 0, accepted: 0, receipted: 0, failures: 0 });
  n.tried++;
  try {
    property(n, f, m, attacker);
  } catch (e) {
    n.failures++;
    throw e;
  }
}

function property(n: { accepted: number; receipted: number }, f: Fixture, m: Evidence, attacker?: Role): void {
  const v = verifyTranscript(c, m.transcript, m.spec, m.receipt);
  if (!v.ok) {
    expect(v.receipt).toBe(false);
    return;
  }
  n.accepted++;
  const got = viewOf(m);
  expect(got.sid).toBe(f.view.sid);
  for (const side of ['host', 'guest'] as const) if (side !== attacker) expect(isPrefix(got.frames[side], f.view.frames[side]), `${side} frames`).toBe(true);
  // The same writer saw one interleaving; a copy claimed by the other side is that side's view.
  if (got.role === f.view.role && !attacker) expect(isPrefix(got.order, f.view.order), 'interleaving').toBe(true);
  if (v.receipt) {
    n.receipted++;
    expect(got.frames).toEqual(f.view.frames);
    expect(got.receipt).toBe(f.view.receipt);
  }
}

// ---- mutations -------------------------------------------------------------------------------

type Mutation = (e: Evidence, f: Fixture) => Evidence;

const linesOf = (t: string) => t.split('\n').filter((l) => l.length > 0);
const join_ = (ls: string[]) => `${ls.join('\n')}\n`;

/** A JSON value to put somewhere: anything, or something close to what belongs there. */
const jsonValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.integer({ min: -2, max: 200 }),
  fc.constantFrom(
    'host',
    'guest',
    '',
    '0'.repeat(64),
    'f'.repeat(128),
    '_receipt',
    '_abort',
    'join',
    'ready',
    'commit',
    'reveal',
    'end',
    'chat',
    1,
    2,
    true,
    null,
  ),
);

const textEdit = fc.record({
  at: fc.nat(),
  del: fc.nat({ max: 4 }),
  ins: fc.string({
    maxLength: 3,
    unit: fc.oneof(fc.constantFrom('"', '{', '}', ',', ':', '0', 'a', '\\', ' ', '\n', '1'), fc.string({ minLength: 1, maxLength: 1, unit: 'binary' })),
  }),
});
const editText = (t: string, x: { at: number; del: number; ins: string }) => {
  const at = x.at % (t.length + 1);
  return t.slice(0, at) + x.ins + t.slice(at + x.del);
};

function setPath(obj: Record<string, unknown>, path: string[], value: unknown | undefined): void {
  let o = obj;
  for (const k of path.slice(0, -1)) {
    const next = o[k];
    if (typeof next !== 'object' || next === null) return;
    o = next as Record<string, unknown>;
  }
  const last = path.at(-1)!;
  if (value === undefined) delete o[last];
  else o[last] = value;
}

/** Picks a key path inside a parsed object: a top-level key, a nested one, or a new key. */
function pathIn(obj: Record<string, unknown>, pick: number, fresh: boolean): string[] {
  const paths: string[][] = [];
  const walk = (o: unknown, at: string[]) => {
    if (typeof o !== 'object' || o === null || at.length > 3) return;
    for (const k of Object.keys(o)) {
      paths.push([...at, k]);
      walk((o as Record<string, unknown>)[k], [...at, k]);
    }
  };
  walk(obj, []);
  if (fresh || paths.length === 0) return [...(paths[pick % Math.max(1, paths.length)]?.slice(0, -1) ?? []), 'x'];
  return paths[pick % paths.length]!;
}

const mutations: fc.Arbitrary<Mutation>[] = [
  // bytes anywhere in the transcript
  textEdit.map((x) => (e) => ({ ...e, transcript: editText(e.transcript, x) })),
  // whole lines: swap, delete, duplicate, move, truncate
  fc.tuple(fc.nat(), fc.nat(), fc.constantFrom('swap', 'delete', 'duplicate', 'move', 'truncate')).map(([i, j, op]) => (e) => {
    const ls = linesOf(e.transcript);
    if (ls.length === 0) return e;
    const a = i % ls.length;
    const b = j % ls.length;
    if (op === 'swap') [ls[a], ls[b]] = [ls[b]!, ls[a]!];
    else if (op === 'delete') ls.splice(a, 1);
    else if (op === 'duplicate') ls.splice(b, 0, ls[a]!);
    else if (op === 'move') ls.splice(b, 0, ...ls.splice(a, 1));
    else ls.length = a;
    return { ...e, transcript: join_(ls) };
  }),
  // one field of one frame (or of the header, line 0): set, delete or add
  fc.tuple(fc.nat(), fc.nat(), fc.option(jsonValue, { nil: undefined }), fc.boolean()).map(([i, p, value, fresh]) => (e) => {
    const ls = linesOf(e.transcript);
    if (ls.length === 0) return e;
    const at = i % ls.length;
    const obj = tryParse(ls[at]!);
    if (!obj) return e;
    setPath(obj, pathIn(obj, p, fresh), value);
    ls[at] = JSON.stringify(obj);
    return { ...e, transcript: join_(ls) };
  }),
  // receipt.json: a field, bytes, another session's, or none
  fc
    .tuple(fc.nat(), fc.option(jsonValue, { nil: undefined }), fc.boolean(), textEdit, fc.constantFrom('field', 'text', 'foreign', 'none'))
    .map(([p, value, fresh, x, op]) => (e, f) => {
      if (op === 'none' || e.receipt === null) return { ...e, receipt: null };
      if (op === 'text') return { ...e, receipt: editText(e.receipt, x) };
      if (op === 'foreign') return { ...e, receipt: fixtures[(fixtures.indexOf(f) + 1) % fixtures.length]!.receipt };
      const obj = tryParse(e.receipt);
      if (!obj) return e;
      setPath(obj, pathIn(obj, p, fresh), value);
      return { ...e, receipt: JSON.stringify(obj) };
    }),
  // spec.json bytes
  textEdit.map((x) => (e) => ({ ...e, spec: editText(e.spec, x) })),
];

/** Re-signs `who`'s chain in a transcript after `edit` changed its i-th frame of that party. */
function resign(e: Evidence, f: Fixture, who: Role, i: number, edit: (fr: Frame, peerHashes: string[]) => void): Evidence {
  const key = c.ed25519Keypair(f.seeds[who]);
  try {
    const ls = linesOf(e.transcript);
    const mine = ls.map((l, n) => [n, l] as const).filter(([n, l]) => n > 0 && l.includes(`"from":"${who}"`));
    if (mine.length === 0) return e;
    const start = i % mine.length;
    const peerHashes = ls
      .slice(1)
      .filter((l) => !l.includes(`"from":"${who}"`))
      .map((l) => {
        const fr = JSON.parse(l) as Frame;
        return frameHash(c, signingBytes(c, fr), fromHex(fr.sig));
      });
    peerHashes.push(JSON.parse(mine[0]![1]).ack as string);
    let prev: string | undefined;
    for (const [j, [n, l]] of mine.entries()) {
      if (j < start) continue;
      const fr = JSON.parse(l) as Frame;
      if (prev) fr.prev = prev;
      if (j === start) edit(fr, peerHashes);
      const { sig: _old, ...unsigned } = fr;
      let signed: Uint8Array;
      try {
        signed = signingBytes(c, unsigned);
      } catch {
        return e; // the edit made the frame unsignable (not JSON): nothing an attacker can send
      }
      const sig = key.sign(signed);
      fr.sig = toHex(sig);
      prev = frameHash(c, signed, sig);
      ls[n] = JSON.stringify(fr);
    }
    return { ...e, transcript: join_(ls) };
  } finally {
    key.dispose();
  }
}

// ---- fixtures and properties -----------------------------------------------------------------

const fixtures: Fixture[] = [];

async function fixture(name: string, folder: string, options: Record<string, unknown>, chat?: { host: string[]; guest: string[] }): Promise<void> {
  const seeds = { host: new Uint8Array(32).fill(fixtures.length * 2 + 11), guest: new Uint8Array(32).fill(fixtures.length * 2 + 12) };
  const r = await runLocal({
    crypto: c,
    ...builtin(folder),
    hooks: await hooksOf(folder),
    options,
    outDir: tempDir('fuzz'),
    keySeeds: seeds,
    timeoutMs: 10_000,
    ...(chat && { chat }),
  });
  expect([r.host.completed, r.guest.completed]).toEqual([true, true]);
  for (const side of [r.host, r.guest]) {
    const e: Evidence = {
      transcript: readFileSync(join(side.dir, 'transcript.jsonl'), 'utf8'),
      spec: readFileSync(join(side.dir, 'spec.json'), 'utf8'),
      receipt: readFileSync(join(side.dir, 'receipt.json'), 'utf8'),
    };
    fixtures.push({ name: `${name} (${side === r.host ? 'host' : 'guest'} copy)`, seeds, ...e, view: viewOf(e) });
  }
}

beforeAll(async () => {
  await fixture('rps', 'rps', { best_of: 3 });
  await fixture('guess-number', 'guess-number', { range_min: 1, range_max: 100, max_attempts: 7 });
  await fixture('human-chat', 'human-chat', {}, { host: ['a', 'b', 'c'], guest: ['1', '2', '3', '4'] });
  await fixture('qna', 'qna', { topic: 'commit_reveal' });
}, 60_000);

describe('transcript verification under tampering (fast-check)', () => {
  it('the genuine copies verify with receipts', () => {
    expect(fixtures).toHaveLength(8);
    for (const f of fixtures) expect(verifyTranscript(c, f.transcript, f.spec, f.receipt), f.name).toMatchObject({ ok: true, receipt: true });
  });

  it.each([0, 1, 2, 3, 4, 5, 6, 7])('fixture %i: 1 to 3 mutations of any kind are refused or change nothing', (i) => {
    const f = fixtures[i]!;
    fc.assert(
      fc.property(fc.array(fc.oneof(...mutations), { minLength: 1, maxLength: 3 }), (ms) => {
        const m = ms.reduce<Evidence>((e, mut) => mut(e, f), f);
        check('transcripts', f, m);
      }),
      { numRuns: RUNS, seed: 0x5eed + i },
    );
  });

  // An attacker holding one party's key rewrites that party's history and re-signs it (re-chaining
  // every later frame of that party): a message field, or what a frame acknowledges.
  it('an attacker with one key who rewrites its own history never gets a verified session', () => {
    fc.assert(
      fc.property(
        fc.nat(),
        fc.constantFrom<Role>('host', 'guest'),
        fc.nat(),
        fc.nat(),
        fc.option(jsonValue, { nil: undefined }),
        fc.boolean(),
        fc.nat(),
        (i, who, at, p, value, ackOnly, k) => {
          const f = fixtures[i % fixtures.length]!;
          const m = resign(f, f, who, at, (fr, peerHashes) => {
            if (ackOnly) fr.ack = peerHashes[k % peerHashes.length]!;
            else setPath(fr.msg as Record<string, unknown>, pathIn(fr.msg as Record<string, unknown>, p, false), value);
          });
          check('re-signed histories', f, m, who);
          // Re-signing can only produce a different chain: never a verified session.
          if (m.transcript !== f.transcript) expect(accepted(m)).toBe(false);
        },
      ),
      { numRuns: RUNS * 2, seed: 0xa77ac },
    );
  });
});

function accepted(m: Evidence): boolean {
  const v = verifyTranscript(c, m.transcript, m.spec, m.receipt);
  return v.ok && v.receipt;
}
