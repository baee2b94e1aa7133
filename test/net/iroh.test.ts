// The iroh transport on the reference's wire: node tickets, the unsigned per-message profile with each
// side's own signed transcript, and (inside a loopback-only network namespace, since iroh otherwise
// tries its public relays) two CLI agents playing over iroh, an oversize line and a wrong host key.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toHex } from '../../ts/crypto/index.js';
import { sessionId } from '../../ts/engine/frame.js';
import { runSession } from '../../ts/engine/session.js';
import { memoryPair } from '../../ts/engine/transport.js';
import { verifyTranscript, verifyTranscriptAt } from '../../ts/engine/verify.js';
import { createIrohInvitation, encodeInvitation } from '../../ts/net/invitation.js';
import { decodeNodeTicket, encodeNodeTicket, TicketError } from '../../ts/net/iroh-ticket.js';
import { checkSpecText } from '../../ts/spec/check.js';
import { c } from '../engine/harness.js';
import { BIN, protocol, seed } from './helpers.js';

const tempDir = (name: string) => mkdtempSync(join(tmpdir(), `aigenora-iroh-${name}-`));

describe('iroh node tickets', () => {
  const nodeId = toHex(c.ed25519Keypair(seed(9)).publicKey);

  it('round-trip, with and without a relay, IPv4 and IPv6', () => {
    for (const a of [
      { nodeId, addresses: ['127.0.0.1:4433'] },
      { nodeId, relayUrl: 'https://relay.example/', addresses: ['[::1]:7', '10.0.0.2:65535', '[2001:db8::8:1]:1'] },
      { nodeId, addresses: [] },
    ]) {
      const t = encodeNodeTicket(a);
      expect(t.startsWith('node')).toBe(true);
      const back = decodeNodeTicket(t);
      expect(back.nodeId).toBe(nodeId);
      expect(back.relayUrl).toBe(a.relayUrl);
      expect(new Set(back.addresses)).toEqual(new Set(a.addresses));
      expect(decodeNodeTicket(t.toUpperCase())).toEqual(back);
    }
  });

  it('encode the node address exactly as iroh 0.35 does (its BlobTicket embeds the same bytes)', () => {
    // The binding has no NodeTicket, but a BlobTicket is the same postcard node address followed by the
    // blob format and hash: the bytes of ours must be its prefix.
    const iroh = createRequire(import.meta.url)('@number0/iroh') as { BlobTicket: new (addr: unknown, hash: string, format: string) => { toString(): string } };
    const addr = { nodeId, addresses: ['127.0.0.1:1234', '[::1]:5678'] };
    const blob = new iroh.BlobTicket(addr, '0'.repeat(64), 'Raw').toString();
    const ours = encodeNodeTicket(addr);
    const bits = (s: string) => [...s].map((ch) => 'abcdefghijklmnopqrstuvwxyz234567'.indexOf(ch).toString(2).padStart(5, '0')).join('');
    const oursBits = bits(ours.slice(4));
    const whole = Math.floor(oursBits.length / 8) * 8;
    expect(bits(blob.slice(4)).slice(0, whole)).toBe(oursBits.slice(0, whole));
  });

  it('refuse anything else with IROH_TICKET_INVALID', () => {
    const good = encodeNodeTicket({ nodeId, addresses: ['127.0.0.1:1'] });
    for (const bad of ['', 'blobabc', 'node', 'node!!!!', good.slice(0, -3), `${good}aa`, `node${'a'.repeat(5000)}`])
      expect(() => decodeNodeTicket(bad), bad.slice(0, 40)).toThrow(TicketError);
    expect(() => encodeNodeTicket({ nodeId: 'xy', addresses: [] })).toThrow(TicketError);
    expect(() => encodeNodeTicket({ nodeId, addresses: ['localhost:80'] })).toThrow(TicketError);
  });
});

describe('the unsigned per-message profile', () => {
  it('puts bare messages on the wire and still leaves each side a transcript that verifies under its own key', async () => {
    const p = await protocol('rps');
    const out = tempDir('plain');
    const hk = c.ed25519Keypair(seed(1));
    const gk = c.ed25519Keypair(seed(2));
    const [hostKey, guestKey] = [toHex(hk.publicKey), toHex(gk.publicKey)];
    const nonce = '0123456789abcdef';
    const sid = sessionId(c, 'post', p.protocolId, hostKey, guestKey, nonce);
    const wire: string[] = [];
    const [ht, gt] = memoryPair({ hostToGuest: (l) => (wire.push(l), [l]), guestToHost: (l) => (wire.push(l), [l]) });
    const common = {
      crypto: c,
      spec: p.spec,
      specText: p.specText,
      protocolId: p.protocolId,
      hooks: p.hooks,
      options: {},
      hostKey,
      guestKey,
      sid,
      postId: 'post',
      nonce,
      wire: 'plain' as const,
      controlMode: 'autonomous' as const,
    };
    const [h, g] = await Promise.all([
      runSession({ ...common, role: 'host', key: hk, transport: ht, stateDir: join(out, 'h') }),
      runSession({ ...common, role: 'guest', key: gk, transport: gt, stateDir: join(out, 'g') }),
    ]);
    expect([h.completed, g.completed]).toEqual([true, true]);
    // The wire: the reference's bare messages only, no frame envelope, no engine frames.
    for (const l of wire) {
      const m = JSON.parse(l) as Record<string, unknown>;
      expect(Object.keys(m)).not.toContain('sig');
      expect(typeof m['action']).toBe('string');
      expect(String(m['action']).startsWith('_')).toBe(false);
    }
    expect(JSON.parse(wire[0]!)).toMatchObject({ action: 'join' });
    expect(wire[0]!.startsWith('{"action":"join"')).toBe(true);
    for (const [dir, role] of [
      [h.dir, 'host'],
      [g.dir, 'guest'],
    ] as const) {
      const v = verifyTranscriptAt(c, dir);
      expect(v, role).toMatchObject({ ok: true, receipt: true, wire: 'plain' });
      const text = readFileSync(join(dir, 'transcript.jsonl'), 'utf8');
      const spec = readFileSync(join(dir, 'spec.json'), 'utf8');
      const receipt = readFileSync(join(dir, 'receipt.json'), 'utf8');
      // The witness frames are signed by the writer: read as a signed-profile transcript they are not the peer's.
      const signedHeader = text.replace(',"wire":"plain"}', '}');
      expect(verifyTranscript(c, signedHeader, spec, receipt).ok).toBe(false);
      // Any edit of a witnessed peer message breaks the writer's signature over it.
      const peerMove = text.split('\n').findIndex((l) => l.includes(`"from":"${role === 'host' ? 'guest' : 'host'}"`) && l.includes('"reveal"'));
      const lines = text.split('\n');
      lines[peerMove] = lines[peerMove]!.replace(/"(rock|paper|scissors)"/, (m) => (m === '"rock"' ? '"paper"' : '"rock"'));
      expect(verifyTranscript(c, lines.join('\n'), spec, receipt).ok).toBe(false);
    }
  });
});

describe('without the iroh binding', () => {
  it('host and join --transport iroh fail with one IROH_UNAVAILABLE line', () => {
    const dir = tempDir('nobinding');
    // Hides the optional package from Node's resolver, as on a platform it has no build for.
    const hide = join(dir, 'hide-iroh.cjs');
    writeFileSync(
      hide,
      `const M = require('module'); const r = M._resolveFilename; M._resolveFilename = function (req, ...a) { if (req === '@number0/iroh') { const e = new Error("Cannot find module '@number0/iroh'"); e.code = 'MODULE_NOT_FOUND'; throw e; } return r.call(this, req, ...a); };`,
    );
    expect(spawnSync(process.execPath, [BIN, 'init', '--data-dir', join(dir, 'd')], { encoding: 'utf8' }).status).toBe(0);
    const rps = new URL('../../ts/protocols/rps', import.meta.url).pathname;
    const runs = [
      ['host', '--transport', 'iroh', '--protocol-dir', rps, '--data-dir', join(dir, 'd')],
      ['join', encodeIrohInvitationFor(rps), '--data-dir', join(dir, 'd')],
    ];
    for (const args of runs) {
      const r = spawnSync(process.execPath, ['--require', hide, BIN, ...args], { encoding: 'utf8', timeout: 60_000 });
      const lines = r.stderr.split('\n').filter((l) => l.trim() !== '' && !/DeprecationWarning|trace-deprecation/.test(l));
      expect(r.status, `${args[0]}: ${r.stdout}${r.stderr}`).toBe(1);
      expect(lines, args[0]).toHaveLength(1);
      expect(lines[0], args[0]).toMatch(/IROH_UNAVAILABLE: the iroh binding/);
    }
  }, 120_000);
});

/** An out-of-band iroh invitation for the protocol in `dir`, from a host that is not running. */
function encodeIrohInvitationFor(dir: string): string {
  const spec = readFileSync(join(dir, 'spec.json'), 'utf8');
  const host = c.ed25519Keypair(seed(77));
  const protocolId = (checkSpecText(c, spec).protocolId ?? '') as string;
  return encodeInvitation(
    c,
    createIrohInvitation(c, { host, protocolId, ticket: encodeNodeTicket({ nodeId: toHex(host.publicKey), addresses: ['127.0.0.1:9'] }) }),
  );
}

/** Runs `script` in a fresh network namespace with only loopback up; a machine that cannot make one fails the test. */
function inNamespace(script: string, timeoutMs: number): { status: number | null; out: string } {
  const r = spawnSync('unshare', ['-n', 'bash', '-c', `ip link set lo up || exit 97\n${script}`], {
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 64 << 20,
  });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  if (r.error) throw new Error(`cannot run unshare -n (root and util-linux needed for the iroh tests): ${r.error.message}\n${out}`);
  if (r.status === 97 || /unshare: /.test(r.stderr ?? ''))
    throw new Error(`cannot make a loopback-only network namespace for the iroh tests (root needed):\n${out}`);
  return { status: r.status, out };
}

const driver = new URL('./iroh-driver.ts', import.meta.url).pathname;
const result = (out: string): Record<string, unknown> => {
  const line = out.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`the scenario printed no result:\n${out}`);
  return JSON.parse(line.slice(7)) as Record<string, unknown>;
};

describe('over iroh, in a loopback-only network namespace', () => {
  it('our host and our guest play rock-paper-scissors through the CLI; both transcripts pass receipt verify', () => {
    const out = tempDir('cli');
    const rps = new URL('../../ts/protocols/rps', import.meta.url).pathname;
    for (const d of ['h', 'g']) mkdirSync(join(out, d));
    // Polls instead of fixed sleeps, and prints both agents' output if anything goes wrong.
    const script = `
      B=${JSON.stringify(BIN)}; O=${JSON.stringify(out)}
      node "$B" init --data-dir "$O/h" >/dev/null && node "$B" init --data-dir "$O/g" >/dev/null || exit 3
      node "$B" host --transport iroh --protocol-dir ${JSON.stringify(rps)} --data-dir "$O/h" --invitation-file "$O/inv.txt" --json >"$O/host.json" 2>"$O/host.err" &
      HP=$!
      for i in $(seq 1 600); do [ -s "$O/inv.txt" ] && break; kill -0 $HP 2>/dev/null || break; sleep 0.1; done
      [ -s "$O/inv.txt" ] || { echo "no invitation"; cat "$O/host.err"; exit 4; }
      node "$B" join "@$O/inv.txt" --transport iroh --data-dir "$O/g" --json >"$O/guest.json" 2>"$O/guest.err"; GS=$?
      wait $HP; HS=$?
      echo "STATUS $HS $GS"
    `;
    const r = inNamespace(script, 240_000);
    const show = () =>
      `${r.out}\n--- host\n${readOr(join(out, 'host.json'))}${readOr(join(out, 'host.err'))}\n--- guest\n${readOr(join(out, 'guest.json'))}${readOr(join(out, 'guest.err'))}`;
    expect(r.out, show()).toContain('STATUS 0 0');
    // host --json: a line of JSON per result, the invitation first, then the session's.
    const hostLines = readFileSync(join(out, 'host.json'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(hostLines[0], show()).toMatchObject({ role: 'host', transport: 'iroh', invitation: readFileSync(join(out, 'inv.txt'), 'utf8').trim() });
    const host = hostLines.at(-1)!;
    const guest = JSON.parse(readFileSync(join(out, 'guest.json'), 'utf8')) as Record<string, unknown>;
    expect(host, show()).toMatchObject({ role: 'host', transport: 'iroh', completed: true });
    expect(guest, show()).toMatchObject({ role: 'guest', transport: 'iroh', completed: true });
    expect(guest['winner']).toBe(host['winner']);
    expect(['host', 'guest', 'draw']).toContain(host['winner']);
    expect(guest['session_id']).toBe(host['session_id']);
    for (const dir of [host['dir'], guest['dir']] as string[]) {
      const v = spawnSync(process.execPath, [BIN, 'receipt', 'verify', dir, '--json'], { encoding: 'utf8' });
      expect(v.status, `${v.stdout}${v.stderr}`).toBe(0);
      expect(JSON.parse(v.stdout)).toMatchObject({ ok: true, receipt: true, wire: 'plain' });
      expect(readdirSync(dir)).toContain('handshake.json');
    }
  }, 300_000);

  it('a line over 8 MiB after the handshake ends the session with frame_too_large', () => {
    const r = inNamespace(`exec node --import tsx ${JSON.stringify(driver)} oversize ${JSON.stringify(tempDir('big'))}`, 120_000);
    expect(result(r.out), r.out).toMatchObject({ proof: true, completed: false, reason: 'frame_too_large' });
  }, 150_000);

  it('a host that answers with another key than the invitation names is refused', () => {
    const r = inNamespace(`exec node --import tsx ${JSON.stringify(driver)} wrong-host-key ${JSON.stringify(tempDir('key'))}`, 120_000);
    expect(result(r.out), r.out).toMatchObject({ refused: true, code: 'HANDSHAKE_KEY_MISMATCH' });
  }, 150_000);
});

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
