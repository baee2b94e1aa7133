// One error convention (issue 34, item 3). Every command and subcommand of the command table, given a
// mistake, writes nothing on stdout and starts stderr with the README's one line,
// `aigenora <command>: <CODE>: <message>`, then exits 1 (bad input, a failure) or 2 (bad usage, a path
// that is missing or not what the command needs). The table is walked, so a new command is held to this
// the day it is added: a wrong option at least, and the cases below for what it reads. The network
// refusals (a join where nothing listens, a host whose invitation expires) run as real processes.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../ts/cli/main.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { createInvitation, encodeInvitation } from '../../ts/net/invitation.js';
import { builtinDir, findBuiltin } from '../../ts/protocols/index.js';
import { loadSpec } from '../../ts/spec/index.js';
import { BIN, cli } from '../shared/cli.js';
import { tempDir } from '../shared/tmp.js';

/** The first line of stderr for every refusal. */
const LINE = /^aigenora [a-z-]+( [a-z-]+)?: [A-Z][A-Z0-9_]+: \S/;

/** Every command as the user names it: `demo`, `trade verify`, … */
const LABELS = COMMANDS.flatMap((e) => ('subcommands' in e ? e.subcommands.map((s) => `${e.name} ${s.name}`) : [e.name]));
const GROUPS = COMMANDS.filter((e) => 'subcommands' in e).map((e) => e.name);

const dir = tempDir('cli-errors');
const p = (...parts: string[]) => join(dir, ...parts);
const data = p('data');
const missing = p('missing');
const file = p('a-file');
const emptyDir = p('empty-dir');
const empty = p('empty.json');
const nullJson = p('null.json');
const badSpec = p('bad-spec.json');
const noSnapshot = p('no-snapshot');
const nullSnapshot = p('null-snapshot');
const key = p('agent.key');

// Nothing from the machine running the tests: no registry, no control token, no data directory of its own.
const ENV: Record<string, string | undefined> = {
  AIGENORA_DATA_DIR: data,
  AIGENORA_SERVER: undefined,
  P2P_SERVER: undefined,
  AIGENORA_CONFIG: p('no-config.json'),
  RIN_CONTROL_TOKEN: undefined,
  AIGENORA_DEBUG: undefined,
};

/**
 * What each command reads, given wrong: [arguments after the command, exit status]. Every command also
 * gets an option it does not take (exit 2), so one missing here is still covered.
 */
const CASES: Record<string, [string[], 1 | 2][]> = {
  demo: [[['--json=yes'], 2]],
  conformance: [
    [[missing], 2],
    [['--backend', 'rust'], 2],
  ],
  init: [[['--data-dir', file], 2]],
  host: [
    [['--data-dir', data], 2],
    [['--protocol-dir', missing, '--data-dir', data], 2],
    [['--protocol', 'coin-flip-v1', '--options', '{"best_of":-3}', '--data-dir', data], 1],
  ],
  join: [
    [['null', '--data-dir', data], 1],
    [[`@${missing}`, '--data-dir', data], 2],
  ],
  web: [[['--listen', '0.0.0.0:0'], 2]],
  server: [
    [['--listen', 'nowhere'], 2],
    [['extra'], 2],
  ],
  validate: [
    [[missing], 2],
    [[badSpec, '{"action":"x"}'], 2],
  ],
  register: [[['--data-dir', data], 2]],
  browse: [
    [['--type', 'nope', '--data-dir', data], 2],
    [['--data-dir', data], 1],
  ],
  cancel: [
    [['--data-dir', data], 2],
    [['some-post', '--data-dir', data], 1],
  ],
  'inbox send': [[['--to', 'nothex', '--message', 'x', '--data-dir', data], 2]],
  'inbox list': [[['--data-dir', data], 1]],
  'inbox read': [[['--data-dir', data], 2]],
  'inbox delete': [[['--data-dir', data], 2]],
  'protocol hash': [
    [[empty], 1],
    [[missing], 2],
  ],
  'protocol validate': [
    [[missing], 2],
    [[badSpec, '{"action":"x"}'], 2],
  ],
  'protocol path': [
    [['no-such-protocol', '--data-dir', data], 1],
    [[], 2],
  ],
  'protocol list': [[['--data-dir', file], 2]],
  'protocol create': [[[p('new-protocol'), '--from', 'chess'], 2]],
  'protocol scaffold': [
    [[emptyDir], 2],
    [[file], 1],
    [[badSpec], 1],
  ],
  'protocol hooks': [
    [[missing], 2],
    [[badSpec], 1],
  ],
  'protocol test': [
    [[missing], 2],
    [[badSpec], 1],
    [['ts/protocols/rps', '--options', '{'], 2],
    [['ts/protocols/rps', '--options', '{"best_of":-3}'], 1],
  ],
  'protocol register': [
    [[missing, '--data-dir', data], 2],
    [[badSpec, '--data-dir', data], 2],
  ],
  'protocol fetch': [[['not-an-id', '--data-dir', data], 2]],
  'protocol search': [[['two', 'words', '--data-dir', data], 2]],
  'session list': [[['--data-dir', nullJson], 2]],
  'session events': [
    [[emptyDir], 2],
    [[file], 2],
    [[missing], 2],
  ],
  'session snapshot': [
    [[emptyDir], 2],
    [[missing], 2],
    [[noSnapshot], 2],
    [[nullSnapshot], 1],
  ],
  'session decide': [[[missing, '--value', 'rock'], 2]],
  'session abort': [
    [[emptyDir], 2],
    [[missing], 2],
  ],
  'session web': [
    [[emptyDir], 2],
    [['--listen', '0.0.0.0:0'], 2],
  ],
  'rin serve': [[['--principal', 'alice'], 2]],
  'rin host': [[['atlantis', '--owner', 'alice'], 2]],
  'rin worlds': [[[], 2]],
  'rin observe': [[[], 2]],
  'rin capabilities': [[[], 2]],
  'rin submit': [[[], 2]],
  'rin operation': [[['frobnicate'], 2]],
  'rin emergency-stop': [[[], 2]],
  'aira mcp': [[['--authority', 'nope'], 2]],
  'aira run': [
    [['--task', missing], 2],
    [['--task', empty], 1],
  ],
  'aira matrix': [[['extra'], 2]],
  'receipt verify': [[[missing], 2]],
  'proof verify': [
    [[missing], 2],
    [[file], 2],
  ],
  'trade new': [
    [['NOT_A_TYPE', '--body', nullJson], 2],
    [['DEAL'], 2],
  ],
  'trade keygen': [[['--out', p('k')], 2]],
  'trade sign': [
    [[missing, '--key', key], 2],
    [[nullJson, '--key', key], 1],
  ],
  'trade verify': [[[missing], 2]],
  'trade state': [[[nullJson], 2]],
  'trade manifest': [[[file], 2]],
};

beforeAll(async () => {
  mkdirSync(emptyDir, { recursive: true });
  writeFileSync(file, 'not a directory, nor JSON\n');
  writeFileSync(empty, '');
  writeFileSync(nullJson, 'null\n');
  writeFileSync(badSpec, JSON.stringify({ name: '', messages: [] }));
  mkdirSync(noSnapshot);
  writeFileSync(join(noSnapshot, 'events.jsonl'), '');
  mkdirSync(nullSnapshot);
  writeFileSync(join(nullSnapshot, 'snapshot.json'), 'null\n');
  for (const args of [
    ['init', '--data-dir', data],
    ['trade', 'keygen', '--signer', 'agent:errors', '--out', key],
  ]) {
    const r = await cli(args, { env: ENV });
    expect(r.status, r.stderr).toBe(0);
  }
}, 60_000);

/** One refusal as the convention has it: stdout empty, the line first on stderr, the status, no stack. */
async function refused(label: string, args: string[], status: 1 | 2): Promise<void> {
  const r = await cli([...label.split(' '), ...args], { env: ENV });
  const what = `aigenora ${label} ${args.join(' ')}\n--- stdout\n${r.stdout}--- stderr\n${r.stderr}`;
  expect(r.stdout, what).toBe('');
  expect(r.stderr.split('\n')[0], what).toMatch(LINE);
  expect(r.stderr.startsWith(`aigenora ${label}: `), what).toBe(true);
  expect(r.status, what).toBe(status);
  expect(r.stderr, what).not.toMatch(/^\s+at /m);
  expect(r.stderr, what).not.toMatch(/INTERNAL_ERROR/);
}

describe('every command refuses in one convention', () => {
  it('the table of cases names only commands that exist', () => {
    expect(LABELS.length).toBeGreaterThanOrEqual(40);
    expect(Object.keys(CASES).filter((l) => !LABELS.includes(l))).toEqual([]);
  });

  it.each(LABELS)('aigenora %s', async (label) => {
    await refused(label, ['--no-such-option'], 2);
    for (const [args, status] of CASES[label] ?? []) await refused(label, args, status);
  });

  it.each(GROUPS)('aigenora %s with an unknown subcommand', async (group) => {
    const r = await cli([group, 'frobnicate'], { env: ENV });
    expect([r.status, r.stdout]).toEqual([2, '']);
    expect(r.stderr.split('\n')[0]).toMatch(new RegExp(`^aigenora ${group}: UNKNOWN_SUBCOMMAND: "frobnicate" `));
  });

  it('an unknown command', async () => {
    const r = await cli(['frobnicate'], { env: ENV });
    expect([r.status, r.stdout]).toEqual([2, '']);
    expect(r.stderr.split('\n')[0]).toBe('aigenora: UNKNOWN_COMMAND: "frobnicate" is not a command');
  });

  it('a usage mistake is followed by the usage line; a spec that is not valid by each of its problems', async () => {
    const usage = await cli(['trade', 'verify'], { env: ENV });
    expect(usage.stderr).toMatch(/^aigenora trade verify: USAGE: expected one envelope FILE\nusage: aigenora trade verify FILE/);
    const spec = await cli(['protocol', 'hooks', badSpec], { env: ENV });
    expect(spec.stderr).toMatch(
      /^aigenora protocol hooks: SPEC_INVALID: \S+ is not a valid spec: 2 error\(s\), first SPEC_NAME_MISSING at \/name\nerror SPEC_NAME_MISSING at \/name: .*\nerror SPEC_MESSAGES_MISSING at \/messages: /,
    );
  });

  it('--json changes where nothing goes: a refusal is still one line on stderr and nothing on stdout', async () => {
    for (const args of [
      ['protocol', 'path', 'no-such-protocol', '--data-dir', data, '--json'],
      ['protocol', 'hash', empty, '--json'],
      ['trade', 'sign', nullJson, '--key', key, '--json'],
    ]) {
      const r = await cli(args, { env: ENV });
      expect([r.status, r.stdout], args.join(' ')).toEqual([1, '']);
      expect(r.stderr.split('\n')[0], args.join(' ')).toMatch(LINE);
    }
  });
});

/** `aigenora …args` as a new process, with the exit status and both streams. */
function run(args: string[], timeoutMs = 30_000): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, AIGENORA_DEBUG: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`aigenora ${args.join(' ')} did not end in ${timeoutMs} ms\n${stdout}${stderr}`));
    }, timeoutMs);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** A loopback TCP port nothing listens on: bound by the OS, then released. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe('the network refusals, as real processes on loopback', () => {
  it('a join where nothing listens: CONNECTION_REFUSED on stderr (not a handshake timeout), nothing on stdout, exit 1', async () => {
    const c = getCrypto();
    const seed = new Uint8Array(32).fill(34);
    const peerId = peerIdFromPrivateKey(await generateKeyPairFromSeed('Ed25519', seed)).toString();
    const port = await closedPort();
    const protocolId = loadSpec(c, builtinDir(findBuiltin('coin-flip-v1')!)).protocolId!;
    const host = c.ed25519Keypair(seed);
    const invitation = encodeInvitation(
      c,
      createInvitation(c, {
        host,
        protocolId,
        ticket: { peer_id: peerId, addrs: [`/ip4/127.0.0.1/tcp/${port}`, `/ip4/127.0.0.1/tcp/${port}/ws`] },
        ttlMinutes: 5,
      }),
    );
    host.dispose();
    const r = await run(['join', invitation, '--data-dir', data, '--json']);
    expect(r.stdout, r.stderr).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^aigenora join: CONNECTION_REFUSED: connection refused at every address of the host: .*127\\.0\\.0\\.1:${port}`));
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.status).toBe(1);
  }, 40_000);

  it('a host whose invitation expires unanswered: the invitation on stdout (a line of JSON), INVITATION_EXPIRED on stderr, exit 1', async () => {
    const r = await run(['host', '--protocol', 'coin-flip-v1', '--invitation-ttl-minutes', '0.01', '--data-dir', data, '--json']);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines, r.stdout + r.stderr).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      role: 'host',
      invitation: expect.stringMatching(/^aigenora1\./),
      addrs: expect.any(Array),
      expires_at: expect.any(String),
    });
    expect(r.stderr).toMatch(
      /^aigenora host: INVITATION_EXPIRED: the invitation expired at \S+ (before a guest completed the handshake|and no guest joined)\n$/,
    );
    expect(r.status).toBe(1);
  }, 40_000);
});
