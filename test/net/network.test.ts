// Network sessions over libp2p on loopback: in-process for the handshake and refusals, and as two real
// processes (the CLI) for crashes. Everything binds to 127.0.0.1 only.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import '../../ts/net/polyfill.js';
import { multiaddr } from '@multiformats/multiaddr';
import { verifyTranscriptAt } from '../../ts/engine/verify.js';
import { parseInvitation } from '../../ts/net/invitation.js';
import { LineTransport, type ByteStream } from '../../ts/net/line-transport.js';
import { createNode, SESSION_PROTOCOL } from '../../ts/net/node.js';
import { HandshakeError, host, join as joinSession } from '../../ts/net/session.js';
import { tempDir } from '../shared/tmp.js';
import { need } from '../shared/require.js';
import { c } from '../engine/harness.js';
import { cli } from '../shared/cli.js';
import { BIN, hostProcess, jsonLines, protocol, seed, signedInit, until } from './helpers.js';

describe('in-process network sessions', () => {
  it('complete over libp2p, with both transcripts verifiable and the handshake recorded', async () => {
    const p = await protocol('rps');
    const out = tempDir('net');
    const h = await host({ crypto: c, seed: seed(11), protocol: p, options: { best_of: 3 }, sessionsDir: join(out, 'h') });
    try {
      const g = await joinSession({ crypto: c, seed: seed(12), protocol: p, options: {}, sessionsDir: join(out, 'g'), invitation: parseInvitation(c, h.text) });
      const hr = await h.done;
      expect([g.completed, hr.completed]).toEqual([true, true]);
      expect(g.sid).toBe(hr.sid);
      // The guest's socket left the guard's deadline when its session started.
      expect(h.guard.stats()).toMatchObject({ authenticated: 1, expired: 0 });
      for (const dir of [g.dir, hr.dir]) {
        expect(verifyTranscriptAt(c, dir)).toMatchObject({ ok: true, receipt: true });
        const hs = JSON.parse(readFileSync(join(dir, 'handshake.json'), 'utf8'));
        expect(hs.canonical.split(':')).toHaveLength(5);
        expect(c.sha256(new TextEncoder().encode(hs.canonical))).toEqual(Uint8Array.from(Buffer.from(hr.sid, 'hex')));
      }
    } finally {
      await h.stop();
    }
  });

  it('two guests racing for one invitation: one plays, the other is refused', async () => {
    const p = await protocol('coin-flip');
    const out = tempDir('net');
    const h = await host({ crypto: c, seed: seed(21), protocol: p, options: { best_of: 1 }, sessionsDir: join(out, 'h') });
    try {
      const inv = parseInvitation(c, h.text);
      const outcomes = await Promise.allSettled([
        joinSession({ crypto: c, seed: seed(22), protocol: p, options: {}, sessionsDir: join(out, 'g1'), invitation: inv }),
        joinSession({ crypto: c, seed: seed(23), protocol: p, options: {}, sessionsDir: join(out, 'g2'), invitation: inv }),
      ]);
      const played = outcomes.filter((o) => o.status === 'fulfilled' && o.value.completed);
      const refused = outcomes.filter((o) => o.status === 'rejected' && o.reason instanceof HandshakeError && o.reason.code === 'HANDSHAKE_REFUSED');
      expect([played.length, refused.length]).toEqual([1, 1]);
      expect((await h.done).completed).toBe(true);
    } finally {
      await h.stop();
    }
  });

  it('a client that claims another key, or sends garbage or an oversize line, is dropped and the host keeps waiting', async () => {
    const p = await protocol('guess-number');
    const out = tempDir('net');
    const events: string[] = [];
    const h = await host({
      crypto: c,
      seed: seed(31),
      protocol: p,
      options: {},
      sessionsDir: join(out, 'h'),
      onEvent: (t, d) => events.push(`${t}:${String(d['code'] ?? '')}`),
    });
    try {
      const evil = await createNode(seed(32));
      const addr = multiaddr(h.invitation.ticket.addrs[0]!);
      const talk = async (line: string) => {
        const s = (await evil.dialProtocol(addr, SESSION_PROTOCOL)) as unknown as ByteStream;
        const t = new LineTransport(s, { heartbeatIntervalMs: 0 });
        t.send(line);
        await t.recv(300);
        t.close();
      };
      await talk(JSON.stringify({ _session_init: true, guest_public_key: '77'.repeat(32), session_nonce: '00'.repeat(8), guest_control_mode: 'autonomous' }));
      await talk('this is not json');
      await talk(`{"_session_init":true,"pad":"${'x'.repeat(9 << 20)}"}`);
      await evil.stop();
      await until(
        () => events.includes('handshake_failed:HANDSHAKE_KEY_MISMATCH') && events.filter((e) => e === 'handshake_failed:HANDSHAKE_INVALID').length === 2,
        'the host to report all three failed handshakes',
      );
      // A real guest is still served.
      const g = await joinSession({ crypto: c, seed: seed(33), protocol: p, options: {}, sessionsDir: join(out, 'g'), invitation: parseInvitation(c, h.text) });
      expect(g.completed).toBe(true);
    } finally {
      await h.stop();
    }
  });

  it('a guest joins over WebSocket alone (Node 20 has no global WebSocket)', async () => {
    const p = await protocol('coin-flip');
    const out = tempDir('net');
    const h = await host({ crypto: c, seed: seed(71), protocol: p, options: { best_of: 1 }, sessionsDir: join(out, 'h'), listen: ['/ip4/127.0.0.1/tcp/0/ws'] });
    try {
      expect(h.invitation.ticket.addrs.every((a) => a.includes('/ws/'))).toBe(true);
      const g = await joinSession({ crypto: c, seed: seed(72), protocol: p, options: {}, sessionsDir: join(out, 'g'), invitation: parseInvitation(c, h.text) });
      expect(g.completed).toBe(true);
      expect((await h.done).completed).toBe(true);
      expect(h.guard.stats()).toMatchObject({ authenticated: 1, expired: 0 });
    } finally {
      await h.stop();
    }
  });

  it('an invitation that expires before any guest ends the host with INVITATION_EXPIRED', async () => {
    const out = tempDir('net');
    const h = await host({
      crypto: c,
      seed: seed(73),
      protocol: await protocol('coin-flip'),
      options: { best_of: 1 },
      sessionsDir: join(out, 'h'),
      ttlMinutes: 0.01,
    });
    try {
      await expect(h.done).rejects.toMatchObject({ name: 'HostError', code: 'INVITATION_EXPIRED' });
      // and a guest that comes later is told so
      const late = createInvitationCopy(h.text);
      await expect(
        joinSession({ crypto: c, seed: seed(74), protocol: await protocol('coin-flip'), options: {}, sessionsDir: join(out, 'g'), invitation: late }),
      ).rejects.toMatchObject({ code: 'HANDSHAKE_REFUSED', message: expect.stringContaining('invitation expired') });
    } finally {
      await h.stop();
    }
  });

  it('the handshake has its own deadline of seconds: a silent stream is closed long before the session timeout', async () => {
    const out = tempDir('net');
    const events: string[] = [];
    const h = await host({
      crypto: c,
      seed: seed(75),
      protocol: await protocol('coin-flip'),
      options: { best_of: 1 },
      sessionsDir: join(out, 'h'),
      timeoutMs: 60_000,
      handshakeTimeoutMs: 500,
      onEvent: (t, d) => events.push(`${t}:${String(d['code'] ?? '')}`),
    });
    try {
      const evil = await createNode(seed(76));
      const t = new LineTransport((await evil.dialProtocol(multiaddr(h.invitation.ticket.addrs[0]!), SESSION_PROTOCOL)) as unknown as ByteStream, {
        heartbeatIntervalMs: 0,
      });
      // The host ends the stream (line null, not timed out) well within this wait.
      expect(await t.recv(15_000)).toEqual({ line: null, timedOut: false });
      expect(events).toContain('handshake_failed:HANDSHAKE_TIMEOUT');
      await evil.stop();
    } finally {
      await h.stop();
    }
  });

  it('a peer that knows IP:port and the peer id but not the invitation cannot take the slot', async () => {
    const p = await protocol('coin-flip');
    const out = tempDir('net');
    const events: string[] = [];
    const h = await host({
      crypto: c,
      seed: seed(81),
      protocol: p,
      options: { best_of: 1 },
      sessionsDir: join(out, 'h'),
      onEvent: (t, d) => events.push(`${t}:${String(d['code'] ?? '')}`),
    });
    try {
      const inv = h.invitation;
      const squatters = await Promise.all([82, 83].map((n) => createNode(seed(n))));
      const streams = await Promise.all(
        squatters.map(
          async (n) =>
            new LineTransport((await n.dialProtocol(multiaddr(inv.ticket.addrs[0]!), SESSION_PROTOCOL)) as unknown as ByteStream, { heartbeatIntervalMs: 0 }),
        ),
      );
      // One sends a well-formed init without a signature, the other signs a guessed post_id; both then stay.
      const unsigned = JSON.parse(signedInit(inv, seed(82), '33'.repeat(8)).line) as Record<string, unknown>;
      delete unsigned['guest_signature'];
      streams[0]!.send(JSON.stringify(unsigned));
      streams[1]!.send(signedInit(inv, seed(83), '44'.repeat(8), '00'.repeat(8)).line);
      await until(() => events.filter((e) => e === 'handshake_failed:HANDSHAKE_BAD_SIGNATURE').length === 2, 'both squatters to be refused');
      const g = await joinSession({ crypto: c, seed: seed(84), protocol: p, options: {}, sessionsDir: join(out, 'g'), invitation: parseInvitation(c, h.text) });
      expect(g.completed).toBe(true);
      expect((await h.done).completed).toBe(true);
      await Promise.all(squatters.map((n) => n.stop()));
    } finally {
      await h.stop();
    }
  });

  it('a guest refuses a host that runs another protocol than the invitation names', async () => {
    const out = tempDir('net');
    const h = await host({ crypto: c, seed: seed(41), protocol: await protocol('guess-number'), options: {}, sessionsDir: join(out, 'h') });
    try {
      await expect(
        joinSession({
          crypto: c,
          seed: seed(42),
          protocol: await protocol('rps'),
          options: {},
          sessionsDir: join(out, 'g'),
          invitation: parseInvitation(c, h.text),
        }),
      ).rejects.toMatchObject({
        code: 'HANDSHAKE_PROTOCOL_MISMATCH',
      });
    } finally {
      await h.stop();
    }
  });

  it('a client that completes the handshake and then forges a frame is refused with bad_signature', async () => {
    const p = await protocol('guess-number');
    const out = tempDir('net');
    const h = await host({ crypto: c, seed: seed(61), protocol: p, options: {}, sessionsDir: join(out, 'h'), timeoutMs: 2000 });
    try {
      const evil = await createNode(seed(62));
      const s = (await evil.dialProtocol(multiaddr(h.invitation.ticket.addrs[0]!), SESSION_PROTOCOL)) as unknown as ByteStream;
      const t = new LineTransport(s, { heartbeatIntervalMs: 0 });
      const { ChainWriter, sessionId } = await import('../../ts/engine/frame.js');
      const inv = h.invitation;
      const nonce = '22'.repeat(8);
      const init = signedInit(inv, seed(62), nonce);
      t.send(init.line);
      expect(JSON.parse((await t.recv(5000)).line ?? '{}')).toMatchObject({ _session_proof: true });
      const sid = sessionId(c, inv.post_id, inv.protocol_id, inv.host_public_key, init.guestKey, nonce);
      t.send(JSON.stringify({ _session_ready: true, session_id: sid, guest_signature: init.sig }));
      // The join frame, signed by some other key than the one the handshake bound.
      const forger = new ChainWriter(c, sid, 'guest', c.ed25519Keypair(seed(63)));
      t.send(forger.next({ action: 'join' }).line);
      const r = await h.done;
      expect(r).toMatchObject({ completed: false, reason: 'bad_signature' });
      expect(verifyTranscriptAt(c, r.dir)).toMatchObject({ ok: true, receipt: false });
      await evil.stop();
    } finally {
      await h.stop();
    }
  });

  it('a stalled peer: heartbeats report it unresponsive, then the wait times out', async () => {
    const p = await protocol('guess-number');
    const out = tempDir('net');
    const events: string[] = [];
    const h = await host({
      crypto: c,
      seed: seed(51),
      protocol: p,
      options: {},
      sessionsDir: join(out, 'h'),
      heartbeatIntervalMs: 100,
      timeoutMs: 1200,
      onEvent: (t) => events.push(t),
    });
    try {
      // The guest completes the handshake by hand, then never speaks (nor answers pings).
      const evil = await createNode(seed(52));
      const s = (await evil.dialProtocol(multiaddr(h.invitation.ticket.addrs[0]!), SESSION_PROTOCOL)) as unknown as ByteStream;
      const { sessionId } = await import('../../ts/engine/frame.js');
      const { utf8 } = await import('../../ts/crypto/index.js');
      const inv = h.invitation;
      const init = signedInit(inv, seed(52), '11'.repeat(8));
      const raw = { send: (l: string) => s.send(utf8(`${l}\n`)) };
      // Both handshake lines at once: the host reads the second after sending its proof.
      raw.send(init.line);
      raw.send(
        JSON.stringify({
          _session_ready: true,
          session_id: sessionId(c, inv.post_id, inv.protocol_id, inv.host_public_key, init.guestKey, '11'.repeat(8)),
          guest_signature: init.sig,
        }),
      );
      const r = await h.done;
      expect(r).toMatchObject({ completed: false, reason: 'peer_timeout' });
      expect(events).toContain('peer_unresponsive');
      expect(verifyTranscriptAt(c, r.dir).ok).toBe(true);
      await evil.stop();
    } finally {
      await h.stop();
    }
  });
});

/** Waits until a side's transcript holds at least `n` frames (the game is under way), at most 20 s. */
async function waitForFrames(dataDir: string, role: string, n: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const base = join(dataDir, 'sessions');
    if (existsSync(base)) {
      for (const sid of readdirSync(base)) {
        const t = join(base, sid, role, 'transcript.jsonl');
        if (existsSync(t) && readFileSync(t, 'utf8').trim().split('\n').length > n) return;
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no ${role} session with ${n} frames under ${dataDir}`);
}

/** The invitation behind a host's text, parsed as of its creation (it may have expired since). */
const createInvitationCopy = (text: string) => parseInvitation(c, text, new Date(Date.now() - 60_000));

const exited = (p: ChildProcess) => new Promise<number | null>((r) => (p.exitCode !== null ? r(p.exitCode) : p.on('exit', (code) => r(code))));
const sessionDirOf = (dataDir: string, role: string) => {
  const base = join(dataDir, 'sessions');
  const sid = readdirSync(base)[0]!;
  return join(base, sid, role);
};

describe('two processes', () => {
  const init = async (dir: string) => expect((await cli(['init', '--data-dir', dir])).status).toBe(0);

  it('a guest killed with SIGKILL mid-game: the host reports peer_disconnected and its transcript verifies', async () => {
    const out = tempDir('proc');
    await init(join(out, 'alice'));
    await init(join(out, 'bob'));
    // hybrid control with RPS timing holds each of the guest's moves for min_think (1 s).
    const h = await hostProcess(join(out, 'alice'), ['--protocol', 'rps-v1', '--options', '{"best_of":99,"termination":"fixed_rounds"}', '--json']);
    const g = spawn(process.execPath, [BIN, 'join', h.invitation, '--data-dir', join(out, 'bob'), '--control-mode', 'hybrid'], { stdio: 'ignore' });
    await waitForFrames(join(out, 'alice'), 'host', 6);
    g.kill('SIGKILL');
    const code = await exited(h.child);
    expect(code).toBe(1);
    // stdout: the invitation, then the session's result, a line of JSON each; stderr: why it failed.
    const [invitation, report] = jsonLines(h.stdout());
    expect(invitation).toMatchObject({ role: 'host', invitation: h.invitation });
    expect(report).toMatchObject({ completed: false, reason: 'peer_disconnected' });
    expect(h.stderr()).toMatch(/^aigenora host: PEER_DISCONNECTED: the session ended without completing/);
    expect(verifyTranscriptAt(c, sessionDirOf(join(out, 'alice'), 'host'))).toMatchObject({ ok: true, receipt: false });
    expect(verifyTranscriptAt(c, sessionDirOf(join(out, 'bob'), 'guest')).ok).toBe(true);
  }, 30_000);

  it('a host killed mid-game: the guest reports peer_disconnected and its transcript verifies', async () => {
    const out = tempDir('proc');
    await init(join(out, 'alice'));
    await init(join(out, 'bob'));
    const h = await hostProcess(join(out, 'alice'), [
      '--protocol',
      'rps-v1',
      '--options',
      '{"best_of":99,"termination":"fixed_rounds"}',
      '--control-mode',
      'hybrid',
    ]);
    const g = spawn(process.execPath, [BIN, 'join', h.invitation, '--data-dir', join(out, 'bob'), '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    let err = '';
    g.stdout!.on('data', (d: Buffer) => (text += d.toString()));
    g.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    await waitForFrames(join(out, 'bob'), 'guest', 6);
    h.child.kill('SIGKILL');
    expect(await exited(g)).toBe(1);
    expect(JSON.parse(text)).toMatchObject({ completed: false, reason: 'peer_disconnected' });
    expect(err).toMatch(/^aigenora join: PEER_DISCONNECTED: the session ended without completing/);
    expect(verifyTranscriptAt(c, sessionDirOf(join(out, 'bob'), 'guest'))).toMatchObject({ ok: true, receipt: false });
  }, 30_000);

  it('session list shows a running session and session abort ends it on both sides', async () => {
    const out = tempDir('proc');
    await init(join(out, 'alice'));
    await init(join(out, 'bob'));
    const h = await hostProcess(join(out, 'alice'), ['--protocol', 'rps-v1', '--options', '{"best_of":99,"termination":"fixed_rounds"}', '--json']);
    const g = spawn(process.execPath, [BIN, 'join', h.invitation, '--data-dir', join(out, 'bob'), '--control-mode', 'hybrid', '--json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    g.stdout!.on('data', (d: Buffer) => (text += d.toString()));
    await waitForFrames(join(out, 'alice'), 'host', 4);
    const list = await cli(['session', 'list', '--data-dir', join(out, 'alice'), '--json']);
    const rows = JSON.parse(list.stdout);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ role: 'host' });
    expect(['in_progress', 'action_submitted']).toContain(rows[0].phase);
    expect((await cli(['session', 'abort', rows[0].dir])).status).toBe(0);
    expect(await exited(h.child)).toBe(1);
    expect(jsonLines(h.stdout()).at(-1)).toMatchObject({ completed: false, reason: 'local_abort' });
    expect(h.stderr()).toMatch(/^aigenora host: LOCAL_ABORT: /);
    expect(await exited(g)).toBe(1);
    const guest = JSON.parse(text);
    expect(guest.completed).toBe(false);
    expect(guest.reason).toBe('peer_aborted');
    const after = JSON.parse((await cli(['session', 'list', '--data-dir', join(out, 'alice'), '--json'])).stdout);
    expect(after[0]).toMatchObject({ phase: 'aborted', reason: 'local_abort' });
  }, 30_000);

  it('host options that cannot work are refused in one line before anything listens', async () => {
    const out = tempDir('proc');
    await init(join(out, 'alice'));
    const spawned = spawnSync(process.execPath, [BIN, 'host', '--protocol', 'coin-flip-v1', '--data-dir', join(out, 'alice'), '--listen', 'garbage'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect({ status: spawned.status, stdout: spawned.stdout, stderr: spawned.stderr }, 'a new process refuses as main() does').toEqual(
      await cli(['host', '--protocol', 'coin-flip-v1', '--data-dir', join(out, 'alice'), '--listen', 'garbage']),
    );
    for (const bad of [
      ['--listen', 'garbage'],
      ['--listen', '/ip4/127.0.0.1/tcp/0,nonsense'],
      ['--invitation-ttl-minutes', '1e12'],
      ['--invitation-ttl-minutes', '0'],
      ['--timeout-seconds', 'abc'],
      ['--handshake-timeout-seconds', '-1'],
    ]) {
      const r = await cli(['host', '--protocol', 'coin-flip-v1', '--data-dir', join(out, 'alice'), ...bad]);
      expect(r.status, `${bad.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr.trim().split('\n')[0]).toContain(bad[0]);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stdout).toBe('');
    }
  }, 120_000);

  it('aigenora host ends with a clear message when its invitation expires and no guest came', async () => {
    const out = tempDir('proc');
    await init(join(out, 'alice'));
    const h = await hostProcess(join(out, 'alice'), ['--protocol', 'coin-flip-v1', '--invitation-ttl-minutes', '0.02', '--json']);
    expect(await exited(h.child)).toBe(1);
    // The invitation was its one result (stdout); no session ran, so the end is a refusal on stderr.
    expect(jsonLines(h.stdout())).toEqual([expect.objectContaining({ role: 'host', invitation: h.invitation })]);
    expect(h.stderr()).toMatch(/^aigenora host: INVITATION_EXPIRED: .*expired/);
    expect(h.output()).not.toMatch(/\n\s+at /);
  }, 30_000);

  it('--daemon serves several guests with one invitation, each in its own session', async () => {
    const out = tempDir('proc');
    for (const who of ['alice', 'bob', 'carol']) await init(join(out, who));
    const h = await hostProcess(join(out, 'alice'), ['--protocol', 'coin-flip-v1', '--options', '{"best_of":1}', '--daemon', '--json']);
    for (const who of ['bob', 'carol']) {
      const g = spawnSync(process.execPath, [BIN, 'join', h.invitation, '--data-dir', join(out, who), '--json'], { encoding: 'utf8', timeout: 20_000 });
      expect(g.status, g.stdout + g.stderr).toBe(0);
    }
    h.child.kill('SIGTERM');
    expect(await exited(h.child)).toBe(0);
    expect(readdirSync(join(out, 'alice', 'sessions'))).toHaveLength(2);
  }, 40_000);
});

/** Two network namespaces joined by a veth pair, made (and removed) by the test itself. */
function netnsAvailable(): boolean {
  if (process.getuid?.() !== 0) return false;
  const r = spawnSync('ip', ['netns', 'add', 'aigenora-probe'], { encoding: 'utf8' });
  if (r.status !== 0) return false;
  spawnSync('ip', ['netns', 'del', 'aigenora-probe']);
  return true;
}

const netns = need('network namespaces (root and `ip netns add`) for the game across namespaces', netnsAvailable, {
  how: 'run as root with iproute2 installed (CI and the workplace machines run as root)',
});

describe.skipIf(!netns)('across network namespaces', () => {
  it('a host in one namespace and a guest in another play over a veth link', async () => {
    const tag = Math.random().toString(36).slice(2, 7);
    const [nh, ng] = [`aig-h-${tag}`, `aig-g-${tag}`];
    const ip = (...a: string[]) => {
      const r = spawnSync('ip', a, { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`ip ${a.join(' ')}: ${r.stderr}`);
    };
    const out = tempDir('netns');
    try {
      ip('netns', 'add', nh);
      ip('netns', 'add', ng);
      ip('link', 'add', `vh-${tag}`, 'type', 'veth', 'peer', 'name', `vg-${tag}`);
      ip('link', 'set', `vh-${tag}`, 'netns', nh);
      ip('link', 'set', `vg-${tag}`, 'netns', ng);
      ip('-n', nh, 'addr', 'add', '10.77.0.1/24', 'dev', `vh-${tag}`);
      ip('-n', ng, 'addr', 'add', '10.77.0.2/24', 'dev', `vg-${tag}`);
      for (const [ns, dev] of [
        [nh, `vh-${tag}`],
        [ng, `vg-${tag}`],
      ] as const) {
        ip('-n', ns, 'link', 'set', dev, 'up');
        ip('-n', ns, 'link', 'set', 'lo', 'up');
      }
      for (const who of ['alice', 'bob']) expect(spawnSync(process.execPath, [BIN, 'init', '--data-dir', join(out, who)]).status).toBe(0);
      const file = join(out, 'inv.txt');
      const host = spawn(
        'ip',
        [
          'netns',
          'exec',
          nh,
          process.execPath,
          BIN,
          'host',
          '--protocol',
          'rps-v1',
          '--options',
          '{"best_of":3}',
          '--listen',
          '/ip4/10.77.0.1/tcp/0,/ip4/10.77.0.1/tcp/0/ws',
          '--data-dir',
          join(out, 'alice'),
          '--invitation-file',
          file,
          '--json',
        ],
        { stdio: 'ignore' },
      );
      for (let i = 0; i < 200 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 50));
      const inv = readFileSync(file, 'utf8').trim();
      expect(parseInvitation(c, inv).ticket.addrs.every((a) => a.startsWith('/ip4/10.77.0.1/'))).toBe(true);
      const g = spawnSync('ip', ['netns', 'exec', ng, process.execPath, BIN, 'join', inv, '--data-dir', join(out, 'bob'), '--json'], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(g.status, g.stdout + g.stderr).toBe(0);
      expect(JSON.parse(g.stdout)).toMatchObject({ completed: true });
      expect(await exited(host)).toBe(0);
    } finally {
      spawnSync('ip', ['netns', 'del', nh]);
      spawnSync('ip', ['netns', 'del', ng]);
    }
  }, 60_000);
});
