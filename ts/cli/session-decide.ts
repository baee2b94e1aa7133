/** `aigenora session decide`: a decision for a session's window, written for the engine, and the engine's verdict on it. */
import { basename, join } from 'node:path';
import { appendDecision, type DecisionRecord, type Window } from '../engine/decision.js';
import { FileError, readText } from '../files/index.js';
import { MAX_SPEC_BYTES } from '../spec/check.js';
import type { Spec } from '../spec/types.js';
import { UsageError, type Command } from './args.js';
import { allowedText, controlFor } from './decision-control.js';
import { waitForVerdict, watchVerdicts, type Verdict } from './decision-verdict.js';
import { parseObject, readObject, sessionDir } from './session-dir.js';

/** Why `session decide` ended without the engine taking the decision: exit 1, `aigenora session decide: CODE: …`. */
export class DecideError extends Error {
  override readonly name = 'DecideError';
  constructor(
    readonly code: 'NO_WINDOW' | 'DECISION_REFUSED' | 'DECISION_SUPERSEDED' | 'DECISION_WINDOW_CLOSED' | 'DECISION_TIMEOUT',
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

/** How long `session decide` waits for the engine's verdict: it reads decisions every 50 ms, so this is slack for a loaded machine. */
const DECIDE_WAIT_SECONDS = 30;

/** Where the session stands, for a decide that found no window to answer. */
function phaseNote(dir: string): string {
  const s = readObject(join(dir, 'snapshot.json'));
  const phase = s?.['phase'];
  if (phase === undefined) return 'no session has run in this directory yet';
  if (phase === 'in_progress' || phase === 'action_submitted') return 'the session is running and asks for no decision now';
  return `the session has ended (${String(s?.['reason'] ?? phase)})`;
}

/** What the window accepts and until when, from the session's own spec.json, for a refused decision's message. */
function windowNote(dir: string, key: string, value: number): string {
  const w = readObject(join(dir, 'decision', 'state.json')) as Partial<Window> | undefined;
  if (w?.match_key !== key || w.match_value !== value || (w.expects !== 'value' && w.expects !== 'message')) return `the window ${key} ${value} is closed`;
  let spec: Spec | undefined;
  try {
    spec = parseObject(readText(join(dir, 'spec.json'), { maxBytes: MAX_SPEC_BYTES })) as Spec | undefined;
  } catch (e) {
    if (!(e instanceof FileError)) throw e;
  }
  const role = readObject(join(dir, 'snapshot.json'))?.['role'];
  const allowed = allowedText(controlFor(spec, typeof role === 'string' ? role : basename(dir), { expects: w.expects, match_key: key }));
  const until = w.deadline_at ?? w.release_at;
  return `allowed: ${allowed}; the window ${key} ${value} stays open${until ? ` until ${until}` : ''}`;
}

export const sessionDecide: Command = {
  name: 'decide',
  usage:
    'aigenora session decide <SESSION_DIR> (--value V | --message JSON) [--match-key K --match-value N] [--origin NAME] [--timeout-seconds N] [--no-wait] [--json]',
  help: `Appends a decision to SESSION_DIR/decision/decisions.jsonl for the engine to consume (hybrid and human
control modes), then waits for the engine's verdict. Without --match-key/--match-value it answers the window
open now (decision/state.json; the running host or join prints "decision awaited: …" with the command when
one opens). simultaneous_round windows take --value (a round's value, e.g. rock); session_loop and free
windows take --message, the whole next message.
Prints "accepted" once the engine has taken the decision. A decision it refuses (local_decision_rejected)
ends with DECISION_REFUSED, the engine's reason and what the window allows, and the window stays open for
another; a decision another one for the same window was preferred to ends with DECISION_SUPERSEDED; a
window that closed, or a session that ended, before the engine read it with DECISION_WINDOW_CLOSED; no
verdict within --timeout-seconds (default ${DECIDE_WAIT_SECONDS}) with DECISION_TIMEOUT (the decision stays
written and may still be taken).
--no-wait only writes the decision. Exit 0 when accepted (or written, with --no-wait), 1 when refused, not
taken or no window is open (NO_WINDOW), 2 for usage errors.`,
  flags: {
    value: 'string',
    message: 'string',
    'match-key': 'string',
    'match-value': 'string',
    origin: 'string',
    'timeout-seconds': 'string',
    'no-wait': 'boolean',
    json: 'boolean',
  },
  async run(args, out) {
    if (args.positional.length !== 1) throw new UsageError('expected a session directory');
    const dir = sessionDir(args.positional[0]!);
    const wait = args.flags['no-wait'] !== true;
    const timeoutSeconds = verdictTimeout(args.flags, wait);
    const { key, value, windowWasOpen } = decisionTarget(dir, args.flags);
    const rec = decisionRecord(args.flags, key, value);
    const id = rec._meta!.decision_id!;
    // Followed from where the engine's files end now: whatever it writes about this decision comes later.
    const watch = watchVerdicts(dir);
    appendDecision(dir, rec);
    if (!wait) {
      if (args.flags['json']) out.json(rec);
      else out.line(`decision ${id} for ${key} ${value} written`);
      return 0;
    }
    const v = await waitForVerdict(dir, watch, { decision_id: id, match_key: key, match_value: value, windowWasOpen, timeoutMs: timeoutSeconds * 1000 });
    if (v.kind === 'accepted') {
      if (args.flags['json']) out.json({ ...rec, verdict: 'accepted' });
      else out.line(`accepted: decision ${id} for ${key} ${value}`);
      return 0;
    }
    const e = verdictError(v, dir, id, key, value, timeoutSeconds);
    // A script reads the verdict from stdout; the refusal's one line goes to stderr all the same.
    if (args.flags['json']) out.json({ ...rec, verdict: v.kind, code: e.code, reason: e.message.slice(e.code.length + 2) });
    throw e;
  },
};

/** How long to wait for the verdict: --timeout-seconds, which --no-wait does not take. */
function verdictTimeout(flags: Record<string, unknown>, wait: boolean): number {
  let timeoutSeconds = DECIDE_WAIT_SECONDS;
  if (flags['timeout-seconds'] !== undefined) {
    if (!wait) throw new UsageError('--timeout-seconds is how long to wait for the verdict; --no-wait does not wait');
    timeoutSeconds = Number(flags['timeout-seconds']);
    if (typeof flags['timeout-seconds'] !== 'string' || !(timeoutSeconds > 0 && timeoutSeconds <= 86_400))
      throw new UsageError('--timeout-seconds must be a number of seconds, above 0 and at most 86400');
  }
  return timeoutSeconds;
}

/** The window decided: --match-key and --match-value, else the one open now (which must take what is given). */
function decisionTarget(dir: string, flags: Record<string, unknown>): { key: string; value: number; windowWasOpen: boolean } {
  let key = flags['match-key'] as string | undefined;
  let value = flags['match-value'] === undefined ? undefined : Number(flags['match-value']);
  let windowWasOpen = false;
  if (key === undefined || value === undefined) {
    const w = (readObject(join(dir, 'decision', 'state.json')) ?? {}) as Partial<Window>;
    if (typeof w.match_key !== 'string' || typeof w.match_value !== 'number')
      throw new DecideError('NO_WINDOW', `no decision window is open in ${dir}: ${phaseNote(dir)} (--match-key and --match-value decide a window ahead)`);
    key = w.match_key;
    value = w.match_value;
    windowWasOpen = true;
    // The engine would refuse it too, but only after it was written: the wrong flag is the caller's mistake.
    if (w.expects === 'message' && flags['value'] !== undefined)
      throw new UsageError(`the open window ${key} ${value} takes a whole message: give --message JSON, not --value`);
    if (w.expects === 'value' && flags['message'] !== undefined)
      throw new UsageError(`the open window ${key} ${value} takes a value: give --value, not --message`);
  }
  if (!Number.isInteger(value)) throw new UsageError('--match-value must be an integer');
  return { key, value: value!, windowWasOpen };
}

/** The decision as decisions.jsonl holds it: --value (JSON, else the text) or --message (a JSON object). */
function decisionRecord(flags: Record<string, unknown>, key: string, value: number): DecisionRecord {
  const rec: DecisionRecord = {
    match_key: key,
    match_value: value,
    _meta: { decision_id: `cli:${Date.now()}:${Math.random().toString(36).slice(2, 8)}`, origin: (flags['origin'] as string | undefined) ?? 'cli' },
  };
  if (typeof flags['value'] === 'string') {
    const v = flags['value'];
    try {
      rec.value = JSON.parse(v);
    } catch {
      rec.value = v;
    }
  } else if (typeof flags['message'] === 'string') {
    const m = parseObject(flags['message']);
    if (!m) throw new UsageError('--message must be a JSON object');
    rec.message = m;
  } else throw new UsageError('give --value or --message');
  return rec;
}

/** Why the engine did not take the decision. */
function verdictError(v: Exclude<Verdict, { kind: 'accepted' }>, dir: string, id: string, key: string, value: number, timeoutSeconds: number): DecideError {
  return v.kind === 'refused'
    ? new DecideError('DECISION_REFUSED', `${v.reason}; ${windowNote(dir, key, value)}`)
    : v.kind === 'superseded'
      ? new DecideError('DECISION_SUPERSEDED', `another decision for ${key} ${value} was taken instead of ${id}`)
      : v.kind === 'closed'
        ? new DecideError('DECISION_WINDOW_CLOSED', v.why)
        : new DecideError(
            'DECISION_TIMEOUT',
            `no verdict on ${id} for ${key} ${value} within ${timeoutSeconds} s (is the session's host or join still running?); the decision stays in decisions.jsonl`,
          );
}
