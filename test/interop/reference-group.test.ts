/**
 * Group play with the reference implementation over iroh, through our registry's groups API: its
 * Python CLI and ours lead and join each other's authoritative groups, inside one network namespace
 * with only loopback up (see reference-peer.test.ts for why).
 *
 * Scenarios, each a real game with mixed seats: Community Room and four-seat Texas Hold'em, once led
 * by the reference (a reference member and two of ours join) and once led by ours (two reference
 * members and one of ours join). Every member must end completed with the same outcome and the same
 * final checkpoint; ours must pass our own offline check of their transcripts (verifyGroupSessionAt),
 * and the server's record of the group must be closed with exactly these members.
 *
 * Then two failovers arbitrated by the registry (claim-leader): our leader is killed mid-game, a member
 * claims epoch 1 once the lease is over and leads from its own checkpoint, the rest follow, and our old
 * leader rejoins its own group as a member. Once ours wins the claim (a Hold'em hand, redealt: the
 * protocol's restart_round) and leads a reference member and one of ours; once the reference wins it
 * (a Community Room of reference members only) and leads our returning leader, who closes the room.
 *
 * The reference has no unattended player for a group seat: an agent reads its seat's snapshot
 * (`$STATE/snapshot.json`) and submits actions with `session action` (skill/MULTIPLAYER.md). Here the
 * test is that agent for each reference seat, choosing with the same autoplay our seats use, and
 * submitting each action through the reference's own `session action` command.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { verifyGroupSessionAt } from '../../ts/group/session-dir.js';
import type { GroupAutoplay, GroupMember } from '../../ts/hooks/types.js';
import { autoplay as roomAutoplay } from '../../ts/protocols/community-room/hooks.js';
import { autoplay as holdemAutoplay } from '../../ts/protocols/texas-holdem/hooks.js';
import { tempDir } from '../shared/tmp.js';
import { need } from '../shared/require.js';
import {
  findReference,
  lastJson,
  namespaceMissing,
  openWorld,
  pause,
  publicKeyOf,
  until,
  type Namespace,
  type Proc,
  type Reference,
  type World,
} from './harness.js';

const COMMUNITY_ROOM = '9a8a512873c4ad083b2692c06221b789002ce3fd813da2c8dd71501eb8b054ec';
const HOLDEM = 'ba17afdceb178d206e7f3ba614b29751f36ec749f3039fa471995707f6fd66c7';
// The namespace is private to this file, so a fixed port cannot collide with anything.
const PORT = 18788;
const SERVER = `http://127.0.0.1:${PORT}`;
const STEP_MS = 120_000;
/** One short hand of Hold'em: the smallest stack the spec allows. */
const HOLDEM_OPTIONS = { starting_stack: 100, small_blind: 5, big_blind: 10, max_hands: 1 };

const run = promisify(execFile);

/**
 * The reference's member acknowledges every frame it applies, the last one included, while the
 * reference's leader closes its connections as soon as it has sent that last frame: when the close
 * wins, the member's acknowledgement fails in iroh's `write_all` and the member exits with this
 * traceback. It is a race between two reference processes (reference against reference has it too),
 * not something our seats can cause or prevent.
 */
const ACK_RACE = /in run_group_guest_channel\n\s+await channel\.send\([\s\S]*in write_all\n[\s\S]*iroh\.iroh_ffi\.IrohError\s*$/;

class AckRace extends Error {
  constructor(who: string) {
    super(`${who} exited on the reference's acknowledgement race (its leader closed first)`);
  }
}
const RECORD = new URL('./group-record.ts', import.meta.url).pathname;
const ref = findReference();
const missing = 'missing' in ref ? ref.missing : namespaceMissing();
const ready = need(`${missing} (for the group interop test with the reference)`, missing === undefined, {
  how: 'scripts/test.sh sets it up: scripts/lib/reference-peer.sh makes the reference peer; the namespace needs root, unshare, nsenter and ip',
});

describe.skipIf(!ready)(`group play with the reference over iroh${ready ? '' : ` (SKIPPED: missing ${missing})`}`, () => scenarios(ref as Reference));

function scenarios(reference: Reference): void {
  let ns: Namespace;
  let root: string;
  // Two reference identities and three of ours.
  let refA: string;
  let refB: string;
  let oursA: string;
  let oursB: string;
  let oursC: string;

  let w: World;
  const refEnv = (dataDir: string) => w.refEnv(dataDir);
  const pyArgs = (args: string[]) => ['-m', 'aigenora', ...args];
  const startRef = (name: string, dataDir: string, args: string[]): Proc => w.startRef(name, dataDir, args);
  const startOurs = (name: string, args: string[]): Proc => w.startOurs(name, args);
  const refProtocolDir = (dataDir: string, pid: string) => join(dataDir, 'protocols', pid.slice(0, 8), pid.slice(8));

  beforeAll(async () => {
    root = tempDir('interop-group');
    [refA, refB, oursA, oursB, oursC] = ['ref-a', 'ref-b', 'ours-a', 'ours-b', 'ours-c'].map((d) => join(root, d)) as [string, string, string, string, string];
    // Proof of work at difficulty 1: registration is not what this file tests.
    w = await openWorld(reference, root, PORT, STEP_MS, ['--pow-difficulty', '1']);
    ns = w.ns;
    for (const d of [refA, refB]) w.initRef(d);
    for (const d of [oursA, oursB, oursC]) w.initOurs(d);
    // Every group call is signed by a registered key.
    const regs = await Promise.all([
      ...[refA, refB].map((d, i) => w.runRef(`reference register ${i}`, d, ['register', '--server', SERVER, '--nickname', `ref-${i}`])),
      ...[oursA, oursB, oursC].map((d, i) => w.runOurs(`our register ${i}`, ['register', '--server', SERVER, '--nickname', `ours-${i}`, '--data-dir', d])),
    ]);
    for (const r of regs) if (r.code !== 0) throw new Error(`registration failed:\n${r.out}\n${ns.dump()}`);
  }, STEP_MS);

  let firstOfTest = 0;
  beforeEach(() => {
    firstOfTest = ns.procs.length;
  });
  afterEach((ctx) => {
    if (ctx.task.result?.state !== 'fail') return;
    console.error(`group interop processes:\n${ns.dump(firstOfTest)}`);
    // The reference's seats print little: their event logs say where they stopped.
    for (const [d, role] of [refA, refB].flatMap(
      (d) =>
        [
          [d, 'host'],
          [d, 'guest'],
        ] as Array<[string, 'host' | 'guest']>,
    )) {
      const dir = stateDir(d, role);
      if (dir && existsSync(join(dir, 'events.jsonl')))
        console.error(`----- ${dir}/events.jsonl\n${readFileSync(join(dir, 'events.jsonl'), 'utf8').slice(-6000)}`);
    }
  });
  afterAll(async () => {
    await w?.close();
  });

  /** The server's record of a group, as it answers a signed GET from inside the namespace. */
  const groupRecord = async (postId: string): Promise<Record<string, unknown>> => {
    const r = await ns.run('group record', process.execPath, ['--import', 'tsx', RECORD, SERVER, oursB, postId], { timeoutMs: 30_000 });
    expect(r.code, r.out).toBe(0);
    const line = r.stdout.split('\n').find((l) => l.startsWith('RESULT '));
    expect(line, r.out).toBeDefined();
    return JSON.parse(line!.slice(7)) as Record<string, unknown>;
  };

  /** A reference seat's state directory (`sessions/host-group-*` or `guest-group-*` under its data dir). */
  const stateDir = (dataDir: string, role: 'host' | 'guest', not: ReadonlySet<string> = new Set()): string | undefined => {
    const sessions = join(dataDir, 'sessions');
    if (!existsSync(sessions)) return undefined;
    const found = readdirSync(sessions)
      .filter((d) => d.startsWith(`${role}-group-`) && !not.has(d))
      .sort();
    return found.length ? join(sessions, found[found.length - 1]!) : undefined;
  };
  /** The state directories a data dir holds already (an earlier scenario's). */
  const earlier = (dataDir: string): Set<string> => new Set(existsSync(join(dataDir, 'sessions')) ? readdirSync(join(dataDir, 'sessions')) : []);
  const readJson = (path: string): Record<string, unknown> | undefined => {
    try {
      return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  };

  /**
   * The player of one reference seat: reads its snapshot, and when the seat has a move (our autoplay
   * over the view the reference shows it) and no action in flight, submits it with `session action`.
   * `quorum`: the seat waits until that many members are in the room (the reference's leader would
   * otherwise close the room before the last member arrived).
   */
  const refPlayer = (
    dataDir: string,
    role: 'host' | 'guest',
    old: ReadonlySet<string>,
    autoplay: GroupAutoplay,
    quorum: number,
    stop: () => boolean,
    go: () => boolean = () => true,
  ) =>
    (async () => {
      const pk = publicKeyOf(dataDir);
      let submitted = 0;
      let dir: string | undefined;
      while (!stop()) {
        await pause(100);
        dir ??= stateDir(dataDir, role, old);
        if (!dir || !go()) continue;
        const snap = readJson(join(dir, 'snapshot.json'));
        if (!snap || snap['completed'] === true) continue;
        if (submitted > 0) {
          // One action at a time: the reference's outbox has taken every line and has none in flight.
          const outbox = readJson(join(dir, 'group-action-outbox.json'));
          if (!outbox || outbox['pending'] !== null || (outbox['committed_offset'] as number) < statSync(join(dir, 'group-actions.jsonl')).size) continue;
        }
        const group = snap['group'] as { members?: GroupMember[] } | undefined;
        const view = snap['group_view'] as Record<string, unknown> | undefined;
        const members = (group?.members ?? []).filter((m) => m.status === 'active');
        const me = members.find((m) => m.public_key === pk);
        if (!view || !me || members.length < quorum) continue;
        const action = autoplay(view, me, Math.random);
        if (!action) continue;
        await run(reference.python, pyArgs(['session', 'action', '--state-dir', dir, '--action', JSON.stringify(action)]), {
          env: { ...process.env, ...refEnv(dataDir) },
        });
        submitted++;
      }
      return { submitted, dir };
    })();

  interface Game {
    protocolId: string;
    alias: string;
    options: Record<string, unknown>;
    autoplay: GroupAutoplay;
    leader: 'reference' | 'ours';
  }

  /**
   * One group: the leader posts and opens it, the other three join at once, the reference seats are
   * played as above, and everything is checked at the end.
   */
  async function play(g: Game): Promise<void> {
    const seats = 4;
    let over = false;
    // Taken before anyone starts: a reference seat's state directory is the one this game makes.
    const before = new Map([refA, refB].map((d) => [d, earlier(d)]));
    let leaderProc: Proc;
    if (g.leader === 'reference') {
      leaderProc = startRef('reference leader (ref-a)', refA, [
        'host',
        '--server',
        SERVER,
        '--protocol-dir',
        refProtocolDir(refA, g.protocolId),
        '--options',
        JSON.stringify(g.options),
        '--control-mode',
        'autonomous',
        '--no-web',
      ]);
    } else {
      // Our leader plays seat 0 unattended. A room starts with its second member: a pause before each of
      // the owner's actions lets the others arrive before it can close the room (a table waits for all four).
      const pace = g.protocolId === COMMUNITY_ROOM ? ['--action-delay-ms', '1500'] : [];
      leaderProc = startOurs('our leader (ours-a)', [
        'host',
        '--server',
        SERVER,
        '--transport',
        'iroh',
        '--protocol',
        g.alias,
        '--options',
        JSON.stringify(g.options),
        ...pace,
        '--data-dir',
        oursA,
        '--json',
      ]);
    }
    // The reference prints `post_id: X`; ours with --json prints it in its first line of JSON.
    const postIdOf = () => /^post_id: ([0-9a-f]{32})$/m.exec(leaderProc.output())?.[1] ?? /^\{.*"post_id":"([0-9a-f]{32})"/m.exec(leaderProc.stdout())?.[1];
    await until(() => postIdOf() !== undefined || leaderProc.child.exitCode !== null, 'the leader to post its group', 60_000);
    const postId = postIdOf();
    expect(postId, leaderProc.output()).toBeDefined();

    const refMembers = g.leader === 'reference' ? [refB] : [refA, refB];
    const ourMembers = g.leader === 'reference' ? [oursA, oursB] : [oursB];
    const refJoins = refMembers.map((d) =>
      startRef(`reference member (${d.slice(-5)})`, d, ['join', '--server', SERVER, postId!, '--control-mode', 'autonomous', '--no-web']),
    );
    const ourJoins = ourMembers.map((d) => startOurs(`our member (${d.slice(-6)})`, ['join', '--server', SERVER, postId!, '--data-dir', d, '--json']));
    const refSeats: Array<[string, 'host' | 'guest']> = [
      ...(g.leader === 'reference' ? [[refA, 'host'] as [string, 'host']] : []),
      ...refMembers.map((d) => [d, 'guest'] as [string, 'guest']),
    ];
    const players = refSeats.map(([d, role]) => refPlayer(d, role, before.get(d)!, g.autoplay, seats, () => over));

    const all = [leaderProc, ...refJoins, ...ourJoins];
    const timer = setTimeout(() => all.forEach((p) => p.child.kill('SIGKILL')), STEP_MS - 15_000);
    const codes = await Promise.all(all.map((p) => p.exited));
    clearTimeout(timer);
    over = true;
    const moves = await Promise.all(players);
    if (g.leader === 'reference' && codes[0] === 0) {
      const raced = refJoins.filter((p, i) => codes[i + 1] !== 0 && ACK_RACE.test(p.output()));
      if (raced.length > 0 && ourJoins.every((_, i) => codes[1 + refJoins.length + i] === 0)) throw new AckRace(raced.map((p) => p.name).join(', '));
    }
    for (const [i, p] of all.entries()) expect(codes[i], `${p.name}:\n${p.output()}`).toBe(0);
    for (const p of all) expect(p.output()).not.toMatch(/Traceback/);
    // Each reference seat made moves of its own.
    for (const m of moves) expect(m.submitted).toBeGreaterThan(0);

    // Our seats: completed, and their transcripts pass our own offline check.
    const ours = (g.leader === 'ours' ? [leaderProc] : []).concat(ourJoins).map((p) => {
      const r = lastJson(p.stdout());
      expect(r, p.output()).toBeDefined();
      expect(r!['completed'], p.output()).toBe(true);
      expect(r!['transport']).toBe('iroh');
      expect(r!['post_id']).toBe(postId);
      const dir = String(r!['dir']);
      const v = verifyGroupSessionAt(getCrypto(), dir);
      expect(v, dir).toMatchObject({ ok: true, receipt: true, completed: true, protocol_id: g.protocolId });
      const receipt = readJson(join(dir, 'receipt.json'))!;
      return { outcome: r!['outcome'], seq: receipt['seq'], checkpoint: receipt['checkpoint_hash'], group: r!['group_id'], role: r!['role'] };
    });
    // The reference's seats: their snapshots say completed, with the outcome and the final checkpoint.
    const theirs = moves.map(({ dir }) => {
      const snap = readJson(join(dir!, 'snapshot.json'))!;
      expect(snap['completed'], JSON.stringify(snap).slice(0, 2000)).toBe(true);
      const group = snap['group'] as Record<string, unknown>;
      return { outcome: snap['outcome'], seq: group['seq'], checkpoint: group['checkpoint_hash'], group: group['group_id'] };
    });
    const everyone = [...ours, ...theirs];
    expect(everyone.length).toBe(seats);
    const outcome = everyone[0]!.outcome;
    expect(typeof outcome).toBe('string');
    for (const m of everyone)
      expect({ outcome: m.outcome, seq: m.seq, checkpoint: m.checkpoint, group: m.group }).toEqual({
        outcome,
        seq: everyone[0]!.seq,
        checkpoint: everyone[0]!.checkpoint,
        group: everyone[0]!.group,
      });
    if (g.leader === 'ours') expect(ours[0]).toMatchObject({ role: 'leader' });

    // The registry's record: closed by its leader, with exactly these four members.
    const record = await groupRecord(postId!);
    const leaderKey = publicKeyOf(g.leader === 'reference' ? refA : oursA);
    expect(record).toMatchObject({
      group_id: everyone[0]!.group,
      post_id: postId,
      protocol_id: g.protocolId,
      status: 'closed',
      leader_public_key: leaderKey,
      leader_epoch: 0,
      participant_count: seats,
    });
    const keys = (record['members'] as Array<{ public_key: string; seat: number }>).map((m) => m.public_key).sort();
    expect(keys).toEqual([refA, refB, oursA, oursB].map(publicKeyOf).sort());
    expect((record['members'] as Array<{ public_key: string; seat: number }>).find((m) => m.public_key === leaderKey)?.seat).toBe(0);
  }

  it(
    "our leader dies mid-hand of Texas Hold'em: one of our members claims the next epoch through the registry and leads, the other and the reference member follow, our old leader rejoins",
    async () => {
      expect([oursB, oursC]).toContain(
        await failover({ protocolId: HOLDEM, alias: 'texas-holdem-v1', options: HOLDEM_OPTIONS, autoplay: holdemAutoplay }, [refA], [oursB, oursC]),
      );
    },
    STEP_MS * 2,
  );

  it(
    'our leader of a Community Room dies: a reference member claims the next epoch and leads, the other follows, our old leader rejoins and closes the room',
    async () => {
      expect([refA, refB]).toContain(
        await failover({ protocolId: COMMUNITY_ROOM, alias: 'community-room-v1', options: { history_limit: 50 }, autoplay: roomAutoplay }, [refA, refB], []),
      );
    },
    STEP_MS * 2,
  );

  /**
   * Our leader is killed once the game is under way. Whoever wins the claim leads epoch 1 from its own
   * checkpoint, the others follow it there, and our crashed leader comes back as a member (seat 0, the
   * room's owner); the game then completes. Our members notice a silent leader sooner than the
   * reference's (they ping it; the reference waits for its connection to time out), so with one of ours
   * among the members ours wins the claim, and without one a reference member does.
   */
  async function failover(g: Omit<Game, 'leader'>, refMembers: string[], ourMembers: string[]): Promise<string> {
    let over = false;
    const before = new Map(refMembers.map((d) => [d, earlier(d)]));
    const delay = ['--action-delay-ms', '300'];
    const host = startOurs('our leader (ours-a)', [
      'host',
      '--server',
      SERVER,
      '--protocol',
      g.alias,
      '--options',
      JSON.stringify(g.options),
      ...delay,
      '--data-dir',
      oursA,
    ]);
    await until(() => /^post_id: /m.test(host.output()) || host.child.exitCode !== null, 'our leader to post its group', 60_000);
    const postId = /^post_id: ([0-9a-f]{32})$/m.exec(host.output())?.[1];
    expect(postId, host.output()).toBeDefined();
    const seats = 1 + refMembers.length + ourMembers.length;
    const refJoins = refMembers.map((d) =>
      startRef(`reference member (${d.slice(-5)})`, d, ['join', '--server', SERVER, postId!, '--control-mode', 'autonomous', '--no-web']),
    );
    const ourJoins = ourMembers.map((d) =>
      startOurs(`our member (${d.slice(-6)})`, ['join', '--server', SERVER, postId!, ...delay, '--data-dir', d, '--json']),
    );
    // Without one of ours, the reference seats move only once the leader is dead: a reference member
    // that has nothing to send was seen to miss its leader's death for over 90 s (README, interop).
    let killed = false;
    const players = refMembers.map((d) =>
      refPlayer(
        d,
        'guest',
        before.get(d)!,
        g.autoplay,
        seats,
        () => over,
        () => ourMembers.length > 0 || killed,
      ),
    );
    // Under way: every seat taken and a few moves made.
    await until(() => host.output().includes(`(member_connected: seat ${seats - 1})`) || host.child.exitCode !== null, 'every member to be admitted', 60_000);
    await pause(2_000);
    expect(host.child.exitCode, host.output()).toBeNull();
    host.child.kill('SIGKILL');
    await host.exited;
    killed = true;
    let after: Record<string, unknown> = {};
    await until(
      () => after['leader_epoch'] === 1,
      'a member to win the claim for epoch 1',
      90_000,
      async () => {
        after = await groupRecord(postId!);
      },
    );
    const successor = [...refMembers, ...ourMembers].find((d) => publicKeyOf(d) === after['leader_public_key']);
    expect(successor, JSON.stringify(after)).toBeDefined();
    const rejoined = startOurs('our old leader, rejoining', ['join', '--server', SERVER, postId!, ...delay, '--data-dir', oursA, '--json']);
    const all = [...refJoins, ...ourJoins, rejoined];
    const timer = setTimeout(() => all.forEach((p) => p.child.kill('SIGKILL')), STEP_MS);
    const codes = await Promise.all(all.map((p) => p.exited));
    clearTimeout(timer);
    over = true;
    const moves = await Promise.all(players);
    for (const [i, p] of all.entries()) expect(codes[i], `${p.name}:\n${p.output()}`).toBe(0);
    const ours = [...ourJoins, rejoined].map((p, i) => {
      const r = lastJson(p.stdout())!;
      expect(r, p.output()).toMatchObject({ completed: true, post_id: postId });
      // The winner led epoch 1, the other members followed it there, the old leader joined epoch 1 only.
      const mine = i < ourJoins.length ? ourMembers[i] : oursA;
      expect([r['role'], r['epochs']]).toEqual(mine === successor ? ['leader', 2] : mine === oursA ? ['member', 1] : ['member', 2]);
      expect(verifyGroupSessionAt(getCrypto(), String(r['dir']))).toMatchObject({ ok: true, receipt: true, completed: true, protocol_id: g.protocolId });
      const receipt = readJson(join(String(r['dir']), 'receipt.json'))!;
      expect(receipt).toMatchObject({ leader_epoch: 1, leader_public_key: after['leader_public_key'] });
      return { outcome: r['outcome'], seq: receipt['seq'], checkpoint: receipt['checkpoint_hash'] };
    });
    // The crashed leader kept the transcript it led, and wrote its return in a new one.
    expect(String(lastJson(rejoined.stdout())!['dir'])).toMatch(/-2$/);
    const theirs = moves.map(({ dir }) => {
      const snap = readJson(join(dir!, 'snapshot.json'))!;
      expect(snap['completed']).toBe(true);
      const group = snap['group'] as Record<string, unknown>;
      expect(group['leader_epoch']).toBe(1);
      return { outcome: snap['outcome'], seq: group['seq'], checkpoint: group['checkpoint_hash'] };
    });
    for (const m of [...ours, ...theirs]) expect(m).toEqual(ours[0]);
    expect(await groupRecord(postId!)).toMatchObject({
      status: 'closed',
      leader_epoch: 1,
      leader_public_key: after['leader_public_key'],
      participant_count: seats,
    });
    return successor!;
  }

  /**
   * A game the reference leads, played again once if a reference member lost the upstream race
   * described at ACK_RACE; any other failure, or the race twice, fails the test.
   */
  async function playReferenceLed(g: Omit<Game, 'leader'>): Promise<void> {
    try {
      await play({ ...g, leader: 'reference' });
    } catch (e) {
      if (!(e instanceof AckRace)) throw e;
      console.warn(`group interop: ${e.message}; playing the game once more`);
      await play({ ...g, leader: 'reference' });
    }
  }

  it(
    'the reference leads a Community Room; a reference member and two of ours join and chat until its owner closes it',
    async () => {
      await playReferenceLed({ protocolId: COMMUNITY_ROOM, alias: 'community-room-v1', options: { history_limit: 50 }, autoplay: roomAutoplay });
    },
    STEP_MS,
  );

  it(
    'our agent leads a Community Room; two reference members and one of ours join',
    async () => {
      await play({ protocolId: COMMUNITY_ROOM, alias: 'community-room-v1', options: { history_limit: 50 }, autoplay: roomAutoplay, leader: 'ours' });
    },
    STEP_MS,
  );

  it(
    "the reference leads a hand of Texas Hold'em; a reference member and two of ours take the other seats",
    async () => {
      await playReferenceLed({ protocolId: HOLDEM, alias: 'texas-holdem-v1', options: HOLDEM_OPTIONS, autoplay: holdemAutoplay });
    },
    STEP_MS,
  );

  it(
    "our agent leads a hand of Texas Hold'em; two reference members and one of ours take the other seats",
    async () => {
      await play({ protocolId: HOLDEM, alias: 'texas-holdem-v1', options: HOLDEM_OPTIONS, autoplay: holdemAutoplay, leader: 'ours' });
    },
    STEP_MS,
  );
}
