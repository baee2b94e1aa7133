/**
 * Interop with the reference implementation: its Python CLI (../shared/reference/aigenora-src, run from
 * the virtualenv that scripts/lib/reference-peer.sh makes) against our registry server and our agent,
 * all inside one network namespace with only loopback up.
 *
 * Scenarios: both clients register (PoW) at our server; the reference plays rock-paper-scissors with
 * itself through our server (the server's conformance: invitations, browse, session proof, status,
 * result); our agent hosts over iroh and the reference joins; the reverse; the offline inbox both ways.
 * A missing reference (or namespace tool) fails the file, or skips it loudly when ../shared is absent
 * altogether (AIGENORA_SKIP_CORPORA=1, through test/shared/require.ts as every skip); a missing command of
 * ours fails its scenario.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../shared/tmp.js';
import { need } from '../shared/require.js';
import {
  findReference,
  lastJson,
  namespaceMissing,
  openWorld,
  publicKeyOf,
  until,
  type Namespace,
  type Proc,
  type Ran,
  type Reference,
  type World,
} from './harness.js';
import { ourHost, ourJoin, refHost, refJoin } from './peer-commands.js';

const RPS = '43a806481a8e8cd00bc89f4676756c9be9081c0dd8392bee8e3534da41daa55f';
// The namespace is private to this file, so a fixed port cannot collide with anything.
const PORT = 18787;
const SERVER = `http://127.0.0.1:${PORT}`;
const STEP_MS = 180_000;

const ref = findReference();
const missing = 'missing' in ref ? ref.missing : namespaceMissing();
const ready = need(`${missing} (for the interop test with the reference)`, missing === undefined, {
  how: 'scripts/test.sh sets it up: scripts/lib/reference-peer.sh makes the reference peer; the namespace needs root, unshare, nsenter and ip',
});

// Skipped (loudly, by need) only with AIGENORA_SKIP_CORPORA=1; the scenarios then never touch `ref`.
describe.skipIf(!ready)(`interop with the reference${ready ? '' : ` (SKIPPED: missing ${missing})`}`, () => scenarios(ref as Reference));

function scenarios(reference: Reference): void {
  let w: World;
  let ns: Namespace;
  // Two reference identities (host and guest) and one of ours.
  let refA: string;
  let refB: string;
  let mine: string;
  const runRef = (name: string, dataDir: string, args: string[], timeoutMs = STEP_MS): Promise<Ran> => w.runRef(name, dataDir, args, timeoutMs);
  const startRef = (name: string, dataDir: string, args: string[]): Proc => w.startRef(name, dataDir, args);
  const runOurs = (name: string, args: string[], timeoutMs = STEP_MS): Promise<Ran> => w.runOurs(name, args, timeoutMs);
  const startOurs = (name: string, args: string[]): Proc => w.startOurs(name, args);

  beforeAll(async () => {
    const root = tempDir('interop');
    [refA, refB, mine] = [join(root, 'ref-a'), join(root, 'ref-b'), join(root, 'ours')];
    w = await openWorld(reference, root, PORT, STEP_MS);
    ns = w.ns;
    w.initRef(refA);
    w.initRef(refB);
    w.initOurs(mine);
  }, STEP_MS);

  let firstOfTest = 0;
  beforeEach(() => {
    firstOfTest = ns.procs.length;
  });
  afterEach((ctx) => {
    // Every process of the scenario, so that a failure shows both sides and the server at once.
    if (ctx.task.result?.state === 'fail') console.error(`interop processes:\n${ns.dump(firstOfTest)}`);
  });

  afterAll(async () => {
    await w?.close();
  });

  /** `post_id: X` from the reference host's stdout. */
  const refPostId = (p: Proc) => /^post_id: (\S+)$/m.exec(p.stdout())?.[1];
  /** The game's winner as the reference prints it at the end of rock-paper-scissors. */
  const refWinner = (out: string) => {
    const m = /=== Game Over ===\s+(Host wins!|Guest wins!|Draw!|No winner)/.exec(out)?.[1];
    return m && ({ 'Host wins!': 'host', 'Guest wins!': 'guest', 'Draw!': 'draw', 'No winner': 'none' } as const)[m as 'Draw!'];
  };
  const refSessionId = (out: string) => /session_id: ([0-9a-f]{64})/.exec(out)?.[1];
  /** The reference's `browse --oneline` rows (tab-separated), by post_id. */
  const browseRows = (out: string) =>
    new Map(
      out
        .split('\n')
        .filter((l) => l.includes('\t'))
        .map((l) => l.split('\t'))
        .map((f) => [f[0]!, { protocolId: f[1], type: f[2], publicKey: f[5], registered: f[6], nickname: f[7], hostControlMode: f[11] }] as const),
    );
  /** What our server recorded for a session, read through the reference's `session get`. */
  const sessionRecord = async (sid: string) => {
    const r = await runRef('reference session get', refB, ['session', 'get', sid, '--json', '--server', SERVER]);
    expect(r.code, r.out).toBe(0);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  };
  const expectRecorded = async (sid: string, host: string, guest: string, winner: string) => {
    const s = await sessionRecord(sid);
    expect(s['session_id']).toBe(sid);
    expect(s['host_public_key']).toBe(host);
    expect(s['guest_public_key']).toBe(guest);
    expect(s['protocol_id']).toBe(RPS);
    expect(s['status']).toBe('closed');
    // Both participants reported the same result, so the server settled it.
    expect(s['result'], JSON.stringify(s)).toBe(winner);
  };
  /** The reference (ref-a) hosting rock-paper-scissors, once it has posted its invitation. */
  const refHostsRps = async () => {
    const host = startRef('reference host (ref-a)', refA, refHost(SERVER, join(refA, 'protocols', RPS.slice(0, 8), RPS.slice(8))));
    await until(() => refPostId(host) !== undefined || host.child.exitCode !== null, 'the reference host to post its invitation', 60_000);
    const postId = refPostId(host);
    expect(postId, host.output()).toBeDefined();
    return { host, postId };
  };
  /** The reference's own complaint when one of its requests failed (it still exits 0 for these). */
  const noRefWarnings = (out: string) => expect(out).not.toMatch(/warning: failed to|Traceback|failed: HTTP/);

  it(
    'the reference registers at our server with its proof of work',
    async () => {
      for (const [d, nick] of [
        [refA, 'ref-a'],
        [refB, 'ref-b'],
      ] as const) {
        const r = await runRef(`reference register ${nick}`, d, ['register', '--server', SERVER, '--nickname', nick]);
        expect(r.code, r.out).toBe(0);
        noRefWarnings(r.out);
        // It prints the server's answer as a Python dict; an error body would carry a code instead.
        expect(r.stdout).toMatch(/^\{.*\}$/m);
      }
    },
    STEP_MS,
  );

  it(
    'our agent registers at our server',
    async () => {
      const r = await runOurs('our register', ['register', '--server', SERVER, '--nickname', 'ours', '--data-dir', mine]);
      expect(r.code, r.out).toBe(0);
    },
    STEP_MS,
  );

  it(
    'the reference hosts rock-paper-scissors and the reference joins, through our server',
    async () => {
      const { host, postId } = await refHostsRps();

      const browse = await runRef('reference browse (ref-b)', refB, ['browse', '--server', SERVER, '--protocol-id', RPS, '--oneline']);
      expect(browse.code, browse.out).toBe(0);
      const row = browseRows(browse.stdout).get(postId!);
      expect(row, browse.out).toBeDefined();
      expect(row!.protocolId).toBe(RPS);
      expect(row!.publicKey).toBe(publicKeyOf(refA));
      expect(row!.hostControlMode).toBe('autonomous');
      // The registration the first scenario made is what the server shows beside the invitation.
      expect([row!.registered, row!.nickname]).toEqual(['true', 'ref-a']);

      const join_ = await runRef('reference join (ref-b)', refB, refJoin(SERVER, postId!));
      expect(join_.code, join_.out).toBe(0);
      expect(await host.exited, host.output()).toBe(0);
      noRefWarnings(host.output());
      noRefWarnings(join_.out);

      const winner = refWinner(host.output());
      expect(['host', 'guest'], host.output()).toContain(winner);
      expect(refWinner(join_.out)).toBe(winner);
      const sid = refSessionId(join_.out);
      expect(sid, join_.out).toBeDefined();
      expect(refSessionId(host.output())).toBe(sid);
      await expectRecorded(sid!, publicKeyOf(refA), publicKeyOf(refB), winner!);
    },
    STEP_MS * 2,
  );

  it(
    'our agent hosts over iroh, the reference finds it with browse and joins',
    async () => {
      const host = startOurs('our host', ourHost(SERVER, 'rps-v1', mine));
      // The reference finds the invitation the way an agent would: browsing by protocol for our key.
      let postId: string | undefined;
      await until(
        () => postId !== undefined || host.child.exitCode !== null,
        'the reference to find our invitation with browse',
        120_000,
        async () => {
          const browse = await runRef('reference browse (ref-b)', refB, ['browse', '--server', SERVER, '--protocol-id', RPS, '--oneline']);
          expect(browse.code, browse.out).toBe(0);
          for (const [id, row] of browseRows(browse.stdout)) {
            if (row.publicKey !== publicKeyOf(mine) || row.protocolId !== RPS) continue;
            postId = id;
            expect([row.registered, row.nickname, row.hostControlMode]).toEqual(['true', 'ours', 'autonomous']);
          }
        },
      );
      expect(postId, host.output()).toBeDefined();

      const join_ = await runRef('reference join (ref-b)', refB, refJoin(SERVER, postId!));
      expect(join_.code, join_.out).toBe(0);
      expect(await host.exited, host.output()).toBe(0);
      noRefWarnings(join_.out);

      const winner = refWinner(join_.out);
      expect(['host', 'guest'], join_.out).toContain(winner);
      const result = lastJson(host.stdout());
      expect(result, host.output()).toBeDefined();
      expect(result!['completed']).toBe(true);
      expect(result!['winner']).toBe(winner);
      const sid = refSessionId(join_.out);
      expect(result!['session_id']).toBe(sid);
      await expectRecorded(sid!, publicKeyOf(mine), publicKeyOf(refB), winner!);
    },
    STEP_MS * 2,
  );

  it(
    'the reference hosts, our agent joins over iroh',
    async () => {
      const { host, postId } = await refHostsRps();

      const join_ = await runOurs('our join', ourJoin(SERVER, postId!, mine));
      expect(join_.code, join_.out).toBe(0);
      expect(await host.exited, host.output()).toBe(0);
      noRefWarnings(host.output());

      const winner = refWinner(host.output());
      expect(['host', 'guest'], host.output()).toContain(winner);
      const result = lastJson(join_.stdout);
      expect(result, join_.out).toBeDefined();
      expect(result!['completed']).toBe(true);
      expect(result!['winner']).toBe(winner);
      const sid = refSessionId(host.output());
      expect(result!['session_id']).toBe(sid);
      await expectRecorded(sid!, publicKeyOf(refA), publicKeyOf(mine), winner!);
    },
    STEP_MS * 2,
  );

  /** Inbox entries from a `list --json` answer, whichever of the two shapes it has. */
  const entriesOf = (stdout: string): Array<Record<string, unknown>> => {
    const v = JSON.parse(stdout.slice(stdout.search(/[[{]/))) as unknown;
    if (Array.isArray(v)) return v as Array<Record<string, unknown>>;
    return ((v as { entries?: unknown }).entries ?? []) as Array<Record<string, unknown>>;
  };

  it(
    'the reference leaves our agent an inbox message and ours reads it',
    async () => {
      const toOurs = `from the reference to ours: héllo ✓ ${Date.now()}`;
      const sent = await runRef('reference inbox send', refA, ['inbox', 'send', '--server', SERVER, '--to', publicKeyOf(mine), '--message', toOurs, '--json']);
      expect(sent.code, sent.out).toBe(0);

      const list = await runOurs('our inbox list', ['inbox', 'list', '--server', SERVER, '--data-dir', mine, '--json']);
      expect(list.code, list.out).toBe(0);
      const entries = entriesOf(list.stdout);
      expect(entries.length, list.out).toBe(1);
      const read = await runOurs('our inbox read', ['inbox', 'read', String(entries[0]!['id']), '--server', SERVER, '--data-dir', mine, '--json']);
      expect(read.code, read.out).toBe(0);
      expect(lastJson(read.stdout)?.['plaintext'], read.out).toBe(toOurs);
    },
    STEP_MS,
  );

  it(
    'our agent leaves the reference an inbox message and the reference reads and deletes it',
    async () => {
      const toRef = `from ours to the reference: grüße ✓ ${Date.now()}`;
      const ourSend = await runOurs('our inbox send', [
        'inbox',
        'send',
        '--server',
        SERVER,
        '--to',
        publicKeyOf(refB),
        '--message',
        toRef,
        '--data-dir',
        mine,
        '--json',
      ]);
      expect(ourSend.code, ourSend.out).toBe(0);
      const refList = await runRef('reference inbox list', refB, ['inbox', 'list', '--server', SERVER, '--json']);
      expect(refList.code, refList.out).toBe(0);
      const entries = entriesOf(refList.stdout);
      expect(entries.length, refList.out).toBe(1);
      // The reference parses message ids as integers (argparse type=int) before it sends anything.
      const id = String(entries[0]!['id']);
      const read = await runRef('reference inbox read', refB, ['inbox', 'read', id, '--server', SERVER, '--json']);
      expect(read.code, read.out).toBe(0);
      expect((JSON.parse(read.stdout) as { plaintext: string }).plaintext).toBe(toRef);

      const del = await runRef('reference inbox delete', refB, ['inbox', 'delete', id, '--server', SERVER, '--json']);
      expect(del.code, del.out).toBe(0);
      const after = await runRef('reference inbox list', refB, ['inbox', 'list', '--server', SERVER, '--json']);
      expect(after.code, after.out).toBe(0);
      expect(entriesOf(after.stdout), after.out).toEqual([]);
    },
    STEP_MS,
  );
}
