// The leader writes each member's view member by member (objectParts), hashes the views and payloads
// from a head they share (sharedMembers, headHashes), and diffs views member by member. Each must give
// what the whole-value writer, hasher and differ give: the same text and height, the same first fault
// (its message), the same hashes and the same operations.
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { fromHex, toHex, utf8 } from '../../ts/crypto/encoding.js';
import { RawNumber } from '../../ts/crypto/jcs.js';
import { makeDelta } from '../../ts/group/delta.js';
import { canonicalPart, groupCanonical, headHashes, objectParts, sharedMembers, type GroupJson, type TextCache } from '../../ts/group/json.js';
import { GroupLeader, groupConfigFromSpec, type Envelopes } from '../../ts/group/leader.js';
import { GroupReplica } from '../../ts/group/member.js';
import type { GroupHooks } from '../../ts/hooks/types.js';
import { BUILTIN_DIR } from '../../ts/protocols/index.js';
import meetingRoom from '../../ts/protocols/meeting-room/hooks.js';

const c = getCrypto('wasm');

/** The whole-value writer's answer: its part, or the message it refuses with. */
function whole(v: object, texts?: TextCache): { text: string; height: number } | string {
  try {
    return canonicalPart(v, texts);
  } catch (e) {
    return (e as Error).message;
  }
}

function byMembers(v: object, texts?: TextCache): { text: string; height: number } | string {
  try {
    const { part } = objectParts(v, texts);
    return { text: part.text, height: part.height };
  } catch (e) {
    return (e as Error).message;
  }
}

function deep(levels: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { k: v };
  return v;
}

// Values the walk writes and values it refuses, nested: floats, unsafe integers, lone surrogates,
// non-JSON objects, keys out of order, "__proto__", too deep.
const leaf = fc.oneof(
  fc.constantFrom(null, true, false, 0, -0, 1, -7, 2 ** 53 - 1, 2 ** 53, 1.5, Number.NaN, 'a', 'é', '\u{1F600}', '\ud800', '', 10n ** 20n, undefined),
  fc.constantFrom(new RawNumber('12'), new RawNumber('1.25'), new Map(), new Date(0), Symbol('s')),
  fc.string({ maxLength: 6 }),
  fc.integer(),
);
const key = fc.constantFrom('a', 'b', 'B', '10', '2', 'é', '\u{1F600}', '\uffff', '__proto__', 'you', 'vote', '\udc00');
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(key, tie('v'), { maxKeys: 4 }),
    fc.integer({ min: 12, max: 18 }).map((n) => deep(n, 1)),
  ),
}));
const view = fc.dictionary(key, value.v, { maxKeys: 6 });

describe('objectParts', () => {
  it('writes an object as the whole-value writer does, or refuses it with the same first fault', () => {
    fc.assert(
      fc.property(view, (v) => {
        expect(byMembers(v)).toEqual(whole(v));
      }),
      { numRuns: 2000 },
    );
  });

  it('uses the texts a cache keeps for frozen members, as the walk does', () => {
    const texts: TextCache = new WeakMap();
    const shared = Object.freeze({ z: Object.freeze([1, 2, Object.freeze({ y: 'é' })]), a: 'x' });
    canonicalPart(shared, texts);
    const v = { you: { seat: 3, is: true }, shared, n: null };
    expect(byMembers(v, texts)).toEqual(whole(v));
    expect(objectParts(v, texts).values).toContain(texts.get(shared)!.text);
    // A shared member too deep where it now sits is refused as the walk refuses it.
    const tooDeep = Object.freeze(deep(16, 1) as object);
    canonicalPart(tooDeep, texts);
    expect(byMembers({ a: 1, t: tooDeep }, texts)).toEqual(whole({ a: 1, t: tooDeep }, texts));
    expect(typeof byMembers({ a: 1, t: tooDeep }, texts)).toBe('string');
  });

  it('gives the same text for an object without members, a symbol key or a prototype of its own', () => {
    const sym = { a: 1, [Symbol('x')]: 2 };
    const hidden = Object.defineProperty({ a: 1 }, Symbol('y'), { value: 2, enumerable: false });
    const bare = Object.assign(Object.create(null) as object, { b: 1, a: [] });
    for (const v of [{}, sym, hidden, bare, new Date(0), new Map()]) expect(byMembers(v)).toEqual(whole(v));
  });
});

describe('sharedMembers and headHashes', () => {
  it('splits texts into a shared head and tails that put each text back together and hash as it', () => {
    const small = fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd', 'é'), fc.constantFrom(1, 2, 'x', 'é', '\u{1F600}', null), { maxKeys: 4 });
    fc.assert(
      fc.property(small, fc.array(small, { minLength: 1, maxLength: 4 }), (common, own) => {
        const objects = own.map((o) => objectParts({ ...common, ...o }));
        const { head, tails } = sharedMembers(objects);
        const texts = objects.map((o) => o.part.text);
        expect(tails.map((t) => head + t)).toEqual(texts);
        const { hashes, lengths } = headHashes(c, head, tails);
        expect(hashes).toEqual(texts.map((t) => toHex(c.sha256(utf8(t)))));
        expect(lengths).toEqual(texts.map((t) => utf8(t).length));
      }),
    );
  });

  it('shares the members that are the same, by key and text, in canonical order', () => {
    const objects = [objectParts({ b: 2, a: 1, c: 3 }), objectParts({ a: 1, b: 2, c: 4 })];
    // The first member that differs joins the head as far as its texts agree.
    expect(sharedMembers(objects)).toEqual({ head: '{"a":1,"b":2,"c":', tails: ['3}', '4}'] });
    expect(sharedMembers([objectParts({ a: 1, c: 'x\u{1F600}' }), objectParts({ a: 1, c: 'x\u{1F601}' })]).head).toBe('{"a":1,"c":"x');
    // One ends where the other goes on: the shared member stays in the tails, so each tail starts alike.
    expect(sharedMembers([objectParts({ a: 1, c: 3 }), objectParts({ a: 1, c: 3, d: 4 })])).toEqual({ head: '{"a":1,"c":3', tails: ['}', ',"d":4}'] });
    expect(sharedMembers([objectParts({ a: 1 }), objectParts({ a: 1 })])).toEqual({ head: '{"a":1', tails: ['}', '}'] });
  });
});

describe('the leader, member by member', () => {
  // A 12-seat Meeting Room under random actions (most refused, some accepted): each envelope carries
  // the delta makeDelta gives between the viewer's two views, and each replica verifies and applies
  // every envelope to the leader's view.
  it('sends each viewer the delta makeDelta makes, and every envelope verifies', () => {
    const N = 12;
    const spec = JSON.parse(readFileSync(join(BUILTIN_DIR, 'meeting-room', 'spec.json'), 'utf8')) as unknown;
    const seed = (i: number) => toHex(c.sha256(utf8(`writer seat ${i}`)));
    const pks = Array.from({ length: N }, (_, i) => toHex(c.ed25519PublicKey(fromHex(seed(i)))));
    const members = pks.map((pk, i) => ({ member_id: `m-${i}`, public_key: pk, seat: i, status: 'active' }));
    const hooks = meetingRoom.create({ role: 'host', options: {}, args: [], stateDir: '', decision: null, random: () => 0 });
    const leader = GroupLeader.start({
      crypto: c,
      hooks: hooks as GroupHooks,
      config: groupConfigFromSpec(spec),
      groupId: 'grp-writer',
      leaderSeed: seed(0),
      leaderEpoch: 0,
      membershipVersion: N,
      members,
    });
    const replicas = pks.map((pk) => {
      const r = new GroupReplica({ crypto: c, groupId: 'grp-writer', viewerPublicKey: pk, leaderPublicKey: leader.leaderPublicKey, leaderEpoch: 0 });
      expect(r.apply(leader.bootstrapEnvelope(pk)!, { bootstrap: true }).status).toBe('applied');
      return r;
    });
    const kinds = [
      'add_agenda',
      'open_vote',
      'cast_vote',
      'request_to_speak',
      'yield_speaker',
      'add_action_item',
      'close_vote',
      'advance_agenda',
      'complete_action_item',
    ];
    const views = pks.map((pk) => leader.lastEnvelopes[pk]!.view as GroupJson);
    const seqs = new Array<number>(N).fill(0);
    let accepted = 0;
    let rng = 7;
    const rnd = (n: number) => (rng = (rng * 1103515245 + 12345) % 2147483648) % n;
    for (let step = 0; step < 300 && accepted < 60; step++) {
      const seat = rnd(N);
      const action = {
        kind: kinds[rnd(kinds.length)],
        text: `note ${step} é\u{1F600}`,
        question: `q${step}?`,
        choices: ['a', 'b'],
        choice: rnd(2),
        item_id: rnd(8),
      };
      let envelopes: Envelopes;
      try {
        envelopes = leader.applyInput({ actor_public_key: pks[seat]!, client_seq: seqs[seat]! + 1, action }).envelopes;
      } catch {
        continue;
      }
      seqs[seat]! += 1;
      accepted++;
      pks.forEach((pk, i) => {
        const e = envelopes[pk]!;
        expect(replicas[i]!.apply(e).status).toBe('applied');
        const view = replicas[i]!.view!;
        if (e.view_mode === 'delta') expect(groupCanonical(e.view_delta)).toBe(groupCanonical(makeDelta(views[i]!, view)));
        else expect(groupCanonical(e.view)).toBe(groupCanonical(view));
        views[i] = view;
      });
    }
    expect(accepted).toBeGreaterThan(20);
    leader.dispose();
  });
});
