// The realtime mode's host and guest played against each other by a small loop that hands each one's
// effects to the other on a virtual clock (no driver, no transport), then the offline checks of what
// they said: the whole transcript, and the proof a guest writes when the host cheats.
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import type { Message, RealtimeHooks, Role } from '../../ts/hooks/types.js';
import { ModeAbort, type ModeContext, type ModeEffect, type ModeInput } from '../../ts/engine/mode.js';
import { realtimeMode, TICK_TIMER } from '../../ts/engine/modes/realtime.js';
import { FlowReplay } from '../../ts/engine/flow.js';
import { checkRealtimeProof, realtimeMessagesOfLines, verifyRealtimeTranscript } from '../../ts/realtime/transcript.js';
import { commandHash, makeFrame, type RtFrame } from '../../ts/realtime/wire.js';
import { counterHooks, SPEC } from './fixture.js';

type End = Extract<ModeEffect, { kind: 'end' }>;
/** What a cheating host sends in place of a message (undefined: nothing). */
type Tamper = (msg: Message) => Message | undefined;

interface Played {
  ends: Partial<Record<Role, End>>;
  events: Record<Role, { name: string; data: Record<string, unknown> }[]>;
  /** Every line in the order the guest sent or accepted it. */
  guestOrder: string[];
  /** When each host tick timer was set to fire. */
  timers: number[];
  sent: Record<Role, Message[]>;
}

async function play(
  o: { hooks?: Partial<Record<Role, RealtimeHooks>>; options?: Partial<Record<Role, Record<string, unknown>>>; tamper?: Tamper; backend?: string } = {},
): Promise<Played> {
  const crypto = getCrypto(o.backend ?? 'js');
  let now = 10_000;
  const order: Record<Role, string[]> = { host: [], guest: [] };
  const lines: Record<Role, Record<Role, string[]>> = { host: { host: [], guest: [] }, guest: { host: [], guest: [] } };
  const ctx = (role: Role): ModeContext<'authoritative_realtime'> => {
    const hooks = o.hooks?.[role] ?? counterHooks(role);
    return {
      role,
      spec: SPEC,
      specText: JSON.stringify(SPEC),
      protocolId: 'p',
      sid: 's',
      hostKey: 'h',
      guestKey: 'g',
      key: undefined as never,
      crypto,
      options: o.options?.[role] ?? {},
      controlMode: 'autonomous',
      decision: null,
      hooks,
      async hook(name, ...args) {
        const f = (hooks as unknown as Record<string, ((...a: unknown[]) => unknown) | undefined>)[name];
        if (!f) return undefined;
        try {
          return await f(...args);
        } catch (e) {
          throw new ModeAbort('hook_error', 'hooks', `${name} threw: ${(e as Error).message}`);
        }
      },
      now: () => now,
      randomBytes: (n) => new Uint8Array(n),
      wire: { lines: lines[role], order: order[role], profile: 'signed' },
      inputs: { rulesetHash: 'c'.repeat(64) },
    };
  };
  const modes = { host: realtimeMode.create(ctx('host')), guest: realtimeMode.create(ctx('guest')) };
  const flow = new FlowReplay(crypto, SPEC);
  const out: Played = { ends: {}, events: { host: [], guest: [] }, guestOrder: order.guest, timers: [], sent: { host: [], guest: [] } };
  const inbox: { to: Role; msg: Message; line: string }[] = [];
  let timer: number | undefined;
  const apply = (role: Role, effects: ModeEffect[]) => {
    for (const e of effects) {
      if (e.kind === 'send') {
        const msg = role === 'host' && o.tamper ? o.tamper(e.msg) : e.msg;
        if (!msg) continue;
        const line = JSON.stringify({ v: 2, from: role, msg });
        // What the core does: each message passes the realtime sequence before it leaves.
        const step = flow.next(role, msg);
        if (!step.ok && !(role === 'guest' && out.ends.host)) throw new Error(`flow: ${step.reason}`);
        out.sent[role].push(msg);
        order[role].push(line);
        lines[role][role].push(line);
        inbox.push({ to: role === 'host' ? 'guest' : 'host', msg, line });
      } else if (e.kind === 'timer') {
        expect(e.id).toBe(TICK_TIMER);
        timer = e.at;
        out.timers.push(e.at);
      } else if (e.kind === 'event') out.events[role].push({ name: e.name, data: e.data });
      else if (e.kind === 'end') out.ends[role] = e;
    }
  };
  const feed = async (role: Role, input: ModeInput) => {
    if (out.ends[role]) return; // a side that has ended drains what still arrives
    try {
      apply(role, await modes[role].step(input));
    } catch (e) {
      if (!(e instanceof ModeAbort)) throw e;
      out.ends[role] = { kind: 'end', reason: e.reason, detail: e.message };
    }
  };
  await feed('host', { kind: 'start' });
  await feed('guest', { kind: 'start' });
  for (let guard = 0; guard < 10_000 && !(out.ends.host && out.ends.guest); guard++) {
    const next = inbox.shift();
    if (next) {
      if (!out.ends[next.to]) {
        order[next.to].push(next.line);
        lines[next.to][next.to === 'host' ? 'guest' : 'host'].push(next.line);
      }
      await feed(next.to, { kind: 'message', from: next.to === 'host' ? 'guest' : 'host', msg: next.msg, line: next.line });
      continue;
    }
    if (timer === undefined || out.ends.host) break;
    now = Math.max(now, timer);
    timer = undefined;
    await feed('host', { kind: 'timer', id: TICK_TIMER });
  }
  // The sequence is whole exactly when the guest saw the match end.
  if (out.ends.guest?.reason === 'completed') expect(flow.complete).toBe(true);
  return out;
}

const frames = (p: Played) => p.sent.host.filter((m) => m.action === 'rt_frame').map((m) => m['frame'] as RtFrame);

describe.each(['wasm', 'js'])('realtime mode against itself (%s)', (backend) => {
  it("plays a whole match: a tick every 50 ms, the guest's commands applied, both complete on the same frame", async () => {
    const p = await play({ backend });
    expect(p.ends.host?.reason).toBe('completed');
    expect(p.ends.guest?.reason).toBe('completed');
    const fs = frames(p);
    // The guest reaches 8 first: its +1 lands from tick 2 on (tick 0's command targets tick 2), so at tick 9.
    expect(fs.at(-1)).toMatchObject({ tick: 9, outcome: 'guest' });
    expect(fs.at(-1)!.state).toMatchObject({ guest: 8, host: 16 });
    expect(p.timers.slice(0, 3)).toEqual([10_050, 10_100, 10_150]);
    expect(fs.map((f) => f.host_time_ns)).toEqual(fs.map((f) => f.tick * 50_000_000));
    const acks = p.sent.host.filter((m) => m.action === 'rt_command_ack');
    expect(acks.length).toBeGreaterThanOrEqual(9);
    expect(acks.every((a) => a['status'] === 'accepted')).toBe(true);
    expect(p.events.host.map((e) => e.name)).toEqual(['realtime_started', 'realtime_ended']);
    expect(p.events.guest.at(-1)).toEqual({ name: 'realtime_ended', data: { role: 'guest', tick: 9, outcome: 'guest' } });
    // The offline check over the guest's view of the session agrees.
    expect(verifyRealtimeTranscript(getCrypto(backend), realtimeMessagesOfLines(p.guestOrder))).toEqual({
      ok: true,
      ticks: 10,
      outcome: 'guest',
      rejected: undefined,
    });
  });

  it('ends both sides realtime_rejected when the options differ', async () => {
    const p = await play({ backend, options: { guest: { arena: 'other' } } });
    expect(p.sent.host).toEqual([{ action: 'rt_reject', reason: 'match_config_mismatch' }]);
    expect(p.ends.host?.reason).toBe('realtime_rejected');
    expect(p.ends.guest).toMatchObject({ reason: 'realtime_rejected', detail: 'the host refused the join: match_config_mismatch' });
  });
});

describe('realtime mode, refusals and failures', () => {
  it("acks a command the host's rules refuse as rejected, emits realtime_command_rejected, and plays on without it", async () => {
    // The guest's own rules let {add: 9} through; the host's refuse it.
    const lax = { ...counterHooks('guest', { guestAdd: 9 }), proto_realtime_validate_commands: (_s: Role, c: unknown[]) => c };
    const p = await play({ hooks: { guest: lax } });
    const acks = p.sent.host.filter((m) => m.action === 'rt_command_ack');
    expect(acks.length).toBeGreaterThan(0);
    expect(acks.every((a) => a['status'] === 'rejected' && a['reason'] === 'bad add')).toBe(true);
    expect(p.events.host.filter((e) => e.name === 'realtime_command_rejected')[0]).toEqual({ name: 'realtime_command_rejected', data: { reason: 'bad add' } });
    expect(frames(p).at(-1)).toMatchObject({ tick: 12, outcome: 'draw', state: { guest: 0 } });
    expect([p.ends.host?.reason, p.ends.guest?.reason]).toEqual(['completed', 'completed']);
  });

  it('ends the host with hook_error when its step hook fails, and sends no frame for that tick', async () => {
    const broken = { ...counterHooks('host'), proto_realtime_step: () => ({ state: 'not an object' }) } as unknown as RealtimeHooks;
    const p = await play({ hooks: { host: broken } });
    expect(p.ends.host).toMatchObject({ reason: 'hook_error', detail: 'proto_realtime_step: proto_realtime_step must return an object containing state' });
    expect(frames(p)).toEqual([]);
    expect(p.ends.guest).toBeUndefined();
  });
});

/** A host that drops the guest's command at tick 4 from its frame and remakes every later hash. */
function dropAtTick4(): Tamper {
  let prev: RtFrame | undefined;
  return (msg) => {
    if (msg.action !== 'rt_frame' && msg.action !== 'rt_ready') return msg;
    let f = msg['frame'] as RtFrame;
    if (f.tick === 4 || (prev && f.prev_chain_hash !== prev.chain_hash)) {
      const crypto = getCrypto('js');
      const ac =
        f.tick === 4
          ? {
              ...f.applied_commands,
              guest: { side: 'guest' as const, seq: null, target_tick: 4, commands: [], command_hash: commandHash(crypto, null, 4, []) },
            }
          : f.applied_commands;
      f = makeFrame(crypto, { tick: f.tick, state: f.state, previous: prev, applied: ac, events: f.events, outcome: f.outcome, hostTimeNs: f.host_time_ns });
    }
    prev = f;
    return { ...msg, frame: f };
  };
}

describe('a cheating host', () => {
  it('is caught at the tick it drops an acked command: the guest ends with a proof that checks offline', async () => {
    const p = await play({ tamper: dropAtTick4() });
    const end = p.ends.guest!;
    expect(end).toMatchObject({
      reason: 'realtime_integrity_failed',
      proof: { kind: 'realtime_integrity_failed', offender: 'host', detail: { code: 'acked_command_dropped', tick: 4, last_valid_tick: 3 } },
    });
    expect(p.events.guest.map((e) => e.name)).toContain('realtime_integrity_failed');
    const evidence = end.proof!.frames as string[];
    expect(evidence).toEqual(p.guestOrder);
    expect(checkRealtimeProof(getCrypto('js'), evidence, end.proof!.detail)).toMatchObject({ proven: true, code: 'acked_command_dropped' });
    // The host plays on, unaware; the guest sent nothing after the bad frame.
    expect(p.sent.guest.filter((m) => m.action === 'rt_command').length).toBe(4);
  });

  it('is not proven by tampered evidence', async () => {
    const c = getCrypto('js');
    const p = await play({ tamper: dropAtTick4() });
    const evidence = p.ends.guest!.proof!.frames as string[];
    // Without the ack that the frame broke, the frame is honest as far as the evidence shows.
    const noAck = evidence.filter((l) => !(l.includes('"rt_command_ack"') && l.includes('"target_tick":4')));
    expect(noAck.length).toBe(evidence.length - 1);
    expect(checkRealtimeProof(c, noAck)).toMatchObject({ proven: false });
    // The proof's claim must be the fault found.
    expect(checkRealtimeProof(c, evidence, { code: 'frame_tick_gap' })).toMatchObject({ proven: false });
    // A line that is not a frame, or an honest session, proves nothing.
    expect(checkRealtimeProof(c, [...evidence.slice(0, 2), '{"from":"host"}'])).toMatchObject({ proven: false });
    const honest = await play();
    expect(checkRealtimeProof(c, honest.guestOrder)).toMatchObject({ proven: false, reason: expect.stringMatching(/checks out/) });
    // An honest transcript with one frame's state edited fails offline at that frame.
    const edited = honest.guestOrder.map((l) =>
      l.includes('"rt_frame"') && l.includes('"tick":5,') ? l.replace(/"state":\{"host":(\d+),"guest":\d+/, '"state":{"host":$1,"guest":77') : l,
    );
    expect(edited).not.toEqual(honest.guestOrder);
    const v = verifyRealtimeTranscript(c, realtimeMessagesOfLines(edited));
    expect(v).toMatchObject({ ok: false, offender: 'host', fault: { code: 'frame_state_hash' } });
  });

  it('that skips a tick is caught as a discontinuity, and one that acks what was never sent as an invalid ack', async () => {
    const skip = await play({ tamper: (m) => (m.action === 'rt_frame' && (m['frame'] as RtFrame).tick === 3 ? undefined : m) });
    expect(skip.ends.guest).toMatchObject({
      reason: 'realtime_integrity_failed',
      detail: 'real-time frame tick discontinuity: expected 3, got 4',
      proof: { detail: { code: 'frame_tick_gap', last_valid_tick: 2 } },
    });
    expect(checkRealtimeProof(getCrypto('js'), skip.ends.guest!.proof!.frames as string[])).toMatchObject({ proven: true, code: 'frame_tick_gap' });
    const bogus = await play({
      tamper: (m) =>
        m.action === 'rt_frame' && (m['frame'] as RtFrame).tick === 3
          ? { action: 'rt_command_ack', seq: 999, target_tick: 999, status: 'rejected', received_at_tick: 0, command_hash: '0'.repeat(64), reason: 'x' }
          : m,
    });
    expect(bogus.ends.guest).toMatchObject({ reason: 'realtime_integrity_failed', proof: { detail: { code: 'ack_invalid' } } });
  });
});
