// `aigenora rin …` as a user runs it, against a running control daemon: human lines, --json answers as
// the daemon gave them, and every mistake or refusal as one line on stderr.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BIN } from '../interop/harness.js';
import { describeWithReference, freePort, PRINCIPAL, RIN_TOKEN, SCOPES, startDaemon, startGoDaemon, type Daemon } from '../interop/rin-harness.js';
import { tempDir } from '../shared/tmp.js';
import { cli as runCli } from '../shared/cli.js';

// The daemons and the smoke tests are new Node processes (tsx compiles the CLI on start): on a loaded
// machine a test of several can take longer than the default minute.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 240_000 });

interface Ran {
  status: number | null;
  out: string;
  err: string;
}

/** In process (main() awaits, so nothing here blocks), with only the given RIN_CONTROL_TOKEN. */
export async function rinCli(args: string[], env: Record<string, string | undefined> = { RIN_CONTROL_TOKEN: RIN_TOKEN }): Promise<Ran> {
  const r = await runCli(['rin', ...args], { env: { RIN_CONTROL_TOKEN: undefined, ...env } });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

/** As a user runs it: a new process. */
function spawned(args: string[], env: Record<string, string | undefined> = { RIN_CONTROL_TOKEN: RIN_TOKEN }): Promise<Ran> {
  return new Promise((resolve) => {
    const merged: NodeJS.ProcessEnv = { ...process.env };
    delete merged['RIN_CONTROL_TOKEN'];
    for (const [k, v] of Object.entries(env)) if (v !== undefined) merged[k] = v;
    const p = spawn(process.execPath, [BIN, 'rin', ...args], { env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('close', (status) => resolve({ status, out, err }));
  });
}

/** A refusal: exit 1 or 2, nothing on stdout, exactly one line on stderr (two for a usage mistake, the second the usage). */
function expectOneLine(r: Ran, pattern: RegExp, status: 1 | 2 = 1): void {
  expect(r.status, r.err).toBe(status);
  expect(r.out).toBe('');
  const lines = r.err.trimEnd().split('\n');
  expect(lines[0]).toMatch(pattern);
  expect(lines.length, r.err).toBe(status === 2 && lines[1]?.startsWith('usage: ') ? 2 : 1);
  expect(r.err).not.toMatch(/^\s+at /m);
}

describe('rin commands without a daemon', () => {
  it('lists the subcommands', async () => {
    const r = await spawned(['--help']);
    expect(r.status).toBe(0);
    for (const sub of ['worlds', 'observe', 'capabilities', 'submit', 'operation', 'emergency-stop']) expect(r.out).toMatch(new RegExp(`rin ${sub} `));
  });

  it('refuses to run without the token, or with a short one, before sending anything', async () => {
    expectOneLine(await spawned(['worlds'], {}), /^aigenora rin worlds: USAGE: \$RIN_CONTROL_TOKEN is not set/, 2);
    expectOneLine(await rinCli(['worlds'], {}), /^aigenora rin worlds: USAGE: \$RIN_CONTROL_TOKEN is not set/, 2);
    expectOneLine(
      await rinCli(['worlds'], { RIN_CONTROL_TOKEN: 'short' }),
      /^aigenora rin worlds: USAGE: \$RIN_CONTROL_TOKEN must contain at least 32 bytes/,
      2,
    );
  });

  it('takes no token flag (it would show in ps)', async () => {
    expectOneLine(await rinCli(['worlds', '--token', RIN_TOKEN]), /unknown option --token/, 2);
  });

  it('refuses a control URL that is not a loopback http origin', async () => {
    for (const url of ['http://192.168.1.2:7375', 'https://127.0.0.1:7375', 'http://127.0.0.1:7375/x']) {
      expectOneLine(await rinCli(['worlds', '--control', url]), /^aigenora rin worlds: USAGE: --control: control URL must be a plain loopback http origin/, 2);
    }
  });

  it('names a daemon that is not there', async () => {
    expectOneLine(
      await rinCli(['worlds', '--control', 'http://127.0.0.1:9']),
      /^aigenora rin worlds: UNAVAILABLE: POST \/control\/v2\/worlds: cannot reach the control daemon at http:\/\/127\.0\.0\.1:9/,
    );
  });

  it('serve and host refuse a bad start in one line', async () => {
    const dir = tempDir('rin-cli-start');
    expectOneLine(await rinCli(['serve']), /^aigenora rin serve: USAGE: --principal is required/, 2);
    expectOneLine(
      await rinCli(['serve', '--principal', 'alice', '--scopes', 'actor.read,,x']),
      /^aigenora rin serve: USAGE: --scopes must be a comma-separated list/,
      2,
    );
    expectOneLine(await rinCli(['serve', '--principal', 'alice', '--db', 'mysql://x']), /^aigenora rin serve: USAGE: --db must be a postgres/, 2);
    expectOneLine(
      await rinCli(['serve', '--principal', 'alice', '--listen', '0.0.0.0:7375', '--data-dir', dir]),
      /^aigenora rin serve: INVALID: the control daemon listens only on loopback/,
    );
    expectOneLine(
      await rinCli(['serve', '--principal', 'alice', '--policy', join(dir, 'missing.json'), '--data-dir', dir]),
      /^aigenora rin serve: FILE_NOT_FOUND: /,
      2,
    );
    writeFileSync(join(dir, 'bad-policy.json'), '{"revision":0}');
    expectOneLine(
      await rinCli(['serve', '--principal', 'alice', '--policy', join(dir, 'bad-policy.json'), '--listen', '127.0.0.1:0', '--data-dir', dir]),
      /^aigenora rin serve: INVALID: /,
    );
    expectOneLine(await rinCli(['host', 'atlantis', '--owner', 'alice']), /^aigenora rin host: USAGE: expected a built-in world: harbor$/, 2);
    expectOneLine(await rinCli(['host', 'harbor']), /^aigenora rin host: USAGE: --owner is required/, 2);
  });

  it('refuses bad arguments before contacting anyone', async () => {
    expectOneLine(await rinCli(['submit', '--control', 'http://127.0.0.1:9']), /--capability is required/, 2);
    expectOneLine(
      await rinCli(['submit', '--capability', 'a.b', '--arguments', '{"a":1,"a":2}', '--control', 'http://127.0.0.1:9']),
      /--arguments is not strict JSON/,
      2,
    );
    expectOneLine(
      await rinCli(['submit', '--capability', 'a.b', '--arguments', '[1]', '--control', 'http://127.0.0.1:9']),
      /--arguments must be a JSON object/,
      2,
    );
    expectOneLine(await rinCli(['submit', '--capability', 'a.b@', '--control', 'http://127.0.0.1:9']), /--capability must be ID or ID@VERSION/, 2);
    expectOneLine(
      await rinCli(['submit', '--capability', 'a.b', '--target-refs', '{}', '--control', 'http://127.0.0.1:9']),
      /--target-refs must be a JSON array/,
      2,
    );
    expectOneLine(await rinCli(['operation', 'frob', 'operation.1']), /expected one of get, wait, cancel, confirm/, 2);
    expectOneLine(await rinCli(['operation', 'get']), /expected an operation id/, 2);
    expectOneLine(await rinCli(['operation', 'wait', 'operation.1', '--timeout-ms', '0']), /--timeout-ms must be an integer/, 2);
  });
});

describeWithReference('rin commands against the reference daemon with no world', () => {
  let daemon: Daemon;
  beforeAll(async () => {
    daemon = await startGoDaemon(tempDir('rin-cli-go'));
  });
  afterAll(async () => {
    await daemon?.stop();
  });
  const at = (...args: string[]) => rinCli([...args, '--control', daemon.url]);

  it('lists no worlds, as a line-less answer or as []', async () => {
    const human = await at('worlds');
    expect([human.status, human.out, human.err]).toEqual([0, '', '']);
    const json = await at('worlds', '--json');
    expect(json.status).toBe(0);
    expect(JSON.parse(json.out)).toEqual([]);
  });

  it("carries the daemon's refusal code in one line", async () => {
    expectOneLine(
      await at('operation', 'get', 'operation.0123456789abcdef0123456789abcdef'),
      /^aigenora rin operation: NOT_FOUND: .*\(HTTP 404 from POST \/control\/v2\/operations\/get\)$/,
    );
    expectOneLine(await at('observe'), /^aigenora rin observe: INVALID: no visible world matches/);
    expectOneLine(await at('observe', '--host-id', 'h', '--world', 'w', '--actor', 'a'), /^aigenora rin observe: NOT_FOUND: /);
    const wrong = await rinCli(['worlds', '--control', daemon.url], { RIN_CONTROL_TOKEN: `${RIN_TOKEN}-wrong` });
    expectOneLine(wrong, /^aigenora rin worlds: FORBIDDEN: unauthorized \(HTTP 401/);
  });
});

/** Our daemon as a user starts it: `aigenora rin serve` in its own process. */
async function startOurDaemon(dir: string, port?: number): Promise<Daemon> {
  port ??= await freePort();
  // The built-in world's policy by name, as a user starts the demo; the reference daemon gets it as a file.
  const args = [
    BIN,
    'rin',
    'serve',
    '--principal',
    PRINCIPAL,
    '--scopes',
    SCOPES.join(','),
    '--policy',
    'harbor',
    '--listen',
    `127.0.0.1:${port}`,
    '--data-dir',
    dir,
    '--json',
  ];
  return startDaemon('aigenora rin serve', process.execPath, args, { RIN_CONTROL_TOKEN: RIN_TOKEN }, port, /"url":/, 60_000);
}

const DAEMONS: [string, (dir: string) => Promise<Daemon>][] = [
  ['our daemon (aigenora rin serve)', startOurDaemon],
  ['the reference daemon', (dir) => startGoDaemon(dir)],
];

for (const [label, start] of DAEMONS) {
  describeWithReference(`rin commands against ${label} with the harbor attached by aigenora rin host`, () => {
    let daemon: Daemon;
    let host: Daemon;
    beforeAll(async () => {
      daemon = await start(tempDir('rin-cli'));
      host = await startDaemon(
        'aigenora rin host',
        process.execPath,
        [BIN, 'rin', 'host', 'harbor', '--owner', PRINCIPAL, '--control', daemon.url, '--tick-ms', '200', '--json'],
        { RIN_CONTROL_TOKEN: RIN_TOKEN },
        0,
        /"host_id":/,
        60_000,
      );
    });
    afterAll(async () => {
      await host?.stop();
      await daemon?.stop();
    });
    const at = (...args: string[]) => rinCli([...args, '--control', daemon.url]);
    const json = async (...args: string[]) => {
      const r = await at(...args, '--json');
      expect(r.err, `${r.err}\n--- daemon:\n${daemon.output()}\n--- host:\n${host.output()}`).toBe('');
      return { status: r.status, value: JSON.parse(r.out) as Record<string, any> };
    };

    it('host announced itself in one JSON line', () => {
      expect(JSON.parse(host.output().trim().split('\n')[0]!)).toEqual({ host_id: 'harbor-host', world_id: 'harbor', control: daemon.url });
    });

    it('lists the world and observes an actor', async () => {
      const worlds = await at('worlds');
      expect([worlds.status, worlds.out]).toEqual([0, 'harbor-host/harbor "Harbor" online\n']);
      const obs = await at('observe', '--actor', 'gull');
      expect(obs.status, obs.err).toBe(0);
      expect(obs.out).toMatch(/^harbor-host\/harbor\/gull sequence \d+ epoch harbor\.session:1\.1\.1 observed step \d+\n/);
      expect(obs.out).toMatch(/^fact hull harbor\.hull = 100$/m);
      const envelope = await json('observe', '--actor', 'gull');
      expect(envelope.value).toMatchObject({ host_id: 'harbor-host', world_id: 'harbor', actor_id: 'gull' });
    });

    it('asks which actor when several match', async () => {
      expectOneLine(await at('observe'), /^aigenora rin observe: INVALID: 3 actors in harbor \(gull, puffin, tern\); name one with --actor$/);
    });

    it('lists and describes capabilities', async () => {
      const list = await at('capabilities', '--actor', 'gull');
      expect(list.status).toBe(0);
      expect(
        list.out
          .trimEnd()
          .split('\n')
          .map((l) => l.split(' ')[0]),
      ).toEqual([
        'harbor.inspect@1.0.0',
        'harbor.load-cargo@1.0.0',
        'harbor.repair@1.0.0',
        'harbor.sail@1.0.0',
        'harbor.scuttle@1.0.0',
        'harbor.shift@1.0.0',
        'harbor.tow@1.0.0',
      ]);
      const spec = await json('capabilities', '--actor', 'gull', '--capability', 'harbor.repair');
      expect(spec.value).toMatchObject({ capability: { id: 'harbor.repair', version: '1.0.0' }, execution: 'queued', risk_floor: 'moderate' });
      expect(spec.value['digest']).toMatch(/^[0-9a-f]{64}$/);
      expectOneLine(
        await at('capabilities', '--actor', 'gull', '--capability', 'harbor.nope'),
        /^aigenora rin capabilities: NOT_FOUND: actor gull offers no capability harbor\.nope$/,
      );
      expectOneLine(await at('capabilities', '--actor', 'gull', '--capability', 'harbor.repair@9.9.9'), /^aigenora rin capabilities: NOT_FOUND: /);
    });

    it('submits an allowed action and waits for it', async () => {
      const r = await at('submit', '--actor', 'gull', '--capability', 'harbor.load-cargo', '--arguments', '{"crates":3}', '--wait');
      expect(r.status, r.err).toBe(0);
      expect(r.out).toMatch(/^operation operation\.[0-9a-f]{32} harbor\.load-cargo@1\.0\.0: succeeded /);
      const again = await json(
        'submit',
        '--actor',
        'gull',
        '--capability',
        'harbor.load-cargo@1.0.0',
        '--arguments',
        '{"crates":2}',
        '--wait',
        '--task-id',
        'task.cli-load',
      );
      expect(again.status).toBe(0);
      expect(again.value).toMatchObject({ status: 'succeeded', terminal: true, execution_confirmed: true, output: { cargo: 5, crates_on_dock: 35 } });
      expect(again.value['action_request']).toMatchObject({ controller_id: 'aigenora-cli', task_id: 'task.cli-load', arguments: { crates: 2 } });
    });

    it('returns the first operation for a retried idempotency key', async () => {
      const first = await json('submit', '--actor', 'gull', '--capability', 'harbor.inspect', '--idempotency-key', 'retry.one');
      const second = await json('submit', '--actor', 'gull', '--capability', 'harbor.inspect', '--idempotency-key', 'retry.one');
      expect(first.value['operation_id']).toMatch(/^operation\./);
      expect(second.value['operation_id']).toBe(first.value['operation_id']);
      const other = await at('submit', '--actor', 'gull', '--capability', 'harbor.load-cargo', '--arguments', '{"crates":1}', '--idempotency-key', 'retry.one');
      expectOneLine(other, /^aigenora rin submit: CONFLICT: .*\(HTTP 409 from POST \/control\/v2\/actions\/submit\)$/);
    });

    it('leaves an action awaiting confirmation until confirmed, then it runs', async () => {
      const r = await at('submit', '--actor', 'tern', '--capability', 'harbor.repair');
      expect(r.status, r.err).toBe(0);
      const m = /^operation (operation\.[0-9a-f]{32}) harbor\.repair@1\.0\.0: awaiting-confirmation \(aigenora rin operation confirm \1\)\n$/.exec(r.out);
      expect(m, r.out).not.toBeNull();
      const id = m![1]!;
      const got = await json('operation', 'get', id);
      expect(got.value).toMatchObject({ status: 'awaiting-confirmation', policy_decision: { result: 'require_confirmation' } });
      const confirmed = await at('operation', 'confirm', id);
      expect(confirmed.status, confirmed.err).toBe(0);
      expect(confirmed.out).toMatch(new RegExp(`^operation ${id} harbor\\.repair@1\\.0\\.0: (queued|delivered|accepted|running|succeeded)`));
      const waited = await at('operation', 'wait', id);
      expect([waited.status, waited.out]).toEqual([0, `operation ${id} harbor.repair@1.0.0: succeeded The hull is repaired.\n`]);
    });

    it('prints a policy rejection as the result, with exit 1', async () => {
      const r = await at('submit', '--actor', 'puffin', '--capability', 'harbor.scuttle');
      expect(r.status).toBe(1);
      expect(r.err).toBe('');
      expect(r.out).toMatch(/^operation operation\.[0-9a-f]{32} harbor\.scuttle@1\.0\.0: rejected policy\.profile_deny: /);
    });

    it('submits with target refs copied from an observation', async () => {
      const envelope = await json('observe', '--actor', 'gull');
      const tern = (envelope.value['resources'] as { ref: { key: string } }[]).find((r) => r.ref.key === 'tern')!.ref;
      const tow = () => at('submit', '--actor', 'gull', '--capability', 'harbor.tow', '--target-refs', JSON.stringify([tern]), '--json');
      // The host refuses to bind a tow of a boat in the harbor, before any policy is asked.
      expectOneLine(await tow(), /^aigenora rin submit: CONFLICT: .*Tern is not at sea/);
      const sail = await json('submit', '--actor', 'tern', '--capability', 'harbor.sail', '--arguments', '{"distance":50}');
      try {
        // Tern is at sea once its sail runs: the submit answers when the sail is queued, and a loaded
        // machine may deliver it later than the next command.
        const sailId = sail.value['operation_id'] as string;
        for (const deadline = Date.now() + 20_000; ;) {
          const got = await json('operation', 'get', sailId);
          if (got.value['status'] === 'running') break;
          expect(['queued', 'delivered', 'accepted'], `the sail is ${String(got.value['status'])}`).toContain(got.value['status']);
          expect(Date.now(), 'the sail did not start within 20 s').toBeLessThan(deadline);
          await new Promise((r) => setTimeout(r, 50));
        }
        // Towing another player's boat is a high-risk effect: bound with its target, then denied by policy.
        const r = await tow();
        expect(r.status, r.err).toBe(1);
        expect(r.err).toBe('');
        const op = JSON.parse(r.out) as Record<string, any>;
        expect(op).toMatchObject({ status: 'rejected', rejection_code: 'policy.profile_deny', action_request: { target_refs: [tern] } });
        expect(op['bound_action']).toMatchObject({ requested_targets: [tern], resolved_targets: [tern] });
        expect(op['bound_action'].effect_preview[0]).toMatchObject({ kind: 'harbor.tow', target_ref: tern, risk: 'high' });
      } finally {
        await at('operation', 'cancel', sail.value['operation_id'] as string);
        await at('operation', 'wait', sail.value['operation_id'] as string);
      }
    });

    it('cancels a running action', async () => {
      const sail = await json('submit', '--actor', 'puffin', '--capability', 'harbor.sail', '--arguments', '{"distance":40}');
      const id = sail.value['operation_id'] as string;
      const cancel = await at('operation', 'cancel', id);
      expect(cancel.status, cancel.err).toBe(0);
      expect(cancel.out).toMatch(new RegExp(`^operation ${id} harbor\\.sail@1\\.0\\.0: `));
      const waited = await at('operation', 'wait', id, '--timeout-ms', '20000');
      expect(waited.status).toBe(1);
      expect(waited.out).toMatch(new RegExp(`^operation ${id} harbor\\.sail@1\\.0\\.0: cancelled`));
    });

    it('stops an actor and lifts the stop', async () => {
      const stop = await at('emergency-stop', '--actor', 'tern');
      expect([stop.status, stop.out]).toEqual([0, 'emergency stop active for harbor-host/harbor/tern (revision 1)\n']);
      const refused = await at('submit', '--actor', 'tern', '--capability', 'harbor.inspect');
      expect(refused.status).toBe(1);
      expect(refused.out).toMatch(/: rejected policy\.emergency_stop: /);
      const lifted = await json('emergency-stop', '--actor', 'tern', '--off');
      expect(lifted.value).toMatchObject({
        host_id: 'harbor-host',
        world_id: 'harbor',
        actor_id: 'tern',
        active: false,
        revision: 2,
        updated_by_principal_id: PRINCIPAL,
      });
      const after = await at('submit', '--actor', 'tern', '--capability', 'harbor.inspect', '--wait');
      expect(after.status, after.out + after.err).toBe(0);
    });

    it('refuses a lease id that is not the live one, in one line', async () => {
      expectOneLine(
        await at('submit', '--actor', 'gull', '--capability', 'harbor.inspect', '--lease-id', 'controller-lease.0000'),
        /^aigenora rin submit: LEASE_EXPIRED: --lease-id controller-lease\.0000 is not the actor's live controller lease$/,
      );
    });

    it('refuses another controller while the CLI holds the lease', async () => {
      expectOneLine(
        await at('submit', '--actor', 'gull', '--capability', 'harbor.inspect', '--controller-id', 'someone-else'),
        /^aigenora rin submit: LEASE_CONFLICT: /,
      );
    });
  });
}

describeWithReference('aigenora rin serve keeps finished operations across a restart', () => {
  it('answers for an operation after SIGTERM and a new start on the same data directory', async () => {
    const dir = tempDir('rin-cli-restart');
    let daemon = await startOurDaemon(dir);
    const host = await startDaemon(
      'aigenora rin host',
      process.execPath,
      [BIN, 'rin', 'host', 'harbor', '--owner', PRINCIPAL, '--control', daemon.url, '--tick-ms', '200'],
      { RIN_CONTROL_TOKEN: RIN_TOKEN },
      0,
      /published as/,
      60_000,
    );
    try {
      const r = await rinCli([
        'submit',
        '--actor',
        'gull',
        '--capability',
        'harbor.load-cargo',
        '--arguments',
        '{"crates":4}',
        '--wait',
        '--json',
        '--control',
        daemon.url,
      ]);
      expect(r.status, r.err).toBe(0);
      const op = JSON.parse(r.out) as { operation_id: string; status: string };
      expect(op.status).toBe('succeeded');
      // SIGTERM: the host unregisters before it exits, so its world is listed offline at once.
      await host.stop();
      expect(host.child.exitCode, host.output()).toBe(0);
      expect((await rinCli(['worlds', '--control', daemon.url])).out).toBe('harbor-host/harbor "Harbor" offline\n');
      await daemon.stop();
      expect(daemon.child.exitCode, daemon.output()).toBe(0);
      // The same port: the restarted daemon is a new process on the same database.
      daemon = await startOurDaemon(dir, Number(new URL(daemon.url).port));
      const got = await rinCli(['operation', 'get', op.operation_id, '--json', '--control', daemon.url]);
      expect(got.status, got.err).toBe(0);
      expect(JSON.parse(got.out)).toMatchObject({
        operation_id: op.operation_id,
        status: 'succeeded',
        terminal: true,
        output: { cargo: 4, crates_on_dock: 36 },
      });
    } finally {
      await host.stop();
      await daemon.stop();
    }
  });
});
