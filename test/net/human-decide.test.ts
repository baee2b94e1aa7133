// Human control at the CLI (issue 34, item 4): a real `aigenora host` and `aigenora join` on loopback,
// both under --control-mode human. Each prints that a decision is awaited (what, the allowed values,
// the deadline, the command that answers it); `session decide` waits for the engine's verdict: an
// invalid value is refused with the engine's reason and a non-zero exit, and the window stays open for
// the next; a valid one is accepted; once the session is over there is no window to answer.
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../shared/cli.js';
import { tempDir } from '../shared/tmp.js';
import { startCli, until, type CliProcess } from './helpers.js';

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

function start(args: string[]): CliProcess {
  const p = startCli(args);
  children.push(p.child);
  return p;
}

/** One side's session directory under a data directory (one session each here). */
function sideDir(dataDir: string, role: 'host' | 'guest'): string {
  const base = join(dataDir, 'sessions');
  return join(base, readdirSync(base)[0]!, role);
}

const AWAITED =
  /^decision awaited: round 0, reveal\.choice, one of: rock, paper, scissors; deadline (\S+) \((\d+) s\), then the session ends; answer: aigenora session decide (\S+) --value <choice>$/m;

describe('human control at the CLI over a real host and join', () => {
  it('prompts each side with the open window; session decide refuses lizard with the reason (exit 1), accepts paper (exit 0)', async () => {
    const out = tempDir('human-decide');
    const [alice, bob] = [join(out, 'alice'), join(out, 'bob')];
    for (const d of [alice, bob]) expect((await cli(['init', '--data-dir', d])).status).toBe(0);
    const invFile = join(out, 'invitation.txt');
    // The host with --json: its stdout is the result's, so its prompt goes to stderr.
    const host = start([
      'host',
      '--data-dir',
      alice,
      '--protocol',
      'rps-v1',
      '--options',
      '{"best_of":1}',
      '--control-mode',
      'human',
      '--invitation-file',
      invFile,
      '--json',
    ]);
    await until(
      () => (existsSync(invFile) && readFileSync(invFile, 'utf8').endsWith('\n')) || host.child.exitCode !== null,
      'the host to write its invitation',
      30_000,
    );
    const guest = start(['join', readFileSync(invFile, 'utf8').trim(), '--data-dir', bob, '--control-mode', 'human']);

    await until(() => AWAITED.test(guest.stdout()), `the guest's prompt (stdout so far: ${guest.stdout()})`, 30_000);
    await until(() => AWAITED.test(host.stderr()), `the host's prompt (stderr so far: ${host.stderr()})`, 30_000);
    const g = AWAITED.exec(guest.stdout())!;
    const h = AWAITED.exec(host.stderr())!;
    // The command names each side's own session directory; the deadline is the spec's (rps: 120 s) from now.
    expect([g[3], h[3]]).toEqual([sideDir(bob, 'guest'), sideDir(alice, 'host')]);
    for (const m of [g, h]) {
      const left = Date.parse(m[1]!) - Date.now();
      expect(left).toBeGreaterThan(60_000);
      expect(left).toBeLessThanOrEqual(120_000);
      expect(Number(m[2])).toBeGreaterThan(60);
    }
    expect(host.stdout()).not.toMatch(/decision awaited/);

    const guestDir = g[3]!;
    const bad = await cli(['session', 'decide', guestDir, '--value', 'lizard']);
    expect(bad.status).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(
      /^aigenora session decide: DECISION_REFUSED: not a valid choice: \S.*; allowed: reveal\.choice, one of: rock, paper, scissors; the window round 0 stays open until \S+\n$/,
    );
    // The engine keeps the window open after a refusal (NOTES A13): the next decision answers it.
    expect(JSON.parse(readFileSync(join(guestDir, 'decision', 'state.json'), 'utf8'))).toMatchObject({ match_key: 'round', match_value: 0, expects: 'value' });

    const good = await cli(['session', 'decide', guestDir, '--value', 'paper']);
    expect(good).toEqual({ status: 0, stdout: expect.stringMatching(/^accepted: decision cli:\S+ for round 0\n$/), stderr: '' });
    const hostGood = await cli(['session', 'decide', h[3]!, '--value', 'rock', '--json']);
    expect(hostGood.status).toBe(0);
    expect(JSON.parse(hostGood.stdout)).toMatchObject({ match_key: 'round', match_value: 0, value: 'rock', verdict: 'accepted' });

    expect(await guest.exited).toBe(0);
    expect(await host.exited).toBe(0);
    expect(guest.stdout()).toMatch(/session completed: winner guest/);
    // host --json prints a line of JSON per result: the invitation, then the session's.
    const hostLines = host
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(hostLines[0]).toMatchObject({ role: 'host', invitation: expect.stringMatching(/^aigenora1\./) });
    expect(hostLines.at(-1)).toMatchObject({ completed: true, winner: 'guest' });
    // One prompt a side: the refusal did not open a new window.
    expect(guest.stdout().match(/^decision awaited: /gm)).toHaveLength(1);

    const late = await cli(['session', 'decide', guestDir, '--value', 'rock']);
    expect(late).toEqual({
      status: 1,
      stdout: '',
      stderr: expect.stringMatching(/^aigenora session decide: NO_WINDOW: no decision window is open in \S+: the session has ended \(completed\) /),
    });
  }, 120_000);
});
