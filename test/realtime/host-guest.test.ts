// The host's authority (every refusal, in the reference's order) and the guest's checks of frames and
// acks, driven directly; frames are tampered the way a cheating host would send them.
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { RealtimeGuest } from '../../ts/realtime/guest.js';
import { joinInline, RealtimeHookError, RealtimeHost, tickInline } from '../../ts/realtime/host.js';
import { rtJsonHash } from '../../ts/realtime/json.js';
import { commandHash, commandMessage, matchConfigHash, makeFrame, type RtFrame } from '../../ts/realtime/wire.js';
import { CONFIG, counterHooks, inline } from './fixture.js';

const c = getCrypto('js');
const RULES = 'a'.repeat(64);
const MATCH = matchConfigHash(c, RULES, {}, CONFIG);
const JOIN = { action: 'rt_join', wire_version: 1, ruleset_hash: RULES, match_config_hash: MATCH };

function started(hooks = inline(counterHooks('host'))) {
  const host = new RealtimeHost({ crypto: c, config: CONFIG, rulesetHash: RULES, matchConfigHash: MATCH, validateCommands: hooks.validateCommands });
  const ready = joinInline(host, hooks, JOIN, 0);
  return { host, hooks, ready };
}

const cmd = (seq: number, target: number, commands: unknown[] = [{ add: 1 }]) => ({ ...commandMessage(c, seq, target, commands) }) as Record<string, unknown>;

describe('host', () => {
  it('refuses a join for the first mismatch: wire version, then ruleset, then match config', () => {
    const host = new RealtimeHost({ crypto: c, config: CONFIG, rulesetHash: RULES, matchConfigHash: MATCH, validateCommands: () => [] });
    const other = 'b'.repeat(64);
    expect(host.answerJoin({ ...JOIN, wire_version: 2, ruleset_hash: other })?.reject).toEqual({ action: 'rt_reject', reason: 'wire_version_mismatch' });
    expect(host.answerJoin({ ...JOIN, ruleset_hash: other, match_config_hash: other })?.reason).toBe('ruleset_hash_mismatch');
    expect(host.answerJoin({ ...JOIN, match_config_hash: other })?.reason).toBe('match_config_mismatch');
    expect(host.answerJoin(JOIN)).toBeUndefined();
    expect(matchConfigHash(c, RULES, { arena: 'x' }, CONFIG)).not.toBe(MATCH);
  });

  it('acks every refusal with the reference reason, checked in the reference order', () => {
    const { host } = started();
    const reason = (m: Record<string, unknown>) => host.command(m).ack?.['reason'];
    expect(host.command(cmd(1, 2)).ack).toMatchObject({ status: 'accepted', seq: 1, target_tick: 2, received_at_tick: 0 });
    // A wrong hash is found before the sequence number, which is found before the tick checks.
    expect(reason({ ...cmd(1, 0), command_hash: '0'.repeat(64) })).toBe('command_hash_mismatch');
    expect(reason(cmd(1, 0))).toBe('non_monotonic_sequence');
    expect(reason(cmd(2, 0))).toBe('late_target_tick');
    expect(reason(cmd(2, 5))).toBe('target_tick_too_far');
    expect(reason(cmd(2, 2))).toBe('target_tick_already_queued');
    expect(reason(cmd(2, 3, [{ add: 1 }, { add: 1 }, { add: 1 }, { add: 1 }]))).toBe('command frame exceeds max_commands_per_frame');
    expect(reason(cmd(2, 3, [{ add: 9 }]))).toBe('bad add');
    expect(reason({ ...cmd(2, 3), action: 'rt_other' })).toBe('unexpected real-time guest message');
    // A refused command does not advance the sequence: seq 2 is still accepted.
    const ok = host.command(cmd(2, 3)).ack!;
    expect(ok).toMatchObject({ status: 'accepted', command_hash: commandHash(c, 2, 3, [{ add: 1 }]) });
    expect(ok).not.toHaveProperty('reason');
    // A rejection ack repeats the message's hash, and there is none without integer seq and target_tick.
    expect(host.command({ ...cmd(1, 0), command_hash: 'f'.repeat(64) }).ack).toMatchObject({
      status: 'rejected',
      command_hash: 'f'.repeat(64),
      reason: 'command_hash_mismatch',
    });
    expect(host.command({ action: 'rt_command', seq: 'x', target_tick: 3 })).toEqual({ ack: undefined, rejected: 'rt_command fields are malformed' });
  });

  it('refuses what a hook returns that is not a list, or a normalised list over the limit', () => {
    const mk = (ret: unknown) => new RealtimeHost({ crypto: c, config: CONFIG, rulesetHash: RULES, matchConfigHash: MATCH, validateCommands: () => ret });
    const h1 = mk({ add: 1 });
    h1.start({}, 0);
    expect(h1.command(cmd(1, 2)).rejected).toBe('proto_realtime_validate_commands must return a list');
    const h2 = mk([1, 2, 3, 4]);
    h2.start({}, 0);
    expect(h2.command(cmd(1, 2)).rejected).toBe('normalized command frame exceeds max_commands_per_frame');
    const h3 = mk([NaN]);
    h3.start({}, 0);
    expect(h3.command(cmd(1, 2)).rejected).toBe('Out of range float values are not JSON compliant');
  });

  it('applies the acked commands at their tick, its own after the input delay, and chains the frames', () => {
    const { host, hooks, ready } = started();
    const f0 = ready['frame'] as RtFrame;
    const ack = host.command(cmd(1, 1, [{ add: 3 }])).ack!;
    const f1 = tickInline(host, hooks, () => 7).frame;
    expect(f1.applied_commands.guest).toEqual({ side: 'guest', seq: 1, target_tick: 1, commands: [{ add: 3 }], command_hash: ack['command_hash'] });
    expect(f1.applied_commands.host.seq).toBeNull();
    expect([f1.prev_chain_hash, f1.prev_state_hash, f1.host_time_ns]).toEqual([f0.chain_hash, f0.state_hash, 7]);
    const f2 = tickInline(host, hooks, () => 8).frame;
    expect(f2.applied_commands.host).toMatchObject({ seq: 1, target_tick: 2, commands: [{ add: 2 }] });
    expect(f2.state).toMatchObject({ host: 2, guest: 3 });
    expect(f2.state_hash).toBe(rtJsonHash(c, f2.state));
  });

  it('stops the run with a typed hook error where the reference raises', () => {
    const bad = { ...inline(counterHooks('host')), step: () => ({ state: {}, outcome: 'maybe' }) };
    const { host } = started(bad);
    expect(() => tickInline(host, bad, () => 0)).toThrow(RealtimeHookError);
    const noState = { ...inline(counterHooks('host')), initialState: () => [] };
    expect(() => started(noState)).toThrow(/must return an object/);
  });
});

/** An honest host's messages for a few ticks, with the guest's commands acked on the way. */
function honest(ticks: number) {
  const { host, hooks, ready } = started();
  const script: { kind: 'ready' | 'ack' | 'frame'; msg: Record<string, unknown> }[] = [{ kind: 'ready', msg: ready }];
  for (let t = 1; t <= ticks; t++) {
    const m = commandMessage(c, t, t + 1, [{ add: 1 }]);
    script.push({ kind: 'ack', msg: host.command({ ...m }).ack! });
    script.push({ kind: 'frame', msg: tickInline(host, hooks, () => t).message });
  }
  return script;
}

/** Feeds a guest the script: the guest's commands as sent (seq t for tick t + 1), then acks and frames. */
function replay(script: ReturnType<typeof honest>) {
  const guest = new RealtimeGuest({ crypto: c, config: CONFIG, rulesetHash: RULES, matchConfigHash: MATCH });
  for (const [i, s] of script.entries()) {
    let fault;
    if (s.kind === 'ready') fault = guest.ready(s.msg);
    else if (s.kind === 'ack') {
      guest.sent(commandMessage(c, s.msg['seq'] as number, s.msg['target_tick'] as number, [{ add: 1 }]) as never);
      fault = guest.ack(s.msg);
    } else fault = guest.frame(s.msg['frame']);
    if (fault) return { at: i, ...fault };
  }
  return undefined;
}

const frameAt = (script: ReturnType<typeof honest>, tick: number) => script.find((s) => s.kind === 'frame' && (s.msg['frame'] as RtFrame).tick === tick)!;

/** A frame re-made with the host's hashes but other content: what a cheating host could sign. */
function remake(f: RtFrame, prev: RtFrame, over: Partial<Pick<RtFrame, 'applied_commands' | 'state'>>): RtFrame {
  return makeFrame(c, {
    tick: f.tick,
    state: over.state ?? f.state,
    previous: prev,
    applied: over.applied_commands ?? f.applied_commands,
    events: f.events,
    outcome: f.outcome,
    hostTimeNs: f.host_time_ns,
  });
}

describe('guest', () => {
  it('accepts an honest host', () => {
    expect(replay(honest(5))).toBeUndefined();
  });

  it('catches a broken chain, a skipped tick and a changed state', () => {
    const s = honest(4);
    const f2 = frameAt(s, 2).msg['frame'] as RtFrame;
    frameAt(s, 2).msg['frame'] = { ...f2, prev_chain_hash: 'e'.repeat(64) };
    expect(replay(s)).toMatchObject({ code: 'frame_prev_chain_hash', message: 'real-time frame prev_chain_hash mismatch', tick: 2 });

    const skip = honest(4);
    skip.splice(skip.indexOf(frameAt(skip, 2)), 1);
    expect(replay(skip)).toMatchObject({ code: 'frame_tick_gap', message: 'real-time frame tick discontinuity: expected 2, got 3' });

    const st = honest(3);
    const f1 = frameAt(st, 1).msg['frame'] as RtFrame;
    frameAt(st, 1).msg['frame'] = { ...f1, state: { ...f1.state, guest: 99 } };
    expect(replay(st)).toMatchObject({ code: 'frame_state_hash' });
  });

  it('catches a frame that drops a command it acked as accepted, even with every hash remade', () => {
    const s = honest(4);
    const f2 = frameAt(s, 2).msg['frame'] as RtFrame;
    const f1 = frameAt(s, 1).msg['frame'] as RtFrame;
    const dropped = remake(f2, f1, {
      applied_commands: {
        ...f2.applied_commands,
        guest: { side: 'guest', seq: null, target_tick: 2, commands: [], command_hash: commandHash(c, null, 2, []) },
      },
    });
    frameAt(s, 2).msg['frame'] = dropped;
    expect(replay(s)).toMatchObject({ code: 'acked_command_dropped', tick: 2 });
  });

  it('catches a frame that alters the acked command, or applies one never acked', () => {
    const s = honest(4);
    const f2 = frameAt(s, 2).msg['frame'] as RtFrame;
    const f1 = frameAt(s, 1).msg['frame'] as RtFrame;
    const altered = { side: 'guest' as const, seq: 1, target_tick: 2, commands: [{ add: 3 }], command_hash: commandHash(c, 1, 2, [{ add: 3 }]) };
    frameAt(s, 2).msg['frame'] = remake(f2, f1, { applied_commands: { ...f2.applied_commands, guest: altered } });
    expect(replay(s)).toMatchObject({ code: 'acked_command_altered', tick: 2 });

    const kept = honest(4);
    const g2 = frameAt(kept, 2).msg['frame'] as RtFrame;
    const g1 = frameAt(kept, 1).msg['frame'] as RtFrame;
    // The commands changed but the hash kept: the applied entry no longer hashes to itself.
    frameAt(kept, 2).msg['frame'] = remake(g2, g1, {
      applied_commands: { ...g2.applied_commands, guest: { ...g2.applied_commands.guest, commands: [{ add: 3 }] } },
    });
    expect(replay(kept)).toMatchObject({ code: 'applied_malformed' });

    const invented = honest(2);
    const ack = invented.findIndex((x) => x.kind === 'ack' && x.msg['target_tick'] === 2);
    invented[ack]!.msg = { ...invented[ack]!.msg, status: 'rejected', reason: 'late_target_tick' };
    expect(replay(invented)).toMatchObject({ code: 'unacked_command_applied', tick: 2 });
  });

  it('refuses acks for commands it never sent, and frames after the end', () => {
    const guest = new RealtimeGuest({ crypto: c, config: CONFIG, rulesetHash: RULES, matchConfigHash: MATCH });
    const s = honest(1);
    expect(guest.ready(s[0]!.msg)).toBeUndefined();
    expect(
      guest.ack({ action: 'rt_command_ack', seq: 5, target_tick: 3, status: 'accepted', received_at_tick: 0, command_hash: 'a'.repeat(64) }),
    ).toMatchObject({ code: 'ack_invalid' });
    const sent = guest.nextCommand([{ add: 1 }]);
    expect(sent).toMatchObject({ seq: 1, target_tick: 2 });
    const ack = { action: 'rt_command_ack', seq: 1, target_tick: 2, status: 'accepted', received_at_tick: 0, command_hash: sent.command_hash };
    expect(guest.ack(ack)).toBeUndefined();
    expect(guest.ack(ack)).toMatchObject({ code: 'ack_invalid', message: 'a second accepted ack for tick 2' });
  });

  it('refuses an rt_ready naming another match or config as a mismatch, not as a cheat', () => {
    const guest = new RealtimeGuest({ crypto: c, config: CONFIG, rulesetHash: RULES, matchConfigHash: MATCH });
    const ready = honest(0)[0]!.msg;
    expect(guest.ready({ ...ready, match_config_hash: 'b'.repeat(64) })).toMatchObject({
      code: 'ready_mismatch',
      message: 'host real-time bundle/config mismatch',
    });
    expect(guest.ready({ ...ready, config: { ...CONFIG, tick_rate_hz: 30 } })).toMatchObject({
      code: 'ready_mismatch',
      message: 'host real-time config mismatch',
    });
    expect(guest.ready({ ...ready, wire_version: 2 })).toMatchObject({ code: 'ready_mismatch', message: 'wire_version_mismatch' });
  });
});

describe('offline transcript', () => {
  it('refuses a host message that is no realtime message as a sequence fault, not as a cheat', async () => {
    const { verifyRealtimeTranscript } = await import('../../ts/realtime/transcript.js');
    const s = honest(1);
    const msgs = [
      { from: 'guest' as const, msg: JOIN },
      { from: 'host' as const, msg: s[0]!.msg },
      { from: 'host' as const, msg: { action: 'chat', text: 'hi' } },
    ];
    expect(verifyRealtimeTranscript(c, msgs)).toMatchObject({ ok: false, index: 2, offender: 'host', fault: { code: 'sequence' } });
    expect(verifyRealtimeTranscript(c, msgs.slice(0, 2))).toEqual({ ok: true, ticks: 1, outcome: 'none', rejected: undefined });
    expect(
      verifyRealtimeTranscript(c, [
        { from: 'guest', msg: JOIN },
        { from: 'host', msg: { action: 'rt_reject', reason: 'match_config_mismatch' } },
      ]),
    ).toMatchObject({ ok: true, ticks: 0, rejected: 'match_config_mismatch' });
  });
});
