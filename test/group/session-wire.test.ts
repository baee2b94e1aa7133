// The wire layer against every envelope of the reference's Community Room session (group vectors,
// `session`), on both backends: frame hashes, events hashes, checkpoints (hash, certificate, the
// Leader's signature, each delta replayed and each full-or-delta choice remade), private views (the
// delta replayed to the hashed view, the choice remade), view hashes and the Leader's signature per
// viewer; and tampered envelopes that must fail. The Leader and replica themselves are not used here.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { needShared } from '../shared/require.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { applyDelta } from '../../ts/group/delta.js';
import { groupCanonical, groupJsonHash, type GroupJson } from '../../ts/group/json.js';
import {
  CHECKPOINT_DELTA_MARGIN,
  checkpointCertificate,
  checkpointForcedFull,
  checkpointHash,
  checkpointState,
  deltaIfSmaller,
  frameCore,
  frameHash,
  privatePayloadOf,
  signaturePayload,
  stripCheckpoint,
  validateCheckpointState,
  verifyCheckpoint,
  verifyView,
  VIEW_DELTA_MARGIN,
  viewHash,
} from '../../ts/group/wire.js';

const CORPUS = new URL('../../../shared/conformance/aigenora-reference/aigenora-group-vectors.json', import.meta.url);
const skip = !needShared('conformance/aigenora-reference/aigenora-group-vectors.json', "the reference's Community Room session (group vectors)");

type Obj = Record<string, any>;
function session(): Obj {
  if (!existsSync(CORPUS)) throw new Error(`${CORPUS.pathname} is absent; set AIGENORA_SKIP_CORPORA=1 to skip`);
  return (JSON.parse(readFileSync(CORPUS, 'utf8')) as { cases: Obj[] }).cases.find((c) => c['kind'] === 'session')!;
}
const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe.each(['wasm', 'js'])('%s backend', (name) => {
  const c = getCrypto(name);

  it.skipIf(skip)("reproduces every hash, signature check and delta of the session's envelopes", () => {
    const s = session();
    const views = new Map<string, GroupJson>();
    let previous: Obj | undefined; // the previous frame's full checkpoint
    let frames = 0;
    for (const step of s['steps'] as Obj[]) {
      const d = step['derived'] as Obj;
      const cp = d['checkpoint'] as Obj;
      // The frame and its checkpoint, once per step.
      const first = Object.values(step['envelopes'] as Obj)[0] as Obj;
      const core = frameCore(first);
      expect(groupCanonical(core)).toBe(d['core_canonical']);
      expect(frameHash(c, core)).toBe(d['frame_hash']);
      expect(groupCanonical(stripCheckpoint(cp))).toBe(d['checkpoint_unsigned_canonical']);
      expect(checkpointHash(c, cp)).toBe(cp['checkpoint_hash']);
      expect(checkpointCertificate(cp)).toBe(d['checkpoint_certificate']);
      expect(verifyCheckpoint(c, first['leader_public_key'], cp)).toBe(true);
      const state = checkpointState(cp);
      validateCheckpointState(state);
      expect(groupJsonHash(c, state)).toBe(first['recovery_state_hash']);
      const repeat = previous !== undefined && previous['frame_hash'] === cp['frame_hash'];
      if (!repeat) {
        frames++;
        const forced = checkpointForcedFull({
          first: previous === undefined,
          kind: first['_group'],
          completed: first['completed'],
          seq: first['seq'],
          every: s['spec_group']['checkpoint_every_events'],
        });
        const delta = forced
          ? undefined
          : deltaIfSmaller(checkpointState(previous!) as unknown as GroupJson, state as unknown as GroupJson, cp as GroupJson, CHECKPOINT_DELTA_MARGIN);
        expect(first['checkpoint_mode'], step['step']).toBe(delta ? 'delta' : 'full');
        if (delta) expect(groupCanonical(first['checkpoint_delta'])).toBe(groupCanonical(delta));
      }
      for (const [pk, env] of Object.entries(step['envelopes'] as Obj) as [string, Obj][]) {
        const what = `${String(step['step'])} ${pk.slice(0, 6)}`;
        expect(env['viewer_public_key'], what).toBe(pk);
        expect(groupCanonical(frameCore(env)), what).toBe(d['core_canonical']);
        expect(env['frame_hash'], what).toBe(d['frame_hash']);
        expect(groupJsonHash(c, env['events']), what).toBe(env['events_hash']);
        // The checkpoint: full as derived, or a delta that replays the previous one to this state.
        if (env['checkpoint_mode'] === 'full') expect(groupCanonical(env['checkpoint']), what).toBe(groupCanonical(cp));
        else expect(groupCanonical(applyDelta(checkpointState(previous!), env['checkpoint_delta'])), what).toBe(groupCanonical(state));
        // The view: full, or a delta on this viewer's last view; its hash is the one signed over.
        const view = env['view_mode'] === 'full' ? env['view'] : applyDelta(views.get(pk), env['view_delta']);
        expect(groupJsonHash(c, view), what).toBe(env['view_state_hash']);
        if (!repeat && env['_group'] === 'frame' && views.has(pk)) {
          const delta = deltaIfSmaller(views.get(pk)!, view, view, VIEW_DELTA_MARGIN);
          expect(env['view_mode'], what).toBe(delta ? 'delta' : 'full');
          if (delta) expect(groupCanonical(env['view_delta']), what).toBe(groupCanonical(delta));
        }
        views.set(pk, view);
        const vh = viewHash(c, privatePayloadOf(env));
        expect(vh, what).toBe(env['view_hash']);
        expect(vh, what).toBe(d['views'][pk]['view_hash']);
        if (d['views'][pk]['private_payload_canonical']) expect(groupCanonical(privatePayloadOf(env)), what).toBe(d['views'][pk]['private_payload_canonical']);
        expect(text(signaturePayload(env['frame_hash'], vh, pk)), what).toBe(d['views'][pk]['signature_payload_canonical']);
        expect(verifyView(c, env['leader_public_key'], env['frame_hash'], vh, pk, env['signature']), what).toBe(true);
      }
      previous = cp;
    }
    expect(frames).toBe(13);
    for (const [pk, r] of Object.entries(s['expect']['final_replicas'] as Obj) as [string, Obj][]) {
      expect(groupCanonical(views.get(pk)), pk).toBe(groupCanonical(r['view']));
    }
  });

  it.skipIf(skip)('catches tampered envelopes: another viewer, another frame, a changed event or view, a stale leader', () => {
    const s = session();
    const step = (s['steps'] as Obj[]).find((x) => x['step'] === 'send_1')!;
    const [[pk, env], [otherPk]] = Object.entries(step['envelopes'] as Obj) as [[string, Obj], [string, Obj]];
    const vh = viewHash(c, privatePayloadOf(env));
    const leader = env['leader_public_key'] as string;
    expect(verifyView(c, leader, env['frame_hash'], vh, pk, env['signature'])).toBe(true);
    // The signature binds the viewer, the frame and the view.
    expect(verifyView(c, leader, env['frame_hash'], vh, otherPk, env['signature'])).toBe(false);
    expect(verifyView(c, leader, env['previous_hash'], vh, pk, env['signature'])).toBe(false);
    expect(viewHash(c, privatePayloadOf({ ...env, direct: [{ kind: 'x' }] }))).not.toBe(env['view_hash']);
    expect(groupJsonHash(c, [...env['events'], { kind: 'extra' }])).not.toBe(env['events_hash']);
    expect(frameHash(c, frameCore({ ...env, seq: env['seq'] + 1 }))).not.toBe(env['frame_hash']);
    // The failover's new leader (seat 1) is not the epoch-0 leader: its signature does not pass as seat 0's.
    const later = (s['steps'] as Obj[]).find((x) => x['step'] === 'failover_epoch_start')!['envelopes'][pk] as Obj;
    expect(later['leader_public_key']).not.toBe(leader);
    expect(verifyView(c, leader, later['frame_hash'], later['view_hash'], pk, later['signature'])).toBe(false);
    // A checkpoint whose state was altered after signing.
    const cp = (step['derived'] as Obj)['checkpoint'] as Obj;
    expect(verifyCheckpoint(c, leader, { ...cp, protocol_state: { ...cp['protocol_state'], closed: true } })).toBe(false);
    expect(verifyCheckpoint(c, leader, { ...cp, seq: cp['seq'] + 1 })).toBe(false);
    expect(verifyCheckpoint(c, later['leader_public_key'], cp)).toBe(false);
  });
});
