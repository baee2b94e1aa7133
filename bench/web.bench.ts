// The agent page (`aigenora web`) against a CLI host, side by side with a Node guest in one run. One
// floor, a budget: the page's weight gzipped (agent.js and every .wasm the page fetched by the time its
// session was ready, as `aigenora web` serves them) at most 300 KiB. Figures: the time from opening the page
// with an invitation to `_session_ready` (loading the page and the WASM core, making the libp2p node,
// dialling the host's WebSocket address, Noise, Yamux and the session handshake), and frames/s of a
// browser guest against a Node guest (the CLI's join code in this process) playing the same host.
// Workload: RPS, 99 fixed rounds, one `aigenora host --daemon` (wasm backend) for every session; the
// page draws its log and board as it would for a person, autonomous control.
// SAMPLES rounds of one session each, the order alternating. Writes bench/results/web.md and web.floors.json.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { gzipSync } from 'node:zlib';
import { launchChromium } from '../scripts/lib/chromium.js';
import { loadIdentity } from '../ts/library/identity.js';
import { parseInvitation } from '../ts/net/invitation.js';
import { join as joinSession } from '../ts/net/session.js';
import { BIN, crypto as c, hostDaemonArgs, rpsHooks as hooks, rpsSpec as l } from './rps-workload.js';
import { budgetFloor, floorTable, median, SAMPLES, table, writeFloors } from './measure.js';

const work = mkdtempSync(join(tmpdir(), 'aigenora-webbench-'));
const children: ChildProcess[] = [];

function spawnCli(args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  children.push(child);
  return child;
}

async function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((ok, bad) => {
    createInterface({ input: child.stdout! }).once('line', ok);
    child.once('exit', (code) => bad(new Error(`exited (${code}) before printing`)));
  });
}

async function main(): Promise<string> {
  for (const who of ['alice', 'bob']) {
    const r = spawnSync(process.execPath, [BIN, 'init', '--data-dir', join(work, who)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`aigenora init: ${r.stderr.trim()}`);
  }
  const invFile = join(work, 'invitation');
  const hostProc = spawnCli(hostDaemonArgs(join(work, 'alice'), invFile), { AIGENORA_CRYPTO: 'wasm' });
  hostProc.stdout!.resume();
  for (let k = 0; k < 600 && !existsSync(invFile); k++) await new Promise((r) => setTimeout(r, 50));
  if (!existsSync(invFile)) throw new Error('the host wrote no invitation in 30 s');
  const invitation = readFileSync(invFile, 'utf8').trim();
  const web = spawnCli(['web', '--listen', '127.0.0.1:0', '--json']);
  const url = (JSON.parse(await firstLine(web)) as { url: string }).url;
  const seed = loadIdentity(c, join(work, 'bob')).seed;
  const inv = parseInvitation(c, invitation);

  const browser = await launchChromium();
  /** The .wasm files the page fetched by the time its session was ready, by name: what it loads at start. */
  const wasmAtStart = new Set<string>();
  const page = async () => {
    const p = await browser.newPage();
    const fetched = new Set<string>();
    p.on('response', (r) => {
      if (new URL(r.url()).pathname.endsWith('.wasm')) fetched.add(basename(new URL(r.url()).pathname));
    });
    try {
      await p.goto(`${url}#invitation=${encodeURIComponent(invitation)}&mode=autonomous`);
      await p.waitForFunction(() => document.body.dataset['readyMs'] !== undefined, undefined, { timeout: 120_000 });
      for (const name of fetched) wasmAtStart.add(name);
      await p.waitForFunction(() => (window as unknown as { __aigenora?: { done?: boolean } }).__aigenora?.done === true, undefined, { timeout: 120_000 });
      const r = (await p.evaluate(() => (window as unknown as { __aigenora: Record<string, unknown> }).__aigenora)) as {
        completed: boolean;
        reason: string;
        frames: number;
        firstFrameMs: number;
        lastFrameMs: number;
        readyMs: number;
      };
      if (!r.completed) throw new Error(`the page's session ended ${r.reason}`);
      return { fps: (r.frames * 1000) / (r.lastFrameMs - r.firstFrameMs), ready: r.readyMs };
    } finally {
      await p.close();
    }
  };
  const node = async () => {
    let first = 0;
    let last = 0;
    let frames = 0;
    const t0 = performance.now();
    let ready = 0;
    const r = await joinSession({
      crypto: c,
      seed,
      protocol: { spec: l.spec, specText: l.text, protocolId: l.protocolId!, hooks },
      options: {},
      sessionsDir: join(work, 'bob', 'sessions'),
      invitation: inv,
      onEvent: (type) => void (type === 'connected' && (ready = performance.now() - t0)),
      onMessage: () => {
        last = performance.now();
        if (frames++ === 0) first = last;
      },
    });
    if (!r.completed) throw new Error(`the Node guest's session ended ${r.reason}`);
    return { fps: (frames * 1000) / (last - first), ready };
  };
  await page();
  await node();
  const runs = { page: [] as { fps: number; ready: number }[], node: [] as { fps: number; ready: number }[] };
  for (let i = 0; i < SAMPLES; i++) {
    if (i % 2) runs.node.push(await node());
    runs.page.push(await page());
    if (!(i % 2)) runs.node.push(await node());
  }
  await browser.close();

  const gz = (path: URL) => gzipSync(readFileSync(path), { level: 9 }).length;
  const jsGz = gz(new URL('../dist/web/agent.js', import.meta.url));
  const wasm = [...wasmAtStart].sort().map((name) => ({ name, gz: gz(new URL(`../bindings/web/${name}`, import.meta.url)) }));
  const wasmGz = wasm.reduce((n, w) => n + w.gz, 0);
  const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  const floors = [budgetFloor('agent page gzipped (agent.js + the WASM it loads at start)', (jsGz + wasmGz) / 1024, 300, 'KiB')];
  writeFloors('web', floors);
  const med = (w: 'page' | 'node', f: (s: { fps: number; ready: number }) => number) => median(runs[w].map(f));
  const ratio = median(runs.page.map((s, i) => s.fps / runs.node[i]!.fps));
  const lines = [
    '# The agent page against a CLI host (one run)',
    '',
    `${new Date().toISOString()} · Node ${process.version} · Chromium ${browser.version()} · load average ${loadavg()[0]!.toFixed(2)} on a shared 2-core machine · RPS, 99 fixed rounds, one \`aigenora host --daemon\` (wasm)`,
    '',
    `- **page weight**: what \`aigenora web\` serves and the page loads by \`_session_ready\`, gzip -9: agent.js ${kib(jsGz)} + ${wasm.map((w) => `${w.name} ${kib(w.gz)}`).join(' + ')} = ${kib(jsGz + wasmGz)}.`,
    '- **to `_session_ready`**: page: from opening the URL with the invitation to the end of the session handshake (page load, the WASM core, the libp2p node, dial, Noise, Yamux, A7); Node guest: from the join call to the same point (no page or WASM to load; the core is already loaded).',
    '- **frames/s**: the frames of a session ÷ the time from its first frame to its last, as the guest sees them; the page also draws its log and the board as it would for a person (at most every 200 ms).',
    '',
    ...table(
      ['guest', 'median frames/s', 'median to _session_ready', 'samples, frames/s'],
      [
        [
          'browser page (Chromium)',
          med('page', (s) => s.fps).toFixed(0),
          `${med('page', (s) => s.ready).toFixed(0)} ms`,
          runs.page.map((s) => s.fps.toFixed(0)).join(', '),
        ],
        [
          "Node (the CLI's join)",
          med('node', (s) => s.fps).toFixed(0),
          `${med('node', (s) => s.ready).toFixed(0)} ms`,
          runs.node.map((s) => s.fps.toFixed(0)).join(', '),
        ],
      ],
      'lrrl',
    ),
    '',
    `Browser ÷ Node frames/s, median of the ${SAMPLES} paired rounds: ${ratio.toFixed(2)}×.`,
    '',
    ...floorTable(floors),
  ];
  return `${lines.join('\n')}\n`;
}

try {
  const report = await main();
  process.stdout.write(report);
  writeFileSync(new URL('results/web.md', import.meta.url), report);
} catch (e) {
  process.stderr.write(`\nweb bench: COULD NOT RUN: ${(e as Error)?.stack ?? String(e)}\n`);
  process.exitCode = 1;
} finally {
  for (const child of children) child.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
}
