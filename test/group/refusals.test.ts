// Every GroupError code of the wire layer, each raised by the input that should raise it, with the
// reference's text where the reference has one; and the inputs left as they were.
import { describe, expect, it } from 'vitest';
import { RawNumber } from '../../ts/crypto/jcs.js';
import { applyDelta } from '../../ts/group/delta.js';
import { GROUP_ERROR_CODES, GroupError, type GroupErrorCode } from '../../ts/group/errors.js';
import { groupCanonical, parseGroupJson } from '../../ts/group/json.js';
import {
  admissionCanonical,
  channelReadyBytes,
  checkChannelChallenge,
  checkpointCertificate,
  checkpointState,
  normalizeMembers,
  readJoin,
  validateCheckpointState,
  type AdmissionFields,
} from '../../ts/group/wire.js';

const K = 'ab'.repeat(32);
const before = { a: { b: [1, 2, 3] }, s: 'x' };
const state = {
  members: [{ member_id: 'm', public_key: K, seat: 0, status: 'active' }],
  last_client_seq: {},
  recovery_mode: 'exact',
  protocol_state: {},
  completed: false,
  outcome: null,
};
const nest = (n: number): unknown => (n === 0 ? 0 : [nest(n - 1)]);

const refusals: [GroupErrorCode, string | RegExp, () => unknown][] = [
  ['GROUP_JSON_FLOAT', 'floating-point values are not allowed in group state', () => groupCanonical({ a: 0.5 })],
  ['GROUP_JSON_FLOAT', 'floating-point values are not allowed in group state', () => groupCanonical([NaN])],
  ['GROUP_JSON_FLOAT', 'floating-point values are not allowed in group state', () => groupCanonical(new RawNumber('1.0'))],
  ['GROUP_JSON_FLOAT', 'floating-point values are not allowed in group state', () => groupCanonical(Infinity)],
  ['GROUP_JSON_UNSAFE_INTEGER', /beyond 2\^53/, () => groupCanonical(2 ** 53)],
  ['GROUP_JSON_TOO_DEEP', 'JSON nesting exceeds the group protocol limit', () => groupCanonical(nest(17))],
  ['GROUP_JSON_TOO_DEEP', 'JSON nesting exceeds the group protocol limit', () => groupCanonical({ a: nest(16) })],
  ['GROUP_JSON_TOO_MANY_ITEMS', 'array exceeds the group protocol limit', () => groupCanonical(Array(1025).fill(0))],
  [
    'GROUP_JSON_TOO_MANY_ITEMS',
    'object exceeds the group protocol limit',
    () => groupCanonical(Object.fromEntries(Array.from({ length: 1025 }, (_, i) => [`k${i}`, 0]))),
  ],
  ['GROUP_JSON_STRING_TOO_LONG', 'string exceeds the group protocol limit', () => groupCanonical('é'.repeat(32769))],
  ['GROUP_JSON_STRING_TOO_LONG', 'string exceeds the group protocol limit', () => groupCanonical({ ['k'.repeat(65537)]: 1 })],
  ['GROUP_JSON_KEY_NOT_STRING', 'JSON object keys must be strings', () => groupCanonical(new Map([[1, 'a']]))],
  ['GROUP_JSON_KEY_NOT_STRING', 'JSON object keys must be strings', () => groupCanonical({ [Symbol('k')]: 1 })],
  ['GROUP_JSON_LONE_SURROGATE', /unpaired UTF-16 surrogate/, () => groupCanonical(['\ud800'])],
  ['GROUP_JSON_UNSUPPORTED', /undefined/, () => groupCanonical({ a: undefined })],
  ['GROUP_JSON_UNSUPPORTED', /Date/, () => groupCanonical(new Date(0))],
  ['GROUP_JSON_UNSUPPORTED', /Map/, () => groupCanonical(new Map([['a', 1]]))],
  ['GROUP_JSON_SYNTAX', /./, () => parseGroupJson('{"a":1,"a":2}')],
  ['DELTA_NOT_ARRAY', 'JSON delta must be an array', () => applyDelta(before, { op: 'set' })],
  ['DELTA_TOO_MANY_OPS', 'JSON delta has too many operations', () => applyDelta(before, Array(1025).fill({ op: 'set', path: ['s'], value: 1 }))],
  ['DELTA_OP_NOT_OBJECT', 'JSON delta operation must be an object', () => applyDelta(before, [['set']])],
  ['DELTA_OP_UNKNOWN', 'unsupported JSON delta operation', () => applyDelta(before, [{ op: 'move', path: ['a'] }])],
  ['DELTA_SET_FIELDS', 'set operation has unknown fields', () => applyDelta(before, [{ op: 'set', path: ['s'], value: 1, x: 0 }])],
  ['DELTA_SET_FIELDS', 'set operation has unknown fields', () => applyDelta(before, [{ op: 'set', path: ['s'] }])],
  ['DELTA_REMOVE_INVALID', 'remove operation is invalid', () => applyDelta(before, [{ op: 'remove', path: [] }])],
  ['DELTA_REMOVE_INVALID', 'remove operation is invalid', () => applyDelta(before, [{ op: 'remove', path: ['s'], value: 1 }])],
  ['DELTA_SPLICE_FIELDS', 'splice operation has unknown fields', () => applyDelta(before, [{ op: 'splice', path: ['a', 'b'], index: 0, delete: 0 }])],
  ['DELTA_PATH_INVALID', 'JSON delta path is invalid', () => applyDelta(before, [{ op: 'set', path: 's', value: 1 }])],
  ['DELTA_PATH_INVALID', 'JSON delta path is invalid', () => applyDelta(before, [{ op: 'set', path: Array(33).fill('a'), value: 1 }])],
  ['DELTA_PATH_TOKEN', 'JSON delta path token is invalid', () => applyDelta(before, [{ op: 'set', path: ['a', 'b', true], value: 1 }])],
  ['DELTA_PATH_TOKEN', 'JSON delta path token is invalid', () => applyDelta(before, [{ op: 'set', path: ['a', 'b', -1], value: 1 }])],
  ['DELTA_PATH_TOKEN', 'JSON delta path token is invalid', () => applyDelta(before, [{ op: 'set', path: ['a', 'b', 0.5], value: 1 }])],
  ['DELTA_PATH_MISSING', 'JSON delta path does not exist', () => applyDelta(before, [{ op: 'set', path: ['nope', 'x'], value: 1 }])],
  ['DELTA_PATH_MISSING', 'JSON delta path does not exist', () => applyDelta(before, [{ op: 'set', path: ['toString', 'x'], value: 1 }])],
  ['DELTA_PATH_OUT_OF_BOUNDS', 'JSON delta array path is out of bounds', () => applyDelta(before, [{ op: 'set', path: ['a', 'b', 3, 'x'], value: 1 }])],
  ['DELTA_PATH_TYPE', 'JSON delta path type mismatch', () => applyDelta(before, [{ op: 'set', path: ['a', 0, 'x'], value: 1 }])],
  ['DELTA_PATH_TYPE', 'JSON delta path type mismatch', () => applyDelta(before, [{ op: 'set', path: ['s', 'x', 'y'], value: 1 }])],
  ['DELTA_SET_TARGET', 'JSON delta set target is invalid', () => applyDelta(before, [{ op: 'set', path: ['a', 'b', 3], value: 1 }])],
  ['DELTA_SET_TARGET', 'JSON delta set target is invalid', () => applyDelta(before, [{ op: 'set', path: ['a', 'b', 'x'], value: 1 }])],
  ['DELTA_REMOVE_TARGET', 'JSON delta remove target is invalid', () => applyDelta(before, [{ op: 'remove', path: ['zz'] }])],
  ['DELTA_REMOVE_TARGET', 'JSON delta remove target is invalid', () => applyDelta(before, [{ op: 'remove', path: ['a', 'b', 3] }])],
  ['DELTA_SPLICE_TARGET', 'splice target must be an array', () => applyDelta(before, [{ op: 'splice', path: ['s'], index: 0, delete: 0, items: [] }])],
  ['DELTA_SPLICE_BOUNDS', 'splice bounds are invalid', () => applyDelta(before, [{ op: 'splice', path: ['a', 'b'], index: 2, delete: 2, items: [] }])],
  ['DELTA_SPLICE_BOUNDS', 'splice bounds are invalid', () => applyDelta(before, [{ op: 'splice', path: ['a', 'b'], index: 4, delete: 0, items: [] }])],
  ['DELTA_SPLICE_BOUNDS', 'splice bounds are invalid', () => applyDelta(before, [{ op: 'splice', path: ['a', 'b'], index: -1, delete: 0, items: [] }])],
  ['DELTA_SPLICE_BOUNDS', 'splice bounds are invalid', () => applyDelta(before, [{ op: 'splice', path: ['a', 'b'], index: true, delete: 0, items: [] }])],
  ['DELTA_SPLICE_BOUNDS', 'splice bounds are invalid', () => applyDelta(before, [{ op: 'splice', path: ['a', 'b'], index: 0, delete: 0, items: {} }])],
  ['GROUP_MEMBER_NOT_OBJECT', 'group member must be an object', () => normalizeMembers([K])],
  ['GROUP_MEMBER_KEY', 'group member public_key must be 64-char hex', () => normalizeMembers([{ public_key: K.slice(1), seat: 0 }])],
  ['GROUP_MEMBER_KEY', 'group member public_key must be 64-char hex', () => normalizeMembers([{ public_key: `${K.slice(1)}g`, seat: 0 }])],
  ['GROUP_MEMBER_SEAT', 'group member seat must be between 0 and 31', () => normalizeMembers([{ public_key: K, seat: 32 }])],
  ['GROUP_MEMBER_SEAT', 'group member seat must be between 0 and 31', () => normalizeMembers([{ public_key: K, seat: true }])],
  ['GROUP_MEMBER_SEAT', 'group member seat must be between 0 and 31', () => normalizeMembers([{ public_key: K, seat: -1 }])],
  [
    'GROUP_MEMBER_DUPLICATE',
    'group members must have unique identity and seat',
    () =>
      normalizeMembers([
        { public_key: K, seat: 0 },
        { public_key: 'cd'.repeat(32), seat: 0 },
      ]),
  ],
  // One key in two cases is one member (the reference compares them before lowercasing).
  [
    'GROUP_MEMBER_DUPLICATE',
    'group members must have unique identity and seat',
    () =>
      normalizeMembers([
        { public_key: K, seat: 0 },
        { public_key: K.toUpperCase(), seat: 1 },
      ]),
  ],
  [
    'GROUP_FIELD',
    'leader_epoch must be a non-negative integer',
    () => admissionCanonical({ group_id: 'g', leader_public_key: K, member_public_key: K, protocol_id: 'p', leader_epoch: -1, join_nonce: 'n' }),
  ],
  [
    'GROUP_FIELD',
    'join_nonce must be a string',
    () => admissionCanonical({ group_id: 'g', leader_public_key: K, member_public_key: K, protocol_id: 'p', leader_epoch: 0 } as unknown as AdmissionFields),
  ],
  [
    'GROUP_FIELD',
    'seat must be a non-negative integer',
    () =>
      channelReadyBytes({
        group_id: 'g',
        protocol_id: 'p',
        leader_epoch: 0,
        member_public_key: K,
        member_id: 'm',
        seat: 1.5,
        join_nonce: 'n',
        channel_challenge: 'c',
      }),
  ],
  [
    'GROUP_FIELD',
    'checkpoint_hash must be a string',
    () => checkpointCertificate({ group_id: 'g', leader_public_key: K, leader_epoch: 0, seq: 1, frame_hash: K, membership_version: 1 }),
  ],
  ['GROUP_FIELD', 'first multiplayer frame must be group join', () => readJoin({ _group: 'ready' }, 'g')],
  ['GROUP_FIELD', 'group join targets a different group', () => readJoin({ _group: 'join', group_id: 'h', member_public_key: K, join_nonce: 'n' }, 'g')],
  ['GROUP_FIELD', 'member_public_key must be 64-char hex', () => readJoin({ _group: 'join', group_id: 'g', member_public_key: 'k', join_nonce: 'n' }, 'g')],
  ['GROUP_JOIN_NONCE', 'join_nonce is invalid', () => readJoin({ _group: 'join', group_id: 'g', member_public_key: K, join_nonce: '' }, 'g')],
  ['GROUP_JOIN_NONCE', 'join_nonce is invalid', () => readJoin({ _group: 'join', group_id: 'g', member_public_key: K, join_nonce: 'n'.repeat(65) }, 'g')],
  ['GROUP_CHALLENGE', 'group channel challenge is invalid', () => checkChannelChallenge('AB'.repeat(16))],
  ['GROUP_CHALLENGE', 'group channel challenge is invalid', () => checkChannelChallenge('ab'.repeat(15))],
  [
    'GROUP_CHECKPOINT_STATE',
    'group checkpoint state is missing outcome',
    () => checkpointState(Object.fromEntries(Object.entries(state).filter(([k]) => k !== 'outcome'))),
  ],
  ['GROUP_CHECKPOINT_STATE', 'group checkpoint state fields are invalid', () => validateCheckpointState({ ...state, extra: 1 })],
  ['GROUP_CHECKPOINT_STATE', 'group checkpoint members must be an array', () => validateCheckpointState({ ...state, members: {} })],
  ['GROUP_CHECKPOINT_STATE', 'group checkpoint last_client_seq is invalid', () => validateCheckpointState({ ...state, last_client_seq: { [K]: -1 } })],
  ['GROUP_CHECKPOINT_STATE', 'group checkpoint recovery_mode is invalid', () => validateCheckpointState({ ...state, recovery_mode: 'later' })],
  ['GROUP_CHECKPOINT_STATE', 'group checkpoint protocol_state must be an object', () => validateCheckpointState({ ...state, protocol_state: [] })],
  ['GROUP_CHECKPOINT_STATE', 'group checkpoint completed is invalid', () => validateCheckpointState({ ...state, completed: 0 })],
  ['GROUP_CHECKPOINT_STATE', 'group checkpoint outcome is invalid', () => validateCheckpointState({ ...state, outcome: 1 })],
];

describe('group wire refusals', () => {
  it.each(refusals.map(([code, message, f], i) => [i, code, message, f] as const))('#%i %s', (_i, code, message, f) => {
    let err: unknown;
    try {
      f();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GroupError);
    expect((err as GroupError).code).toBe(code);
    if (typeof message === 'string') expect((err as GroupError).message).toBe(message);
    else expect((err as GroupError).message).toMatch(message);
  });

  it('covers every code the wire layer declares', () => {
    expect(new Set(refusals.map(([code]) => code))).toEqual(new Set(GROUP_ERROR_CODES));
  });

  it('leaves the base value as it was when an operation fails half-way', () => {
    const base = { a: { b: [1, 2, 3] }, s: 'x' };
    expect(() =>
      applyDelta(base, [
        { op: 'splice', path: ['a', 'b'], index: 0, delete: 3, items: [] },
        { op: 'remove', path: ['zz'] },
      ]),
    ).toThrow(GroupError);
    expect(base).toEqual({ a: { b: [1, 2, 3] }, s: 'x' });
  });

  it('accepts the edges the limits allow', () => {
    expect(groupCanonical(nest(16))).toBe(`${'['.repeat(16)}0${']'.repeat(16)}`);
    expect(groupCanonical(Array(1024).fill(0))).toHaveLength(2 * 1024 + 1);
    expect(groupCanonical('é'.repeat(32768))).toHaveLength(32770);
    expect(groupCanonical({ n: -0, b: 2n ** 64n, m: -(2 ** 53 - 1) })).toBe('{"b":18446744073709551616,"m":-9007199254740991,"n":0}');
    expect(groupCanonical(new RawNumber('12345678901234567890'))).toBe('12345678901234567890');
    expect(
      normalizeMembers([
        { public_key: K.toUpperCase(), seat: 31, member_id: '', status: '' },
        { public_key: 'cd'.repeat(32), seat: 0, member_id: 'x' },
      ]),
    ).toEqual([
      { member_id: 'x', public_key: 'cd'.repeat(32), seat: 0, status: 'active' },
      { member_id: K.toUpperCase(), public_key: K, seat: 31, status: 'active' },
    ]);
  });
});
