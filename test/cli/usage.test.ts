// The CLI's contract with a careless user: every option a command accepts is in its usage line, every
// command can answer in JSON, and mistakes end in one line on stderr with exit 1 or 2, never a stack.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Command } from '../../ts/cli/args.js';
import { COMMANDS } from '../../ts/cli/main.js';
import { tempDir } from '../shared/tmp.js';

import { BIN, cli as inProcess } from '../shared/cli.js';

async function allCommands(): Promise<{ label: string; cmd: Command }[]> {
  const out: { label: string; cmd: Command }[] = [];
  for (const e of COMMANDS) {
    if ('subcommands' in e) for (const s of e.subcommands) out.push({ label: `${e.name} ${s.name}`, cmd: await s.load() });
    else out.push({ label: e.name, cmd: await e.load() });
  }
  return out;
}

/** In process: the same main(), output and exit status as the command, without starting Node. */
async function cli(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; out: string; err: string }> {
  const r = await inProcess(args, { env });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

/** As a user runs it: bin/aigenora.mjs in a new process, with its launcher and process guards. */
function spawned(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('close', (status) => resolve({ status, out, err }));
  });
}

describe('usage lines', () => {
  it('name every option each command accepts, and every command takes --json', async () => {
    const commands = await allCommands();
    expect(commands.length).toBeGreaterThanOrEqual(25);
    const missing: string[] = [];
    for (const { label, cmd } of commands) {
      expect(cmd.usage.startsWith(`aigenora ${label}`), label).toBe(true);
      for (const flag of Object.keys(cmd.flags)) if (!new RegExp(`--${flag}(?![\\w-])`).test(cmd.usage)) missing.push(`${label}: --${flag}`);
      if (cmd.flags['json'] !== 'boolean') missing.push(`${label}: no --json`);
    }
    expect(missing).toEqual([]);
  });
});

describe('mistakes end in one line', () => {
  const dir = tempDir('cli-mistakes');
  const file = join(dir, 'a-file');
  writeFileSync(file, 'not a directory\n');
  const empty = join(dir, 'empty.json');
  writeFileSync(empty, '');
  const nullJson = join(dir, 'null.json');
  writeFileSync(nullJson, 'null\n');
  mkdirSync(join(dir, 'a-dir'));
  symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'));
  // 'verdict': a verifier's negative answer, which is its result (stdout); 'refusal': why it did nothing (stderr).
  const cases: [string, 'refusal' | 'verdict', string[]][] = [
    ['unknown command', 'refusal', ['frobnicate']],
    ['unknown subcommand', 'refusal', ['trade', 'frobnicate']],
    ['unknown option', 'refusal', ['protocol', 'list', '--frobnicate']],
    ['missing option value', 'refusal', ['trade', 'verify', empty, '--keys']],
    ['a missing file', 'refusal', ['trade', 'verify', join(dir, 'missing.json')]],
    ['a directory for a file', 'refusal', ['trade', 'verify', join(dir, 'a-dir')]],
    ['an empty envelope file', 'verdict', ['trade', 'verify', empty]],
    ['a null envelope to sign', 'refusal', ['trade', 'sign', nullJson, '--key', join(dir, 'missing.key')]],
    ['an empty spec', 'refusal', ['protocol', 'hash', empty]],
    ['a file where a protocol directory is expected', 'refusal', ['protocol', 'scaffold', file]],
    ['a dangling symlink', 'refusal', ['protocol', 'validate', join(dir, 'dangling')]],
    ['a transcript that is not one', 'verdict', ['receipt', 'verify', nullJson]],
    ['a proof that is not one', 'refusal', ['proof', 'verify', file]],
    ['an invitation that is not one', 'refusal', ['join', 'null', '--data-dir', join(dir, 'data')]],
    ['an invitation file that is missing', 'refusal', ['join', `@${join(dir, 'missing')}`, '--data-dir', join(dir, 'data')]],
    ['a data dir that is a file', 'refusal', ['init', '--data-dir', file]],
    ['--options that are not JSON', 'refusal', ['protocol', 'test', 'ts/protocols/rps', '--options', '{']],
  ];
  it.each(cases)('%s', async (_what, kind, args) => {
    const r = await cli(args);
    expect([1, 2], `${r.status} ${r.err}`).toContain(r.status);
    expect(r.out + r.err).not.toMatch(/^\s+at /m);
    expect(r.out + r.err).not.toMatch(/INTERNAL_ERROR:/);
    if (kind === 'refusal') {
      expect(r.err).toMatch(/\S/);
      expect(r.out).toBe('');
    } else expect(r.out).toMatch(/\S/);
  });

  it('a new process gives the same status and output as main() in process', async () => {
    for (const [, , args] of cases.filter(([what]) => ['unknown command', 'a missing file', 'an empty envelope file'].includes(what))) {
      const [a, b] = [await cli(args), await spawned(args)];
      expect(b, args.join(' ')).toEqual(a);
    }
  });

  it('a host whose sessions cannot be written refuses before it publishes an invitation', async () => {
    const data = join(dir, 'host-data');
    expect((await cli(['init', '--data-dir', data])).status).toBe(0);
    writeFileSync(join(data, 'sessions'), 'a file where the sessions directory goes\n');
    const invitation = join(dir, 'never-published.txt');
    const r = await cli(['host', '--protocol', 'rps-v1', '--data-dir', data, '--invitation-file', invitation, '--listen', '/ip4/127.0.0.1/tcp/0']);
    expect(r.status).toBe(2);
    expect(r.err).toMatch(/^aigenora host: FILE_WRITE_FAILED: cannot create the sessions directory .*sessions/);
    expect(r.out).toBe('');
    expect(existsSync(invitation)).toBe(false);
  });

  it('an internal error is one line, with the stack only under AIGENORA_DEBUG=1', async () => {
    // A protocol directory whose hooks module throws while loading: not a failure the CLI can name.
    const p = join(dir, 'broken');
    mkdirSync(p);
    const created = await cli(['protocol', 'create', p, '--from', 'human-chat-v1']);
    expect(created.status, created.err).toBe(0);
    writeFileSync(join(p, 'hooks.mjs'), 'throw new TypeError("boom while loading");\n');
    writeFileSync(join(p, 'hooks.mts'), 'throw new TypeError("boom while loading");\n');
    const r = await spawned(['protocol', 'hooks', p]);
    expect(r.status).toBe(1);
    expect(r.err).toBe('aigenora protocol hooks: INTERNAL_ERROR: boom while loading (AIGENORA_DEBUG=1 shows the stack)\n');
    const d = await spawned(['protocol', 'hooks', p], { AIGENORA_DEBUG: '1' });
    expect(d.status).toBe(1);
    expect(d.err).toMatch(/^aigenora protocol hooks: INTERNAL_ERROR: boom while loading\n/);
    expect(d.err).toMatch(/^\s+at /m);
  });
});
