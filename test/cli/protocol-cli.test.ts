// The protocol library and contract commands end to end: init, list, path, hash, validate, create,
// scaffold and the skeleton refusal, with exit codes, --json and file modes.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../shared/tmp.js';

import { cli, spawnCli } from '../shared/cli.js';

const tmp = tempDir('protocol-cli');
const run = async (args: string[], env: Record<string, string> = {}) => {
  const r = await cli(args, { env });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
// The skeleton test rewrites a hooks module between loads: each load must be a new process, as for a user.
const runSpawned = (args: string[], env: Record<string, string> = {}) => {
  const r = spawnCli(args, { env });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const data = join(tmp, 'agent');

describe('aigenora init and the library', () => {
  it('creates the data dir (0700), key.json (0600, reference layout) and the built-ins under their ids', async () => {
    const r = await run(['init', '--json'], { AIGENORA_DATA_DIR: data });
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.public_key).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(data).mode & 0o777).toBe(0o700);
    expect(statSync(join(data, 'key.json')).mode & 0o777).toBe(0o600);
    const key = JSON.parse(readFileSync(join(data, 'key.json'), 'utf8'));
    expect(Object.keys(key).sort()).toEqual(['private_key', 'public_key']);
    expect(key.public_key).toBe(j.public_key);
    expect(r.out).not.toContain(key.private_key);
    const index = JSON.parse(readFileSync(join(data, 'protocols', 'index.json'), 'utf8'));
    expect(index).toMatchObject({ version: 2, layout: 'sha256-8-56' });
    for (const p of index.protocols) {
      expect(p.path).toBe(`${p.protocol_id.slice(0, 8)}/${p.protocol_id.slice(8)}`);
      expect(existsSync(join(data, 'protocols', p.path, 'spec.json'))).toBe(true);
      const hash = await run(['protocol', 'hash', join(data, 'protocols', p.path)]);
      expect(hash.out.trim(), p.alias).toBe(p.protocol_id);
    }
    // A second init keeps the identity.
    expect(JSON.parse((await run(['init', '--json', '--data-dir', data])).out).public_key).toBe(j.public_key);
  });

  it('lists and resolves protocols by alias or id prefix', async () => {
    expect((await run(['protocol', 'list', '--data-dir', data])).out).toMatch(/^rps-v1 +43a80648/m);
    const p = await run(['protocol', 'path', '43a80648', '--data-dir', data]);
    expect(p.out.trim()).toBe(join(data, 'protocols', '43a80648', '1a8e8cd00bc89f4676756c9be9081c0dd8392bee8e3534da41daa55f'));
    expect((await run(['protocol', 'path', 'rps-v1', '--data-dir', data])).out).toBe(p.out);
    expect((await run(['protocol', 'path', 'no-such', '--data-dir', data])).code).toBe(1);
    const hooks = await run(['protocol', 'hooks', p.out.trim()]);
    expect([hooks.code, hooks.out]).toEqual([0, expect.stringMatching(/^ready: simultaneous_round hooks/)]);
  });

  it('protocol test takes what host --protocol takes: an alias or id prefix of the library, or a built-in alias with no library', async () => {
    const empty = join(tmp, 'no-library');
    for (const [ref, dir] of [
      ['rps-v1', empty],
      ['43a80648', data],
      ['coin-flip-v1', data],
    ] as const) {
      const r = await run(['protocol', 'test', ref, '--data-dir', dir, '--json', '--out', join(tmp, `t-${ref}`)]);
      expect(r.code, `${ref}: ${r.err}`).toBe(0);
      expect(JSON.parse(r.out)).toMatchObject({ ok: true, host: { completed: true }, guest: { completed: true } });
    }
    const rps = JSON.parse((await run(['protocol', 'test', 'rps-v1', '--data-dir', empty, '--json', '--out', join(tmp, 't-rps-again')])).out) as {
      protocol_id: string;
    };
    expect(rps.protocol_id).toBe('43a806481a8e8cd00bc89f4676756c9be9081c0dd8392bee8e3534da41daa55f');
    const none = await run(['protocol', 'test', 'no-such-v1', '--data-dir', empty]);
    expect(none.code).toBe(2);
    expect(none.out).toBe('');
    expect(none.err).toMatch(/^aigenora protocol test: (?:[A-Z_]+: )?no-such-v1: not a directory, nor a built-in protocol/);
  });
});

describe('hash and validate', () => {
  it('validate exits 0/1/2 and lists every error with its pointer', async () => {
    const bad = join(tmp, 'bad.json');
    writeFileSync(bad, JSON.stringify({ name: '', messages: [{ name: 'a', direction: 'up', fields: { action: { type: 'enum', values: ['a'] } } }] }));
    const r = await run(['validate', bad, '--json']);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out);
    expect(j.ok).toBe(false);
    expect(j.issues.map((i: { code: string; pointer: string }) => [i.code, i.pointer])).toEqual([
      ['SPEC_NAME_MISSING', '/name'],
      ['MESSAGE_DIRECTION_INVALID', '/messages/0/direction'],
    ]);
    expect((await run(['protocol', 'validate', join(tmp, 'missing')])).code).toBe(2);
    expect((await run(['validate', 'ts/protocols/qna'])).code).toBe(0);
  });

  it('hash warns about an unknown spec_version but still prints the id', async () => {
    const v2 = join(tmp, 'v2.json');
    writeFileSync(v2, JSON.stringify({ name: 'x', spec_version: '2.0', messages: [] }));
    const r = await run(['protocol', 'hash', v2]);
    expect(r.code).toBe(0);
    expect(r.out.trim()).toMatch(/^[0-9a-f]{64}$/);
    expect(r.err).toMatch(/warning: spec_version "2.0" is not supported/);
    expect((await run(['validate', v2])).code).toBe(1);
  });
});

describe('validate a message', () => {
  const rps = 'ts/protocols/rps';
  const reveal = { action: 'reveal', round: 1, choice: 'rock', nonce: '0123456789abcdef' };
  const check = async (msg: string, ...flags: string[]) => {
    const r = await run(['validate', rps, msg, '--json', ...flags]);
    return { code: r.code, err: r.err, out: r.out ? JSON.parse(r.out) : undefined };
  };

  it('exits 0 for a valid message, naming the declared message it matched', async () => {
    expect(await check(JSON.stringify(reveal), '--direction', 'guest_to_host')).toMatchObject({ code: 0, out: { ok: true, message: 'reveal' } });
    const plain = await run(['validate', rps, JSON.stringify(reveal)]);
    expect([plain.code, plain.out]).toEqual([0, 'valid: message "reveal" of Rock-Paper-Scissors\n']);
  });

  it('exits 1 with each problem, its pointer and code, judging numbers as written', async () => {
    const r = await check('{"action":"reveal","round":1.0,"choice":"lizard","nonce":"0123456789abcdef","x":1}', '--direction', 'guest_to_host');
    expect(r.code).toBe(1);
    expect(r.out.errors.map((e: { code: string; pointer: string }) => [e.code, e.pointer]).sort()).toEqual([
      ['FIELD_RANGE', '/choice'],
      ['FIELD_TYPE', '/round'],
      ['FIELD_UNDECLARED', '/x'],
    ]);
    const text = await run(['validate', rps, '{"action":"reveal","round":1e0,"choice":"rock","nonce":"0123456789abcdef"}']);
    expect([text.code, text.out]).toEqual([1, expect.stringMatching(/^error FIELD_TYPE at \/round: .*\ninvalid: 1 error\(s\)\n$/)]);
    expect((await check('{"action":"join","best_of":3}', '--direction', 'host_to_guest')).out.errors[0].code).toBe('MESSAGE_ACTION_UNKNOWN');
    expect((await check('{"action":"join","best_of":3}', '--direction', 'guest_to_host')).code).toBe(0);
    expect((await check('{"action":"reveal","action":"reveal"}')).out.errors[0].code).toBe('MESSAGE_NOT_JSON');
    expect((await check('{"action":')).out.errors[0].code).toBe('MESSAGE_NOT_JSON');
    expect((await check('[1]')).out.errors[0].code).toBe('MESSAGE_NOT_OBJECT');
  });

  it('--message picks the declared message by name, as the reference does', async () => {
    const { action: _, ...bare } = reveal;
    expect((await check(JSON.stringify(bare), '--message', 'reveal')).out.errors.map((e: { code: string; pointer: string }) => [e.code, e.pointer])).toEqual([
      ['FIELD_REQUIRED', '/action'],
    ]);
    expect(await check(JSON.stringify(reveal), '--message', 'reveal')).toMatchObject({ code: 0, out: { message: 'reveal' } });
    expect((await check(JSON.stringify(reveal), '--message', 'nope')).out.errors[0].code).toBe('MESSAGE_ACTION_UNKNOWN');
  });

  it('exits 2, with one line on stderr, for usage mistakes and a spec that is not valid', async () => {
    for (const args of [
      ['validate', rps, '{}', '--direction', 'up'],
      ['validate', rps, '--message', 'reveal'],
      ['validate', rps, '{}', '{}'],
      ['validate', join(tmp, 'missing'), '{}'],
    ]) {
      const r = await run(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toMatch(/\S/);
    }
    const bad = join(tmp, 'bad-for-message.json');
    writeFileSync(bad, JSON.stringify({ name: '', messages: [] }));
    const r = await run(['validate', bad, '{"action":"x"}']);
    expect([r.code, r.out]).toEqual([2, '']);
    expect(r.err).toMatch(/SPEC_NAME_MISSING/);
  });
});

describe('create, scaffold and the skeleton refusal', () => {
  it('refuses the generated skeleton until it is implemented', () => {
    const dir = join(tmp, 'mine');
    const created = runSpawned(['protocol', 'create', dir, '--from', 'connect4-v1', '--name', 'My Four', '--json']);
    expect(created.code, created.err).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'spec.json'), 'utf8')).name).toBe('My Four');
    const sidecar = JSON.parse(readFileSync(join(dir, '.aigenora-hooks.json'), 'utf8'));
    expect(sidecar).toMatchObject({ generator_version: 'ts-v1', flow_mode: 'session_loop', protocol_id: JSON.parse(created.out).protocol_id });
    const refused = runSpawned(['protocol', 'hooks', dir, '--json']);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.out)).toMatchObject({
      ok: false,
      code: 'HOOKS_SKELETON',
      pending: expect.arrayContaining(['proto_host_handle', 'proto_guest_first_action']),
    });
    expect(runSpawned(['protocol', 'hooks', dir, '--allow-skeleton-hooks']).code).toBe(0);
    expect(runSpawned(['protocol', 'hooks', dir], { AIGENORA_ALLOW_SKELETON_HOOKS: '1' }).code).toBe(0);
    // Writing the hooks (here: the built-in implementation) clears every rule.
    writeFileSync(
      join(dir, 'hooks.mts'),
      `export { default } from ${JSON.stringify(new URL('../../ts/protocols/connect-four/hooks.ts', import.meta.url).href)};\n`,
    );
    expect(runSpawned(['protocol', 'hooks', dir]).code).toBe(0);
    expect(runSpawned(['protocol', 'scaffold', dir]).code).toBe(2); // keeps the implemented module
    expect(runSpawned(['protocol', 'scaffold', dir, '--force']).code).toBe(0);
    expect(runSpawned(['protocol', 'hooks', dir]).code).toBe(1);
    expect(runSpawned(['protocol', 'create', dir, '--from', 'rps-v1']).code).toBe(2);
    expect(runSpawned(['protocol', 'create', join(tmp, 'x'), '--from', 'chess']).code).toBe(2);
  });
});
