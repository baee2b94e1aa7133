// Shared by the network tests: protocols, polling instead of fixed sleeps, a hand-driven session
// handshake, the CLI host as a child process, and raw sockets from other loopback addresses.
import { seededBytes } from '../../ts/engine/virtual.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { expect } from 'vitest';
import '../../ts/net/polyfill.js';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys';
import { tcp } from '@libp2p/tcp';
import { webSockets } from '@libp2p/websockets';
import { createLibp2p, type Libp2p } from 'libp2p';
import { toHex, utf8 } from '../../ts/crypto/index.js';
import { sessionCanonical } from '../../ts/engine/frame.js';
import type { Invitation } from '../../ts/net/invitation.js';
import type { Protocol } from '../../ts/net/session.js';
import { builtin, c, hooksOf } from '../engine/harness.js';

import { BIN } from '../shared/cli.js';
export { BIN };
export const seed = (n: number) => new Uint8Array(32).fill(n);
export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function protocol(folder: string): Promise<Protocol> {
  const b = builtin(folder);
  return { spec: b.spec, specText: b.specText, protocolId: b.protocolId, hooks: await hooksOf(folder) };
}

/** Polls `cond` every 20 ms until it holds; fails with `what` after `timeoutMs`. */
export async function until(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await pause(20);
  }
}

/** The `_session_init` a guest with key `seedByte` sends, signed over the invitation's canonical. */
export function signedInit(inv: Invitation, seedBytes: Uint8Array, nonce: string, postId = inv.post_id) {
  const k = c.ed25519Keypair(seedBytes);
  const guestKey = toHex(k.publicKey);
  const canonical = sessionCanonical(postId, inv.protocol_id, inv.host_public_key, guestKey, nonce);
  const sig = toHex(k.sign(utf8(canonical)));
  return {
    guestKey,
    canonical,
    sig,
    line: JSON.stringify({ _session_init: true, guest_public_key: guestKey, session_nonce: nonce, guest_control_mode: 'autonomous', guest_signature: sig }),
  };
}

/** A libp2p peer (no listener) whose TCP connections leave from `localAddress`. */
export async function peerFrom(seedBytes: Uint8Array, localAddress = '127.0.0.1'): Promise<Libp2p> {
  return createLibp2p({
    privateKey: await generateKeyPairFromSeed('Ed25519', seedBytes),
    transports: [tcp({ dialOpts: { localAddress } as never }), webSockets()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
  });
}

export const initDataDir = (dir: string) => expect(spawnSync(process.execPath, [BIN, 'init', '--data-dir', dir], { encoding: 'utf8' }).status).toBe(0);

export interface HostProcess {
  child: ChildProcess;
  invitation: string;
  /** stdout and stderr as they came. */
  output: () => string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** The JSON lines a `host --json` printed on stdout: its invitation first, then each session's result. */
export const jsonLines = (stdout: string): Record<string, unknown>[] =>
  stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Starts `aigenora host` in a child process and waits (at most 15 s) for its invitation. */
export async function hostProcess(dataDir: string, args: string[]): Promise<HostProcess> {
  const file = join(dataDir, 'invitation.txt');
  const child = spawn(process.execPath, [BIN, 'host', '--data-dir', dataDir, '--invitation-file', file, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => {
    text += d.toString();
    stdout += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    text += d.toString();
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  await until(() => existsSync(file) || child.exitCode !== null, 'the host to write its invitation', 15_000);
  if (!existsSync(file)) throw new Error(`host did not start: ${text}`);
  await until(() => readFileSync(file, 'utf8').endsWith('\n'), 'the invitation file to be complete', 5_000);
  return { child, invitation: readFileSync(file, 'utf8').trim(), output: () => text, stdout: () => stdout, stderr: () => stderr, exited };
}

export const alive = (p: ChildProcess) => p.exitCode === null && p.signalCode === null;

/** The TCP port of the first address of a kind ('tcp' or 'ws') in a ticket. */
export function portOf(inv: Invitation, kind: 'tcp' | 'ws'): number {
  const a = inv.ticket.addrs.find((x) => (kind === 'ws' ? x.includes('/ws') : !x.includes('/ws')));
  if (!a) throw new Error(`no ${kind} address in ${inv.ticket.addrs.join(' ')}`);
  return Number(/\/tcp\/(\d+)/.exec(a)![1]);
}

/** A raw TCP socket from `localAddress`, with a record of when the far end closed it. */
export interface Raw {
  socket: net.Socket;
  closed: boolean;
  received: number;
}

export function raw(port: number, localAddress: string): Promise<Raw> {
  return new Promise((resolve) => {
    const r: Raw = { socket: net.connect({ host: '127.0.0.1', port, localAddress }), closed: false, received: 0 };
    r.socket.on('data', (d) => (r.received += d.length));
    r.socket.on('error', () => undefined);
    r.socket.on('end', () => r.socket.destroy());
    r.socket.on('close', () => {
      r.closed = true;
      resolve(r);
    });
    r.socket.on('connect', () => resolve(r));
  });
}

const UPGRADE =
  'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n';

/** A raw socket that has completed a WebSocket upgrade (resolves with `upgraded: false` if refused). */
export function wsUpgraded(port: number, localAddress: string): Promise<Raw & { upgraded: boolean }> {
  return new Promise((resolve) => {
    void raw(port, localAddress).then((r) => {
      if (r.closed) return resolve({ ...r, upgraded: false });
      let head = '';
      const onData = (d: Buffer) => {
        head += d.toString('latin1');
        if (head.includes('\r\n\r\n')) {
          r.socket.off('data', onData);
          resolve(Object.assign(r, { upgraded: head.startsWith('HTTP/1.1 101') }));
        }
      };
      r.socket.on('data', onData);
      r.socket.once('close', () => resolve(Object.assign(r, { upgraded: false })));
      r.socket.write(UPGRADE);
    });
  });
}

export interface FrameSpec {
  fin?: boolean;
  rsv?: number; // 0..7, RSV1 = 4
  opcode: number;
  payload?: Uint8Array;
  masked?: boolean;
  /** Claims this length instead of the payload's. */
  length?: bigint;
}

/** One WebSocket frame as a client writes it (masked unless told otherwise). */
export function wsFrame(f: FrameSpec): Buffer {
  const payload = Buffer.from(f.payload ?? new Uint8Array());
  const len = f.length ?? BigInt(payload.length);
  const b0 = ((f.fin ?? true) ? 0x80 : 0) | ((f.rsv ?? 0) << 4) | (f.opcode & 0x0f);
  const masked = f.masked ?? true;
  let header: Buffer;
  if (len < 126n) header = Buffer.from([b0, (masked ? 0x80 : 0) | Number(len)]);
  else if (len < 65536n) {
    header = Buffer.alloc(4);
    header[0] = b0;
    header[1] = (masked ? 0x80 : 0) | 126;
    header.writeUInt16BE(Number(len), 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = b0;
    header[1] = (masked ? 0x80 : 0) | 127;
    header.writeBigUInt64BE(len, 2);
  }
  if (!masked) return Buffer.concat([header, payload]);
  const mask = Buffer.from([0x11, 0x22, 0x33, 0x44]);
  const body = Buffer.from(payload.map((v, i) => v ^ mask[i % 4]!));
  return Buffer.concat([header, mask, body]);
}

/** A small deterministic byte generator, so a failing garbage run can be replayed. */
export const prng = seededBytes;

/** A CLI process started by startCli: its output so far (both streams interleaved, and each alone) and its exit code. */
export interface CliProcess {
  child: ChildProcess;
  output: () => string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** `aigenora ARGS` as a child process, its output collected. */
export function startCli(args: string[]): CliProcess {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let [all, out, err] = ['', '', ''];
  child.stdout!.on('data', (d: Buffer) => ((all += d.toString()), (out += d.toString())));
  child.stderr!.on('data', (d: Buffer) => ((all += d.toString()), (err += d.toString())));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, output: () => all, stdout: () => out, stderr: () => err, exited };
}

/** A data dir's member session directory (sessions/<group>/<key prefix>), once it exists. */
export function groupMemberDir(dataDir: string): string | undefined {
  const sessions = join(dataDir, 'sessions');
  if (!existsSync(sessions)) return undefined;
  // Only group folders: the CLI briefly writes a probe file here to check the folder is writable.
  for (const g of readdirSync(sessions, { withFileTypes: true })) {
    if (!g.isDirectory() || !g.name.startsWith('grp-')) continue;
    for (const m of readdirSync(join(sessions, g.name), { withFileTypes: true })) if (m.isDirectory()) return join(sessions, g.name, m.name);
  }
  return undefined;
}
