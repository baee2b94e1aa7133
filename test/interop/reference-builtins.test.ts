/**
 * Every two-party built-in of the reference, played between the reference's own agent (its Python CLI,
 * ../shared/reference/aigenora-src) and ours, in both directions, over iroh through our registry server:
 * the reference hosts and ours joins by post id, then ours hosts and the reference joins.
 *
 * For each game: both sides complete, ours verifies its receipt offline (`aigenora receipt verify`), and
 * the server's session record is closed and settled: each side reported its own outcome to the server
 * (the reference through its own code), the two agree, and they equal the winner ours printed. Human chat
 * has no winner; tank battle is refused by design (the reference's ruleset hash covers its own hooks
 * file, so no other implementation can match it) and must end with the typed reason on our side.
 *
 * The list of games is the reference's own index.json, so a built-in added there fails here until it is
 * played. The file prints a table (protocol × direction × completed/same/settled/time) at its end.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { need, needShared, sharedPath } from '../shared/require.js';
import { cli } from '../shared/cli.js';
import { tempDir } from '../shared/tmp.js';
import { findReference, lastJson, namespaceMissing, openWorld, postIdOf, publicKeyOf, until, type Reference, type World } from './harness.js';
import { ourHost, ourJoin, refHost, refJoin } from './peer-commands.js';

const PORT = 18789;
const STEP_MS = 180_000;

/** Short options per game, so that each one takes seconds; the reference host posts them, ours plays what the post names. */
const SHORT: Record<string, Record<string, unknown> | 'standard'> = {
  'rps-v1': { best_of: 1, termination: 'first_to_win', round_delay_seconds: 0 },
  'coin-flip-v1': { best_of: 1 },
  'guess-number-v1': { range_min: 1, range_max: 50, max_attempts: 10 },
  'weak-wins-all': { total_points: 50 },
  'human-chat-v1': {},
  'gomoku-v1': { board_size: 9 },
  'connect4-v1': { cols: 7, rows: 6 },
  'reversi-v1': { board_size: 6 },
  // The reference's standard profile, whose options carry the whole balance table: the invitation names the balance it plays.
  'hero-duel-v1': 'standard',
  'crazy-eights-v1': { hand_size: 3 },
  'briscola-v1': {},
  'tank-battle-v1': { team_size: 3, max_ticks: 900, pickup_mode: 'none', friendly_fire: false },
};
/** Games that end without a winner to report. */
const NO_OUTCOME = ['human-chat-v1'];
/** Refused by design: the reference's ruleset hash covers its own hooks file. */
const RULESET_REFUSED = ['tank-battle-v1'];

interface Builtin {
  alias: string;
  protocolId: string;
  path: string;
  standard: Record<string, unknown>;
}

const INDEX = 'reference/aigenora-src/src/aigenora/protocols';

function referenceTwoParty(): Builtin[] {
  const dir = sharedPath(INDEX);
  const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as {
    protocols: Array<{ alias: string; protocol_id: string; path: string; profiles?: Record<string, { options?: Record<string, unknown> }> }>;
  };
  return index.protocols
    .filter((p) => (JSON.parse(readFileSync(join(dir, p.path, 'spec.json'), 'utf8')) as { flow?: { mode?: string } }).flow?.mode !== 'authoritative_group')
    .map((p) => ({ alias: p.alias, protocolId: p.protocol_id, path: p.path, standard: p.profiles?.['standard']?.options ?? {} }));
}

const ref = findReference();
const missing = 'missing' in ref ? ref.missing : namespaceMissing();
const ready = need(`${missing} (for the built-ins against the reference)`, missing === undefined, {
  how: 'scripts/test.sh sets it up: scripts/lib/reference-peer.sh makes the reference peer; the namespace needs root, unshare, nsenter and ip',
});
const games = ready && needShared(`${INDEX}/index.json`, "the reference's protocol index") ? referenceTwoParty() : undefined;

describe.skipIf(!ready || !games)(`every two-party built-in against the reference${ready ? '' : ` (SKIPPED: missing ${missing})`}`, () =>
  scenarios(ref as Reference, games ?? []),
);

interface Row {
  alias: string;
  direction: string;
  completed: string;
  same: string;
  settled: string;
  seconds: string;
}

function scenarios(reference: Reference, builtins: Builtin[]): void {
  let w: World;
  let refA: string;
  let refB: string;
  let mine: string;
  const table: Row[] = [];
  let firstOfTest = 0;

  beforeAll(async () => {
    const root = tempDir('interop-builtins');
    [refA, refB, mine] = [join(root, 'ref-a'), join(root, 'ref-b'), join(root, 'ours')];
    w = await openWorld(reference, root, PORT, STEP_MS);
    w.initRef(refA);
    w.initRef(refB);
    w.initOurs(mine);
    // Results count only between registered agents (NOTES A7), as on the public server.
    for (const [d, nick] of [
      [refA, 'ref-a'],
      [refB, 'ref-b'],
    ] as const) {
      const r = await w.runRef(`reference register ${nick}`, d, ['register', '--server', w.server, '--nickname', nick]);
      if (r.code !== 0) throw new Error(`reference register failed: ${r.out}`);
    }
    const r = await w.runOurs('our register', ['register', '--server', w.server, '--nickname', 'ours', '--data-dir', mine]);
    if (r.code !== 0) throw new Error(`our register failed: ${r.out}`);
  }, STEP_MS);

  beforeEach(() => {
    firstOfTest = w.ns.procs.length;
  });
  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') console.error(`interop processes:\n${w.ns.dump(firstOfTest)}`);
  });
  afterAll(async () => {
    await w?.close();
    const cols: (keyof Row)[] = ['alias', 'direction', 'completed', 'same', 'settled', 'seconds'];
    console.log(
      ['| ' + cols.join(' | ') + ' |', '|' + cols.map(() => '---').join('|') + '|', ...table.map((r) => '| ' + cols.map((c) => r[c]).join(' | ') + ' |')].join(
        '\n',
      ),
    );
  });

  it("plays the reference's twelve two-party built-ins, each with short options", () => {
    expect(builtins.map((b) => b.alias).sort()).toEqual(Object.keys(SHORT).sort());
  });

  /** The reference's complaint when one of its requests failed (it still exits 0 for these). */
  const refClean = (out: string) => expect(out).not.toMatch(/Traceback|warning: failed to|failed: HTTP/);

  /** The server's record of a session, read through the reference's `session get` (a signed request). */
  const sessionRecord = async (sid: string) => {
    const r = await w.runRef('reference session get', refB, ['session', 'get', sid, '--json', '--server', w.server]);
    expect(r.code, r.out).toBe(0);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  };

  /** What a finished game must leave behind, whichever side hosted. */
  async function settledAs(b: Builtin, ours: Record<string, unknown>, hostKey: string, guestKey: string, row: Row): Promise<void> {
    const sid = ours['session_id'] as string;
    const s = await sessionRecord(sid);
    expect([s['host_public_key'], s['guest_public_key'], s['protocol_id'], s['status']], JSON.stringify(s)).toEqual([
      hostKey,
      guestKey,
      b.protocolId,
      'closed',
    ]);
    const winner = ours['winner'];
    if (NO_OUTCOME.includes(b.alias)) {
      expect([winner, s['host_result'], s['guest_result']], JSON.stringify(s)).toEqual([undefined, null, null]);
      row.same = 'no outcome';
      row.settled = 'closed';
    } else if (winner === undefined && s['host_result'] === null && s['guest_result'] === null) {
      // A tie the protocol writes as winner "none" (Reversi, Gomoku): the reference declares no result
      // for it (proto/engine.py _winner_of takes host, guest or draw only) and neither do we. A result
      // that either side declared would be on the server and fail the branch below.
      expect(s['result'], JSON.stringify(s)).toBeNull();
      row.same = 'tie, no result';
      row.settled = 'closed';
    } else {
      expect(['host', 'guest', 'draw'], JSON.stringify(ours)).toContain(winner);
      // Each side's own report: the reference's came from its code, ours from ours.
      expect([s['host_result'], s['guest_result']], JSON.stringify(s)).toEqual([winner, winner]);
      row.same = String(winner);
      expect(s['result'], JSON.stringify(s)).toBe(winner);
      row.settled = 'yes';
    }
    // Offline: no network needed, so in this process.
    const v = await cli(['receipt', 'verify', ours['dir'] as string]);
    expect(v.status, v.stdout + v.stderr).toBe(0);
  }

  for (const b of builtins) {
    const short = SHORT[b.alias] ?? {};
    const options = JSON.stringify(short === 'standard' ? b.standard : short);

    it(
      `${b.alias}: the reference hosts, ours joins`,
      async () => {
        const row: Row = { alias: b.alias, direction: 'reference hosts', completed: 'no', same: '-', settled: '-', seconds: '' };
        table.push(row);
        const t0 = Date.now();
        const host = w.startRef(`reference host ${b.alias}`, refA, refHost(w.server, join(refA, 'protocols', b.path), ['--options', options]));
        await until(() => postIdOf(host) !== undefined || host.child.exitCode !== null, 'the reference host to post its invitation', 60_000);
        const postId = postIdOf(host);
        expect(postId, host.output()).toBeDefined();
        const joined = await w.runOurs(`our join ${b.alias}`, ourJoin(w.server, postId!, mine));
        const ours = lastJson(joined.stdout);
        if (RULESET_REFUSED.includes(b.alias)) {
          host.child.kill('SIGTERM');
          row.seconds = ((Date.now() - t0) / 1000).toFixed(1);
          expect(joined.code, joined.out).toBe(1);
          expect([ours?.['completed'], ours?.['reason']], joined.out).toEqual([false, 'realtime_rejected']);
          expect(String(ours?.['detail']), joined.out).toMatch(/^the host refused the join: ruleset_hash_mismatch \(.*hooks\.py.*\)$/);
          row.completed = 'refused: ruleset_hash_mismatch (typed)';
          return;
        }
        expect(joined.code, joined.out).toBe(0);
        expect(await host.exited, host.output()).toBe(0);
        row.seconds = ((Date.now() - t0) / 1000).toFixed(1);
        refClean(host.output());
        expect(ours?.['completed'], joined.out).toBe(true);
        row.completed = 'yes';
        await settledAs(b, ours!, publicKeyOf(refA), publicKeyOf(mine), row);
      },
      STEP_MS * 2,
    );

    it(
      `${b.alias}: ours hosts, the reference joins`,
      async () => {
        const row: Row = { alias: b.alias, direction: 'ours hosts', completed: 'no', same: '-', settled: '-', seconds: '' };
        table.push(row);
        const t0 = Date.now();
        const host = w.startOurs(`our host ${b.alias}`, ourHost(w.server, b.alias, mine, ['--options', options]));
        await until(() => postIdOf(host) !== undefined || host.child.exitCode !== null, 'our host to post its invitation', 60_000);
        const postId = postIdOf(host);
        expect(postId, host.output()).toBeDefined();
        const joined = await w.runRef(`reference join ${b.alias}`, refB, refJoin(w.server, postId!));
        if (RULESET_REFUSED.includes(b.alias)) {
          // Our host answers the reference's join with the typed refusal and ends.
          expect(await host.exited, host.output()).toBe(1);
          row.seconds = ((Date.now() - t0) / 1000).toFixed(1);
          // Ours says why in one line; the reference's agent exits 0 after `done` without saying why.
          const ours = lastJson(host.stdout());
          expect([ours?.['completed'], ours?.['reason']], host.output()).toEqual([false, 'realtime_rejected']);
          expect(String(ours?.['detail'])).toMatch(/^the guest's rt_join was refused: ruleset_hash_mismatch \(.*hooks\.py.*\)$/);
          expect(joined.code, joined.out).toBe(0);
          row.completed = 'refused: ruleset_hash_mismatch (typed)';
          return;
        }
        expect(joined.code, joined.out).toBe(0);
        expect(await host.exited, host.output()).toBe(0);
        row.seconds = ((Date.now() - t0) / 1000).toFixed(1);
        refClean(joined.out);
        const ours = lastJson(host.stdout());
        expect(ours?.['completed'], host.output()).toBe(true);
        row.completed = 'yes';
        await settledAs(b, ours!, publicKeyOf(mine), publicKeyOf(refB), row);
      },
      STEP_MS * 2,
    );
  }
}
