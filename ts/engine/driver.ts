/**
 * The session driver, on any platform: it owns the transport, the clock, the decision windows and the
 * abort request, and runs a `SessionCore` (core.ts: chains, checks, flow mode, receipts; no I/O) by
 * feeding it the peer's lines, its timers and local decisions. Where the record goes (files, a page's
 * memory) and where decisions come from are given to it: session.ts wires files for Node.
 */
import type { ControlMode, DecisionConfig, Message, Role } from '../hooks/types.js';
import { systemClock, type Clock } from './clock.js';
import { SessionCore, type CoreEnd, type CoreParams, type EndReason } from './core.js';
import { decisionConfig, type DecisionRecord, type Window } from './decision-window.js';
import type { DecideRequest, Outcome } from './mode.js';
import type { ModeInputs } from './modes/index.js';
import { msSummary } from './latency.js';
import type { TranscriptHeader } from './record.js';
import type { Transport } from './transport.js';

/** Where a session's record goes: every accepted frame, its events, its phase and its end files. */
export interface SessionStore {
  /** Appends a frame's wire line; it is kept when this returns. */
  frame(line: string): void;
  event(type: string, data?: Record<string, unknown>): void;
  snapshot(phase: string, extra?: Record<string, unknown>): void;
  writeJson(name: string, value: unknown): void;
  close(): void;
}

/** Where local decisions come from (hybrid and human control): decision.ts's DecisionBus on Node. */
export interface DecisionSource {
  /** The window open now, or null when none is. */
  publish(w: Window | null): void;
  /** The first acceptable decision for the window before `until` (ms on `clock`) or `signal`, else undefined. */
  wait(
    w: Window,
    until: number,
    accept: (r: DecisionRecord) => string | undefined,
    onReject: (id: string, why: string) => void,
    clock: Clock,
    signal?: AbortSignal,
  ): Promise<{ id: string; rec: DecisionRecord } | undefined>;
}

export interface DriverConfig
  extends
    Pick<
      CoreParams,
      | 'crypto'
      | 'role'
      | 'spec'
      | 'specText'
      | 'protocolId'
      | 'hooks'
      | 'options'
      | 'key'
      | 'hostKey'
      | 'guestKey'
      | 'sid'
      | 'postId'
      | 'nonce'
      | 'stateDir'
      | 'maxFrameBytes'
      | 'wrapMode'
    >,
    Partial<Pick<CoreParams, 'random' | 'controlMode' | 'wire'>>,
    ModeInputs {
  transport: Transport;
  /** Longest wait for the peer's next frame (default: decision.timeout_seconds, else 30 s). */
  timeoutMs?: number;
  /** Overrides, mostly for tests: the hybrid/human hold (timing.min_think_seconds) and the human deadline (decision.timeout_seconds). */
  minThinkMs?: number;
  decisionTimeoutMs?: number;
  store: SessionStore;
  /** Required unless controlMode is autonomous. */
  decisions?: DecisionSource;
  /** Polled every 200 ms: true asks the session to abort (it tells the peer, then ends with local_abort). */
  abortRequested?: () => boolean;
  /** Called for every frame sent or accepted, for display. */
  onMessage?: (from: Role, msg: Message) => void;
  /** Called when a decision window opens (hybrid and human control), for display: a person must be told. */
  onDecisionWindow?: (w: Window) => void;
  /** The clock decision windows and realtime ticks run on (default: the system clock). */
  clock?: Clock;
}

export interface DriverResult {
  completed: boolean;
  reason: EndReason;
  /** Who won a completed session (mode-declared, else the last protocol message's winner). */
  outcome?: Outcome;
  detail?: string;
  sid: string;
  /** The file (in the store) holding the proof when the peer was caught cheating. */
  proofFile?: string;
}

/** The first line of a transcript (record.ts), from the session's identity. */
export function transcriptHeader(
  c: Pick<DriverConfig, 'sid' | 'postId' | 'protocolId' | 'hostKey' | 'guestKey' | 'nonce' | 'role' | 'wire'>,
): TranscriptHeader {
  return {
    _transcript: 1,
    sid: c.sid,
    post_id: c.postId,
    protocol_id: c.protocolId,
    host_key: c.hostKey,
    guest_key: c.guestKey,
    nonce: c.nonce,
    role: c.role,
    ...(c.wire === 'plain' && { wire: 'plain' as const }),
  };
}

export async function driveSession(cfg: DriverConfig): Promise<DriverResult> {
  return new SessionDrive(cfg).run();
}

/** The session's core: what it sends goes to the transport, unless the session was aborted here. */
function sessionCore(cfg: DriverConfig, clock: Clock, controlMode: ControlMode, decision: DecisionConfig | null, aborted: () => boolean): SessionCore {
  const { crypto, role, spec, transport, store: record } = cfg;
  return new SessionCore(
    {
      crypto,
      role,
      spec,
      specText: cfg.specText,
      protocolId: cfg.protocolId,
      hooks: cfg.hooks,
      options: cfg.options,
      key: cfg.key,
      hostKey: cfg.hostKey,
      guestKey: cfg.guestKey,
      sid: cfg.sid,
      postId: cfg.postId,
      nonce: cfg.nonce,
      stateDir: cfg.stateDir,
      ...(cfg.maxFrameBytes !== undefined && { maxFrameBytes: cfg.maxFrameBytes }),
      random: cfg.random ?? Math.random,
      randomBytes: (n) => globalThis.crypto.getRandomValues(new Uint8Array(n)),
      now: () => clock.now(),
      controlMode,
      decision,
      // The config carries the caller's mode inputs (chat, rulesetHash, mpSecrets) at its top level.
      inputs: cfg,
      ...(cfg.wrapMode && { wrapMode: cfg.wrapMode }),
      ...(cfg.wire && { wire: cfg.wire }),
    },
    {
      transmit: (line) => {
        if (aborted()) throw new Error('aborted');
        transport.send(line);
      },
      frame: (line) => record.frame(line),
      event: (name, data) => record.event(name, data),
      snapshot: (phase, data) => record.snapshot(phase, data),
      writeJson: (file, value) => record.writeJson(file, value),
      ...(cfg.onMessage && { onMessage: cfg.onMessage }),
    },
  );
}

/** One session being driven: its settings and core, its decision windows, and a receive carried across them. */
class SessionDrive {
  private readonly clock: Clock;
  private readonly timeoutMs: number;
  private readonly controlMode: ControlMode;
  private readonly decision: DecisionConfig | null;
  private readonly bus: DecisionSource | undefined;
  private readonly minThinkMs: number;
  private readonly decisionTimeoutMs: number;
  private readonly core: SessionCore;
  private windows = 0;
  private localAbort = false;
  /** Ends the open decision window early: the session is ending (a local abort, the peer gone). */
  private windowEnd = new AbortController();
  /** A receive started while a listening window was open and still pending when it closed. */
  private carried: ReturnType<Transport['recv']> | undefined;

  constructor(private readonly cfg: DriverConfig) {
    const spec = cfg.spec;
    this.clock = cfg.clock ?? systemClock;
    this.timeoutMs = cfg.timeoutMs ?? (spec.decision?.timeout_seconds ?? 30) * 1000;
    const controlMode: ControlMode = cfg.controlMode ?? 'hybrid';
    this.controlMode = controlMode;
    const decision = decisionConfig(spec, controlMode);
    this.decision = decision;
    this.bus = controlMode === 'autonomous' ? undefined : cfg.decisions;
    if (controlMode !== 'autonomous' && !this.bus) throw new Error(`control mode ${controlMode} needs a decision source`);
    const timingOn = spec.timing?.mode !== 'none';
    const optSeconds = (k: string) => (typeof cfg.options[k] === 'number' ? (cfg.options[k] as number) : undefined);
    this.minThinkMs = cfg.minThinkMs ?? (timingOn ? (optSeconds('min_think_seconds') ?? spec.timing?.min_think_seconds ?? 0) * 1000 : 0);
    this.decisionTimeoutMs = cfg.decisionTimeoutMs ?? (decision?.timeout_seconds ?? 120) * 1000;
    this.core = sessionCore(cfg, this.clock, controlMode, decision, () => this.localAbort);
  }

  /** Plays the session to its end, then writes the end files and closes the record and the transport. */
  async run(): Promise<DriverResult> {
    const { cfg, core } = this;
    const { role, transport, store: record } = cfg;
    const abortWatch = this.watchAbort();
    record.event('session_started', { role, sid: cfg.sid, protocol_id: cfg.protocolId, mode: core.mode });
    record.snapshot('in_progress', { role, sid: cfg.sid });
    let pending: string[] = [];
    /** How late each timer fired, in ms: a realtime host's tick jitter. */
    const lateness: number[] = [];
    try {
      await core.start();
      await this.loop(lateness);
      pending = await this.linesAfterDisconnect();
    } finally {
      clearInterval(abortWatch);
    }
    if (lateness.length) record.event('timer_lateness', { ...msSummary(lateness) });
    const end = core.finish(pending);
    record.close();
    transport.close();
    return driverResult(end, cfg.sid);
  }

  /** Decisions, timers and the peer's lines, one at a time, until the core ends the session. */
  private async loop(lateness: number[]): Promise<void> {
    const { core, clock, timeoutMs } = this;
    const transport = this.cfg.transport;
    while (!core.ending) {
      if (core.decision) {
        const req = core.decision;
        const d = req.listen ? await this.decideListening(req) : await this.decide(req, true);
        if (core.ending) break;
        if ('timedOut' in d) {
          core.abort('decision_timeout', 'decision', `no decision for ${req.key} ${req.value} within ${this.decisionTimeoutMs} ms`);
          break;
        }
        await core.decided(d.value);
        continue;
      }
      const due = nextTimer(core.timers);
      if (due && due.at <= clock.now()) {
        lateness.push(clock.now() - due.at);
        await core.timer(due.id);
        continue;
      }
      const wait = due ? Math.max(0, due.at - clock.now()) : timeoutMs;
      const r = this.carried ? await this.takeCarried() : await transport.recv(wait);
      if (core.ending) break;
      if (r.line !== null) await core.receive(r.line);
      else if (this.localAbort) break;
      else if (!(r.timedOut && due)) core.transportEnded(r.timedOut, timeoutMs);
      else if (due.at > clock.now()) await clock.sleep(due.at - clock.now());
    }
  }

  /**
   * A peer that aborted while this side was busy is seen as a closed connection; its _abort frame may
   * still be waiting to be read, behind frames sent before it, and is the better reason.
   */
  private async linesAfterDisconnect(): Promise<string[]> {
    const pending: string[] = [];
    const transport = this.cfg.transport;
    if (this.core.ending?.reason === 'peer_disconnected') {
      try {
        for (let r = await transport.recv(0); r.line !== null && pending.length < MAX_LAST_LINES; r = await transport.recv(0)) pending.push(r.line);
      } catch {
        // what was read is all there is
      }
    }
    return pending;
  }

  /** Polls `abortRequested` every 200 ms: a local abort tells the peer, then closes the transport. */
  private watchAbort(): ReturnType<typeof setInterval> {
    const { cfg, core } = this;
    const transport = cfg.transport;
    const abortWatch = setInterval(() => {
      if (!this.localAbort && cfg.abortRequested?.()) {
        // Tell the peer first, then close, which also wakes a pending receive.
        const line = core.localAbort();
        this.localAbort = true;
        this.windowEnd.abort();
        try {
          if (line !== undefined) transport.send(line);
        } catch {
          // the peer is gone already
        }
        transport.close();
      }
    }, 200);
    abortWatch.unref?.();
    return abortWatch;
  }

  /**
   * A decision window for one of this side's moves (hybrid and human control). The hooks' move is the
   * default; a local decision replaces it. Hybrid waits min_think and then plays the default; human
   * waits until the decision deadline, then applies timeout_action.
   */
  private async decide(req: DecideRequest, watchPeer = false): Promise<{ value: unknown } | { timedOut: true }> {
    const { cfg, bus, decision, clock, core, minThinkMs, decisionTimeoutMs } = this;
    const { role, transport, store: record } = cfg;
    if (!bus || !decision) return { value: req.fallback };
    const now = clock.now();
    const human = this.controlMode === 'human';
    const w: Window = {
      window_id: `${req.key}:${req.value}:${++this.windows}`,
      match_key: req.key,
      match_value: req.value,
      expects: req.expects,
      opened_at: new Date(now).toISOString(),
      release_at: new Date(now + minThinkMs).toISOString(),
      deadline_at: human ? new Date(now + decisionTimeoutMs).toISOString() : null,
    };
    bus.publish(w);
    record.event('local_decision_window_started', { ...w });
    try {
      cfg.onDecisionWindow?.(w);
    } catch {
      // A prompt that cannot be shown is no reason to end the session: the window is in state.json.
    }
    record.snapshot('action_submitted', {
      role,
      sid: cfg.sid,
      // NOTES A10: the window as ISO times and as Unix epoch seconds.
      timing: {
        match_key: req.key,
        match_value: req.value,
        release_at: w.release_at,
        deadline_at: w.deadline_at,
        release_at_epoch: (now + minThinkMs) / 1000,
        deadline_at_epoch: human ? (now + decisionTimeoutMs) / 1000 : null,
        phase: 'deciding',
      },
    });
    const end = (this.windowEnd = new AbortController());
    // The peer waits for this move, so its leaving means the session cannot go on: no use waiting out
    // the deadline. A listening window reads the peer's end itself, after the lines sent before it.
    let peerLeft = false;
    if (watchPeer)
      void transport.whenEnded?.().then(() => {
        peerLeft = true;
        end.abort();
      });
    const got = await bus.wait(
      w,
      human ? now + decisionTimeoutMs : now + minThinkMs,
      req.check,
      (id, why) => record.event('local_decision_rejected', { decision_id: id, reason: why }),
      clock,
      end.signal,
    );
    bus.publish(null);
    if (end.signal.aborted) {
      if (peerLeft && !this.localAbort && !core.ending) core.transportEnded(false, this.timeoutMs);
      return { value: req.fallback };
    }
    record.snapshot('in_progress', { role, sid: cfg.sid });
    if (got) {
      // A decision is held until the window's release time (timing.min_think_seconds).
      const hold = now + minThinkMs - clock.now();
      if (hold > 0) await clock.sleep(hold);
      record.event('local_decision_consumed', { match_key: req.key, match_value: req.value, decision_id: got.id });
      return { value: req.take(got.rec) };
    }
    if (human && decision.timeout_action === 'abort') return { timedOut: true };
    record.event('local_decision_fallback', { match_key: req.key, match_value: req.value });
    return { value: req.fallback };
  }

  /**
   * A decision window during which the peer's frames are still taken (DecideRequest.listen): each is
   * checked and recorded by the core as it comes, and queued for the mode. The peer leaving ends the
   * window.
   */
  private async decideListening(req: DecideRequest): Promise<{ value: unknown } | { timedOut: true }> {
    const { core, timeoutMs } = this;
    const transport = this.cfg.transport;
    const decided = this.decide(req);
    const done = decided.then(() => 'decided' as const);
    for (;;) {
      const pending = (this.carried ??= transport.recv(timeoutMs));
      if ((await Promise.race([done, pending.then(() => 'line' as const)])) === 'decided') return decided;
      const r = await pending;
      this.carried = undefined;
      if (r.line !== null) await core.receive(r.line);
      else if (!r.timedOut) core.transportEnded(false, timeoutMs);
      if (core.ending || this.localAbort) {
        this.windowEnd.abort();
        return decided;
      }
    }
  }

  private async takeCarried(): ReturnType<Transport['recv']> {
    const r = await this.carried!;
    this.carried = undefined;
    // A receive that timed out while the person was deciding says nothing about the peer: try again.
    return r.line === null && r.timedOut ? await this.cfg.transport.recv(this.timeoutMs) : r;
  }
}

/** A session's result from the core's end: the one shape every driver (network, memory, virtual clock) returns. */
export function driverResult(end: CoreEnd & { proofFile?: string }, sid: string): DriverResult {
  return {
    completed: end.completed,
    reason: end.reason,
    ...(end.outcome && { outcome: end.outcome }),
    ...(end.detail !== undefined && !end.completed && { detail: end.detail }),
    sid,
    ...(end.proofFile && { proofFile: end.proofFile }),
  };
}

/** The lines read after the peer left, looking for its `_abort`: a peer that floods before leaving gets no more. */
const MAX_LAST_LINES = 64;

function nextTimer(timers: ReadonlyMap<string, number>): { id: string; at: number } | undefined {
  let best: { id: string; at: number } | undefined;
  for (const [id, at] of timers) if (!best || at < best.at) best = { id, at };
  return best;
}
