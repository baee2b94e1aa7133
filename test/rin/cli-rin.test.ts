// `aigenora rin …` as a user runs it, against a running control daemon: human lines, --json answers as
// the daemon gave them, and every mistake or refusal as one line on stderr.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../interop/harness.js';
import { describeWithReference, RIN_TOKEN, startGoDaemon, type Daemon } from '../interop/rin-harness.js';
import { tempDir } from '../shared/tmp.js';

interface Ran {
  status: number | null;
  out: string;
  err: string;
}

export function rinCli(args: string[], env: Record<string, string | undefined> = { RIN_CONTROL_TOKEN: RIN_TOKEN }): Promise<Ran> {
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
    const r = await rinCli(['--help']);
    expect(r.status).toBe(0);
    for (const sub of ['worlds', 'observe', 'capabilities', 'submit', 'operation', 'emergency-stop']) expect(r.out).toMatch(new RegExp(`rin ${sub} `));
  });

  it('refuses to run without the token, or with a short one, before sending anything', async () => {
    expectOneLine(await rinCli(['worlds'], {}), /^aigenora rin worlds: \$RIN_CONTROL_TOKEN is not set/, 2);
    expectOneLine(await rinCli(['worlds'], { RIN_CONTROL_TOKEN: 'short' }), /^aigenora rin worlds: \$RIN_CONTROL_TOKEN must contain at least 32 bytes/, 2);
  });

  it('takes no token flag (it would show in ps)', async () => {
    expectOneLine(await rinCli(['worlds', '--token', RIN_TOKEN]), /unknown option --token/, 2);
  });

  it('refuses a control URL that is not a loopback http origin', async () => {
    for (const url of ['http://192.168.1.2:7375', 'https://127.0.0.1:7375', 'http://127.0.0.1:7375/x']) {
      expectOneLine(await rinCli(['worlds', '--control', url]), /^aigenora rin worlds: --control: control URL must be a plain loopback http origin/, 2);
    }
  });

  it('names a daemon that is not there', async () => {
    expectOneLine(await rinCli(['worlds', '--control', 'http://127.0.0.1:9']), /^aigenora rin worlds: unavailable: POST \/control\/v2\/worlds: cannot reach the control daemon at http:\/\/127\.0\.0\.1:9/);
  });

  it('refuses bad arguments before contacting anyone', async () => {
    expectOneLine(await rinCli(['submit', '--control', 'http://127.0.0.1:9']), /--capability is required/, 2);
    expectOneLine(await rinCli(['submit', '--capability', 'a.b', '--arguments', '{"a":1,"a":2}', '--control', 'http://127.0.0.1:9']), /--arguments is not strict JSON/, 2);
    expectOneLine(await rinCli(['submit', '--capability', 'a.b', '--arguments', '[1]', '--control', 'http://127.0.0.1:9']), /--arguments must be a JSON object/, 2);
    expectOneLine(await rinCli(['submit', '--capability', 'a.b@', '--control', 'http://127.0.0.1:9']), /--capability must be ID or ID@VERSION/, 2);
    expectOneLine(await rinCli(['submit', '--capability', 'a.b', '--target-refs', '{}', '--control', 'http://127.0.0.1:9']), /--target-refs must be a JSON array/, 2);
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
    expectOneLine(await at('operation', 'get', 'operation.0123456789abcdef0123456789abcdef'), /^aigenora rin operation: not_found: .*\(HTTP 404 from POST \/control\/v2\/operations\/get\)$/);
    expectOneLine(await at('observe'), /^aigenora rin observe: invalid: no visible world matches/);
    expectOneLine(await at('observe', '--host-id', 'h', '--world', 'w', '--actor', 'a'), /^aigenora rin observe: not_found: /);
    const wrong = await rinCli(['worlds', '--control', daemon.url], { RIN_CONTROL_TOKEN: `${RIN_TOKEN}-wrong` });
    expectOneLine(wrong, /^aigenora rin worlds: forbidden: unauthorized \(HTTP 401/);
  });
});
