// `aigenora aira run|matrix|mcp` as a user meets them: results on stdout, refusals as one line on stderr.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { META_OPS, RUNTIME_STATES, Trace } from '../../ts/aira/schema.js';
import { tempDir } from '../shared/tmp.js';
import { BIN, libraryTrace } from './mcp-harness.js';
import { cli as runCli } from '../shared/cli.js';

// The spawned smoke test starts a new Node process (tsx compiles the CLI on start): slow on a loaded machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

/** In process: main() with the command's own output and exit status. */
async function cli(args: string[]): Promise<{ status: number | null; out: string; err: string }> {
  const r = await runCli(['aira', ...args]);
  return { status: r.status, out: r.stdout, err: r.stderr };
}

/** As a user runs it: a new process. */
function spawned(args: string[]): Promise<{ status: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [BIN, 'aira', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('close', (status) => resolve({ status, out, err }));
  });
}

const dir = tempDir('aira-cli');
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

describe('aigenora aira matrix', () => {
  it('prints the 81 cells, and the descriptor with --json', async () => {
    const text = await spawned(['matrix']);
    expect(text.status, text.err).toBe(0);
    const lines = text.out.trim().split('\n');
    expect(lines[0]).toMatch(/^Meta-operation Contract 1\.0\.0 \(trace 0\.5\.0\) matrix:sha256:[0-9a-f]{64}$/);
    expect(lines).toHaveLength(82);
    // Two cells of M36 as the plan states them.
    expect(lines).toContain('observe   catalog.describe   refuse DISCOVERY_REQUIRED -> next catalog.search');
    expect(lines).toContain('observe   catalog.search     admit -> discover');
    const json = await cli(['matrix', '--json']);
    expect(json.status).toBe(0);
    const m = JSON.parse(json.out) as {
      contractVersion: string;
      traceVersion: string;
      matrixDigest: string;
      descriptor: { cells: Record<string, Record<string, unknown>> };
    };
    expect(m.contractVersion).toBe('1.0.0');
    expect(m.traceVersion).toBe('0.5.0');
    expect(Object.keys(m.descriptor.cells).sort()).toEqual([...RUNTIME_STATES].sort());
    for (const s of RUNTIME_STATES) expect(Object.keys(m.descriptor.cells[s]!).sort()).toEqual([...META_OPS].sort());
    expect(lines[0]).toContain(m.matrixDigest);
  });
});

describe('aigenora aira run', () => {
  let reference: Trace;
  beforeAll(async () => {
    reference = await libraryTrace();
  });

  it('drives the bracket demo to completed and prints the library trace', async () => {
    const json = await cli(['run', '--json']);
    expect(json.status, json.err).toBe(0);
    expect(Trace.parse(JSON.parse(json.out))).toEqual(reference);
    const text = await cli(['run']);
    expect(text.status).toBe(0);
    const lines = text.out.trim().split('\n');
    expect(lines[0]).toBe(`task ${reference.taskId} (contract 1.0.0, trace 0.5.0, ${reference.matrixDigest})`);
    expect(lines).toHaveLength(reference.events.length + 2);
    expect(lines.at(-1)).toMatch(/^terminal completed \(COMPLETED\) at \d+: /);
  });

  it('runs a script file, exiting 1 when the task does not complete', async () => {
    const script = file(
      'commit-first.json',
      JSON.stringify([
        { op: 'catalog.search', input: { requestId: 's1' } },
        { op: 'model.commit', input: { requestId: 'c1', candidateId: `cand:sha256:${'1'.repeat(64)}`, validationToken: `vtok:sha256:${'2'.repeat(64)}` } },
      ]),
    );
    const r = await cli(['run', '--script', script, '--json']);
    expect(r.status).toBe(1);
    const trace = Trace.parse(JSON.parse(r.out));
    expect(trace.terminal).toBeNull();
    expect(trace.events[1]).toMatchObject({ requestId: 'c1', decision: 'rejected', fromState: 'discover', toState: 'discover' });
    expect(trace.events[1]!.code).toMatch(/_REQUIRED$/);
  });

  it('takes a task file; a task the runtime refuses is one typed line', async () => {
    const base = (await import('../../ts/aira/doc/index.js')).bracketTask();
    const ok = file('task.json', JSON.stringify({ ...base, nonce: 'cli-test' }));
    const r = await cli(['run', '--task', ok, '--json']);
    expect(r.status, r.err).toBe(0);
    expect(Trace.parse(JSON.parse(r.out)).taskId).not.toBe((await libraryTrace()).taskId);
    const loose = file('loose.json', JSON.stringify({ ...base, protocol: { requiredDiscoverySequence: ['catalog.describe'] } }));
    const bad = await cli(['run', '--task', loose]);
    expect(bad.status).toBe(1);
    expect(bad.out).toBe('');
    expect(bad.err).toMatch(/^aigenora aira run: [A-Z_]+: .+\n$/);
  });
});

describe('mistakes end in one line', () => {
  mkdirSync(join(dir, 'a-dir'));
  const empty = file('empty.json', '');
  const notJson = file('not.json', '{"intentFrame":');
  const array = file('array.json', '[]');
  const badScript = file('bad-script.json', JSON.stringify([{ op: 'catalog.search', input: { requestId: '${nowhere.data.x}' } }]));
  const cases: Array<[string, string[], number, RegExp]> = [
    ['an empty task file', ['run', '--task', empty], 1, /TASK_FILE_INVALID: the task .* is empty/],
    ['a task file that is not JSON', ['run', '--task', notJson], 1, /TASK_FILE_INVALID: the task .* is not JSON/],
    ['a task file that is not an object', ['run', '--task', array], 1, /TASK_FILE_INVALID: the task .* must be a JSON object/],
    ['a missing task file', ['run', '--task', join(dir, 'missing.json')], 2, /FILE_NOT_FOUND/],
    ['a directory for a task file', ['run', '--task', join(dir, 'a-dir')], 2, /FILE_NOT_REGULAR/],
    ['a script that is not a list of calls', ['run', '--script', array], 1, /SCRIPT_FILE_INVALID/],
    ['a script naming an answer that never came', ['run', '--script', badScript], 1, /SCRIPT_REF_UNRESOLVED/],
    ['an empty task file for mcp', ['mcp', '--task', empty], 1, /TASK_FILE_INVALID/],
    ['an empty task file for mcp over HTTP', ['mcp', '--http', '127.0.0.1:0', '--task', empty], 1, /TASK_FILE_INVALID/],
    ['a non-loopback address', ['mcp', '--http', '0.0.0.0:8080'], 2, /only on loopback/],
    ['an address that is not host:port', ['mcp', '--http', 'localhost'], 2, /must be host:port/],
    ['an unknown authority', ['mcp', '--authority', 'cad'], 2, /--authority must be one of doc, rin/],
    ['too many bound capabilities', ['mcp', '--bind-capabilities', '21'], 2, /--bind-capabilities must be an integer from 1 to 20/],
    ['a TTL without bindings', ['mcp', '--bind-ttl', '5'], 2, /--bind-ttl needs --bind-capabilities/],
    ['a --db that is not PostgreSQL', ['mcp', '--db', 'mysql://x'], 2, /--db must be a postgres/],
    ['rin without a task', ['mcp', '--authority', 'rin'], 2, /needs --task FILE/],
    ['a stray argument', ['matrix', 'extra'], 2, /unexpected argument/],
  ];
  it.each(cases)('%s', async (_what, args, status, message) => {
    const r = await cli(args);
    expect(r.status, r.err).toBe(status);
    expect(r.out).toBe('');
    expect(r.err.split('\n')[0]).toMatch(message);
    expect(r.err).not.toMatch(/^\s+at /m);
    expect(r.err).not.toMatch(/INTERNAL_ERROR/);
  });
});
