// The docs test (issue 34): every fenced block of README.md and packages/core/README.md is extracted and
// run, so a sample cannot drift from what the code does, and a new block cannot be added untested. Each
// block is preceded by an annotation (the last non-empty line before its fence) that says how it is run:
//
//   <!-- docs-test: run -->                   sh: each command in an empty directory of its own, with
//                                             `aigenora` resolving to this checkout's CLI (test/shared/cli.ts's
//                                             BIN) and HOME holding a data dir made by `aigenora init`, as a
//                                             reader's would after the README's set-up
//   <!-- docs-test: run from the tarball -->  against the packed package installed into an empty project:
//                                             sh blocks run there (their `npm pack` lines in the checkout),
//                                             ts blocks are compiled there by tsc (strict, skipLibCheck false)
//                                             and run by node, an html block's imports must exist there
//   <!-- docs-test: ran by FILE, … -->        only for what cannot run inside the suite itself (`npm test`
//                                             would recurse; the interop test needs root and the reference
//                                             peer): every command must be run by one of the files, in
//                                             their code (comments left out): as written, as a spawn's argv,
//                                             as the script `npm run X` names, or, for `npx vitest run PATH`,
//                                             by a run of the whole suite that includes PATH's test files
//
// What a sample's comments claim is checked where it can be: `exit N` (or `exit 0/1/2`) is the status the
// command must end with (0 otherwise); `#` lines right after a command are lines it prints (`…` stands for
// any text, and a timestamp, a count of seconds or a decision id for any of its kind; a token holding `…`
// that a later command repeats is replaced there by what was printed, e.g. a session directory); in ts,
// the comment after a `console.log(…)` is the line it prints, and an import commented `// or 'X'` is run
// with X too. Other claims are checked by CLAIMS below, keyed by the command as the README writes it.
// Commands that serve until stopped (SERVES) run in the background until they print what they should,
// and are stopped when their block ends.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../shared/cli.js';
import { tempDir } from '../shared/tmp.js';

const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const DOCS = ['README.md', 'packages/core/README.md'];
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  engines: { node: string };
  scripts: Record<string, string>;
  devDependencies: Record<string, string>;
};
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

// ---------------------------------------------------------------------------------------------------
// Blocks and their annotations

type Annotation = { kind: 'run' } | { kind: 'tarball' } | { kind: 'ran-by'; files: string[] };

interface Block {
  doc: string;
  /** The line of the opening fence (1-based). */
  line: number;
  lang: string;
  body: string;
  /** The line of the block's first body line. */
  bodyLine: number;
  annotation: Annotation | undefined;
  /** Why the annotation is missing or unreadable. */
  problem?: string;
}

function parseAnnotation(line: string | undefined): Annotation | string {
  const m = /^<!--\s*docs-test:\s*(.*?)\s*-->$/.exec(line?.trim() ?? '');
  if (!m) return 'no <!-- docs-test: … --> annotation on the last non-empty line before the fence';
  const what = m[1]!;
  if (what === 'run') return { kind: 'run' };
  if (what === 'run from the tarball') return { kind: 'tarball' };
  const by = /^ran by (.+)$/.exec(what);
  if (by) return { kind: 'ran-by', files: by[1]!.split(/\s*,\s*/) };
  return `unknown annotation "${what}" (run | run from the tarball | ran by FILE, …)`;
}

function extractBlocks(doc: string): Block[] {
  const lines = readFileSync(join(ROOT, doc), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    if (end >= lines.length) throw new Error(`${doc}:${i + 1}: a fence that is never closed`);
    let prev = i - 1;
    while (prev >= 0 && lines[prev]!.trim() === '') prev--;
    const a = parseAnnotation(prev >= 0 ? lines[prev] : undefined);
    blocks.push({
      doc,
      line: i + 1,
      lang: open[1]!,
      body: lines.slice(i + 1, end).join('\n'),
      bodyLine: i + 2,
      annotation: typeof a === 'string' ? undefined : a,
      ...(typeof a === 'string' && { problem: a }),
    });
    i = end;
  }
  return blocks;
}

const BLOCKS = DOCS.flatMap(extractBlocks);
const nameOf = (b: Block) =>
  `${b.doc}:${b.line} (${b.lang}: ${b.body
    .split('\n')
    .find((l) => l.trim() && !l.trim().startsWith('//'))
    ?.trim()
    .slice(0, 60)})`;
const annotated = (kind: Annotation['kind'], lang?: string) => BLOCKS.filter((b) => b.annotation?.kind === kind && (lang === undefined || b.lang === lang));

// ---------------------------------------------------------------------------------------------------
// Shell: commands, their comments and the lines they print

interface Unit {
  /** The line of its first line in the doc. */
  line: number;
  /** What bash runs. */
  text: string;
  /** Its first line without comment or continuation: the key of CLAIMS, SERVES and STDIN. */
  head: string;
  /** Its code without comments (the ran-by check). */
  code: string;
  /** The comments on its lines. */
  comment: string;
  /** Lines it prints (the `#` lines right after it). */
  output: string[];
  /** Exit statuses its comments allow. */
  statuses: number[];
}

interface LineScan {
  /** The line up to its comment. */
  code: string;
  comment: string | undefined;
  words: string[];
  /** The quote still open at the end of the line. */
  quote: string | null;
}

/** Reads one line of shell as bash would for what matters here: quotes, comments and words. */
function scanLine(line: string, quote: string | null): LineScan {
  const words: string[] = [];
  let word = '';
  let q = quote;
  let i = 0;
  for (; i < line.length; i++) {
    const ch = line[i]!;
    if (q === "'") {
      if (ch === "'") q = null;
      word += ch;
    } else if (q === '"') {
      if (ch === '\\') word += ch + (line[++i] ?? '');
      else {
        if (ch === '"') q = null;
        word += ch;
      }
    } else if (ch === '\\') word += ch + (line[++i] ?? '');
    else if (ch === "'" || ch === '"') {
      q = ch;
      word += ch;
    } else if (ch === '#' && word === '') break;
    else if (/[\s;&|()<>]/.test(ch)) {
      if (word) words.push(word);
      word = '';
    } else word += ch;
  }
  if (word) words.push(word);
  return { code: line.slice(0, i), comment: i < line.length ? line.slice(i + 1).trim() : undefined, words, quote: q };
}

function statusesIn(comment: string): number[] | undefined {
  const m = /\bexit (\d(?:\/\d)*)\b/.exec(comment);
  return m ? m[1]!.split('/').map(Number) : undefined;
}

/** Splits a sh block into commands: a unit runs until its quotes, heredoc, loop and continuation close. */
function parseShell(block: Block): Unit[] {
  const units: Unit[] = [];
  const lines = block.body.split('\n');
  let cur: { line: number; text: string[]; code: string[]; comments: string[] } | undefined;
  let quote: string | null = null;
  let heredoc: string | undefined;
  let depth = 0;
  let afterUnit = false;
  for (const [n, line] of lines.entries()) {
    if (heredoc !== undefined) {
      cur!.text.push(line);
      cur!.code.push(line);
      if (line === heredoc) heredoc = undefined;
    } else if (!cur && line.trim() === '') {
      afterUnit = false;
      continue;
    } else if (!cur && line.trim().startsWith('#')) {
      const last = units[units.length - 1];
      if (!afterUnit || !last)
        throw new Error(`${block.doc}:${block.bodyLine + n}: a comment line that follows no command (a # line right after a command is a line it prints)`);
      let expected = line.trim().slice(1).trim();
      const exit = /\s+\(exit (\d)\)$/.exec(expected);
      if (exit) {
        last.statuses = [Number(exit[1])];
        expected = expected.slice(0, exit.index);
      }
      last.output.push(expected);
      continue;
    } else {
      cur ??= { line: block.bodyLine + n, text: [], code: [], comments: [] };
      const s = scanLine(line, quote);
      quote = s.quote;
      cur.text.push(line);
      cur.code.push(s.code.trimEnd());
      if (s.comment !== undefined) cur.comments.push(s.comment);
      const here = quote === null ? /<<-?\s*(['"]?)(\w+)\1/.exec(s.code) : null;
      if (here) heredoc = here[2]!;
      for (const w of s.words) depth += w === 'do' || w === 'if' || w === 'case' ? 1 : w === 'done' || w === 'fi' || w === 'esac' ? -1 : 0;
    }
    const continued = quote !== null || heredoc !== undefined || depth > 0 || /\\$/.test(cur!.code[cur!.code.length - 1] ?? '');
    if (!continued) {
      const comment = cur!.comments.join(' ');
      units.push({
        line: cur!.line,
        text: cur!.text.join('\n'),
        head: cur!.code[0]!.replace(/\\$/, '').trim(),
        code: cur!.code.join('\n'),
        comment,
        output: [],
        statuses: statusesIn(comment) ?? [0],
      });
      cur = undefined;
      afterUnit = true;
    }
  }
  if (cur) throw new Error(`${block.doc}:${cur.line}: a command that never ends (an open quote, heredoc or loop)`);
  return units;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * A printed line as the README shows it, as a pattern: example values stand for any of their kind. A
 * token holding `…` is captured, so that a later command repeating it gets what was printed.
 */
function linePattern(expected: string, home: string): { re: RegExp; tokens: string[] } {
  const tokens: string[] = [];
  const KINDS = /^~(?=\/)|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z|^\(\d+$|cli:\d+:[a-z0-9]+|[0-9a-f]*…/g;
  const parts = expected.split(/\s+/).map((tok) => {
    let re = '';
    let at = 0;
    for (const m of tok.matchAll(KINDS)) {
      re += escapeRe(tok.slice(at, m.index));
      const v = m[0];
      re +=
        v === '~'
          ? escapeRe(home)
          : v.endsWith('…')
            ? '.*?'
            : v.startsWith('cli:')
              ? 'cli:\\d+:[a-z0-9]+'
              : v.startsWith('(')
                ? '\\(\\d+'
                : '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)?Z';
      at = m.index + v.length;
    }
    re += escapeRe(tok.slice(at));
    if (!tok.includes('…')) return re;
    tokens.push(tok);
    return `(${re})`;
  });
  return { re: new RegExp(`^\\s*${parts.join('\\s+')}\\s*$`, 'm'), tokens };
}

const shq = (s: string) => (/^[\w./:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

// ---------------------------------------------------------------------------------------------------
// Running a block

interface Ran {
  unit: Unit;
  status: number | null;
  stdout: string;
  stderr: string;
}

interface Ctx {
  cwd: string;
  home: string;
  /** What each command of the block so far printed, by head. */
  results: Map<string, Ran>;
}

interface Proc {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Every process started here, so that none outlives the file (a test that timed out never reaches its
// block's own clean-up).
const started = new Set<Proc>();
afterAll(async () => {
  await Promise.all([...started].map(stop));
});

function start(text: string, cwd: string, env: NodeJS.ProcessEnv, stdin?: string): Proc {
  // -e and pipefail: a failing command inside a loop or a pipe fails its unit, as `set -e` would. Its own
  // process group, so that stopping it stops what it started.
  const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', text], {
    cwd,
    env,
    detached: true,
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  if (stdin !== undefined) child.stdin!.end(stdin);
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const p = { child, out: () => out, err: () => err, exited };
  started.add(p);
  void exited.then(() => started.delete(p));
  return p;
}

async function stop(p: Proc): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const group = (sig: NodeJS.Signals) => {
    try {
      if (p.child.pid !== undefined) process.kill(-p.child.pid, sig);
    } catch {
      // already gone
    }
  };
  group('SIGTERM');
  if ((await Promise.race([p.exited.then(() => true), pause(5000).then(() => false)])) === false) {
    group('SIGKILL');
    await p.exited;
  }
}

function describeRun(block: Block, r: Ran, why: string): string {
  const cut = (s: string) => (s.length > 4000 ? `…${s.slice(-4000)}` : s);
  return `${block.doc}:${r.unit.line}: ${r.unit.head}\n${why}\nexit ${r.status}\n--- stdout\n${cut(r.stdout)}--- stderr\n${cut(r.stderr)}`;
}

interface Serve {
  match: RegExp;
  /** What it prints once it serves, beyond the README's own `#` lines after it. */
  ready?: (r: Ran, ctx: Ctx) => boolean;
  /** A check of the running server. */
  then?: (r: Ran, ctx: Ctx) => Promise<void>;
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'docs-test', version: '0' } },
});

/** Commands that serve until stopped. */
const SERVES: Serve[] = [
  {
    // Ready once the invitation is printed and, with --invitation-file, written whole.
    match: /^aigenora host\b/,
    ready: (r, ctx) => {
      const file = /--invitation-file (\S+)/.exec(r.unit.head)?.[1];
      return (
        /^aigenora1\.[A-Za-z0-9_-]+$/m.test(r.stdout) &&
        (!file || (existsSync(join(ctx.cwd, file)) && readFileSync(join(ctx.cwd, file), 'utf8').endsWith('\n')))
      );
    },
  },
  { match: /^aigenora join\b/ },
  {
    match: /^aigenora web\b/,
    then: async (r) => {
      const url = /agent page at (\S+)/.exec(r.stdout)![1]!;
      const res = await fetch(url);
      expect(res.status, url).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    },
  },
  {
    match: /^node bin\/aigenora\.mjs aira mcp --http\b/,
    ready: (r) => /listening on http:\/\/127\.0\.0\.1:\d+\/mcp\b/.test(r.stdout),
    then: async (r) => {
      const url = /listening on (\S+)/.exec(r.stdout)![1]!;
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: INITIALIZE,
      });
      expect(res.status, url).toBe(200);
      expect(await res.text()).toContain('"aigenora-aira"');
    },
  },
];

/** What a command reads on stdin, where the README leaves it to the reader (an MCP client). */
const STDIN: { match: RegExp; input: string }[] = [{ match: /^node bin\/aigenora\.mjs aira mcp$/, input: `${INITIALIZE}\n` }];

interface RunOptions {
  cwd: string;
  home: string;
  env: NodeJS.ProcessEnv;
  /** A different text or directory for a unit (the tarball block's `npm pack`). */
  rewrite?: (u: Unit) => { text: string; cwd: string } | undefined;
}

async function runShell(block: Block, opts: RunOptions): Promise<Map<string, Ran>> {
  const ctx: Ctx = { cwd: opts.cwd, home: opts.home, results: new Map() };
  const captured = new Map<string, string>();
  const background: Proc[] = [];
  try {
    for (const unit of parseShell(block)) {
      let text = unit.text;
      for (const [token, value] of captured) text = text.split(token).join(shq(value));
      const rewritten = opts.rewrite?.(unit);
      const serve = SERVES.find((s) => s.match.test(unit.head));
      const p = start(rewritten?.text ?? text, rewritten?.cwd ?? opts.cwd, opts.env, STDIN.find((s) => s.match.test(unit.head))?.input);
      const ran = (): Ran => ({ unit, status: p.child.exitCode, stdout: p.out(), stderr: p.err() });
      const patterns = unit.output.map((o) => ({ o, ...linePattern(o, opts.home) }));
      const printed = () => patterns.every(({ re }) => re.test(`${p.out()}\n${p.err()}`));
      if (serve) {
        if (!serve.ready && patterns.length === 0)
          throw new Error(`${block.doc}:${unit.line}: ${unit.head} serves until stopped, and nothing says when it is ready`);
        background.push(p);
        const deadline = Date.now() + 45_000;
        while (!(printed() && (serve.ready?.(ran(), ctx) ?? true))) {
          if (p.child.exitCode !== null || p.child.signalCode !== null) throw new Error(describeRun(block, ran(), 'ended before it was ready'));
          if (Date.now() > deadline) throw new Error(describeRun(block, ran(), 'not ready after 45 s'));
          await pause(50);
        }
      } else {
        const status = await Promise.race([p.exited, pause(120_000).then(() => 'timeout' as const)]);
        if (status === 'timeout') {
          await stop(p);
          throw new Error(describeRun(block, ran(), 'still running after 120 s'));
        }
        if (!unit.statuses.includes(status ?? -1)) throw new Error(describeRun(block, { ...ran(), status }, `the README says exit ${unit.statuses.join('/')}`));
      }
      const r = serve ? ran() : { ...ran(), status: await p.exited };
      for (const { o, re, tokens } of patterns) {
        const m = re.exec(`${r.stdout}\n${r.stderr}`);
        if (!m) throw new Error(describeRun(block, r, `the README says it prints:\n${o}`));
        tokens.forEach((t, i) => captured.set(t, m[i + 1]!));
      }
      ctx.results.set(unit.head, r);
      try {
        CLAIMS.get(unit.head)?.(r, ctx);
        await serve?.then?.(r, ctx);
      } catch (e) {
        throw new Error(describeRun(block, r, `a claim of the README does not hold: ${e instanceof Error ? e.message : String(e)}`));
      }
    }
  } finally {
    await Promise.all(background.map(stop));
  }
  return ctx.results;
}

// ---------------------------------------------------------------------------------------------------
// Claims of the README's comments, by the command as written

const lines = (s: string) => s.split('\n').filter(Boolean);
const mode = (p: string) => statSync(p).mode & 0o777;
const json = (p: string) => JSON.parse(readFileSync(p, 'utf8')) as Record<string, unknown>;
const VERIFIED = /^verified: \d+ frames, session [0-9a-f]{64}, receipts signed by both sides$/m;

const CLAIMS = new Map<string, (r: Ran, ctx: Ctx) => void>([
  // Install and import (from the tarball)
  [
    'npm pack',
    (r) => {
      expect(lines(r.stdout).at(-1)).toBe(r.unit.comment.split(' ')[0]);
      expect(r.unit.comment).toContain('(runs the build)');
      expect(PKG.scripts['prepack']).toMatch(/\bscripts\/build\.sh\b/);
    },
  ],
  ['npm pack ./packages/core', (r) => expect(lines(r.stdout).at(-1)).toBe(r.unit.comment.split(' ')[0])],
  [
    'npm install ./aigenora-0.1.0.tgz',
    (r, ctx) => {
      expect(r.stdout + r.stderr).not.toMatch(/EBADENGINE/);
      const engines = (json(join(ctx.cwd, 'node_modules/aigenora/package.json'))['engines'] as { node: string }).node;
      expect(r.unit.comment).toContain(`Node ${engines.replace('>=', '>= ')}`);
    },
  ],
  ['npx aigenora --version', (r) => expect(r.stdout).toBe(`aigenora ${PKG.version}\n`)],
  [
    'npx aigenora init',
    (_r, ctx) => {
      const data = join(ctx.home, '.aigenora');
      expect(mode(join(data, 'key.json'))).toBe(0o600);
      expect(Object.keys(json(join(data, 'key.json'))).sort()).toEqual(['private_key', 'public_key']);
      expect(readdirSync(join(data, 'protocols'))).toContain('index.json');
    },
  ],
  // Protocol contracts
  ['aigenora protocol list', (r) => expect(r.stdout).toMatch(/^rps-v1\s+43a80648[0-9a-f]{56}\s+Rock-Paper-Scissors$/m)],
  [
    'aigenora protocol path rps-v1',
    (r, ctx) => {
      const dir = r.stdout.trim();
      expect(dir.startsWith(join(ctx.home, '.aigenora/protocols/43a80648/'))).toBe(true);
      expect(readdirSync(dir)).toContain('spec.json');
    },
  ],
  [
    'aigenora protocol create ./my-game --from connect4-v1 --name "My Four"',
    (_r, ctx) => {
      expect(json(join(ctx.cwd, 'my-game/spec.json'))['name']).toBe('My Four');
      expect(readFileSync(join(ctx.cwd, 'my-game/hooks.mts'), 'utf8')).toContain('AIGENORA_SKELETON');
    },
  ],
  ['aigenora validate ./my-game', (r) => expect(r.stdout).toMatch(/^valid: My Four \([0-9a-f]{64}\)$/m)],
  [
    `aigenora validate "$(aigenora protocol path rps-v1)" '{"action":"reveal","round":1.0,"choice":"rock","nonce":"0123456789abcdef"}'`,
    (r) => expect(r.stdout).toMatch(/^error FIELD_TYPE at \/round: /m),
  ],
  [
    'aigenora protocol hash ./my-game/spec.json',
    (r, ctx) => {
      // The name does not count, so the copy keeps the id `protocol create` printed.
      const created = /protocol_id ([0-9a-f]{64})/.exec(ctx.results.get('aigenora protocol create ./my-game --from connect4-v1 --name "My Four"')!.stdout)![1];
      expect(r.stdout).toBe(`${created}\n`);
    },
  ],
  ['aigenora protocol hooks ./my-game', (r) => expect(r.stdout).toMatch(/^not ready: HOOKS_SKELETON: .*Hooks still to write: proto_/m)],
  // Sessions
  [
    `aigenora protocol test rps-v1 --options '{"best_of":5}' --seed 7 --out rps`,
    (r, ctx) => {
      expect(r.stdout).toMatch(/^guest → join best_of=5$/m);
      expect(r.stdout).toMatch(/^outcome: host completed, guest completed; winner (host|guest)$/m);
      expect(readdirSync(join(ctx.cwd, 'rps')).sort()).toEqual(['guest', 'host']);
    },
  ],
  ['aigenora receipt verify rps/guest', (r) => expect(r.stdout).toMatch(VERIFIED)],
  ['aigenora session events rps/host --follow', (r) => expect(lines(r.stdout).at(-1)).toMatch(/ session_ended \{"completed":true,/)],
  ['aigenora init --data-dir alice', (_r, ctx) => expect(mode(join(ctx.cwd, 'alice/key.json'))).toBe(0o600)],
  // Mental poker, realtime, groups
  [
    'aigenora receipt verify c8/guest',
    (r, ctx) => {
      expect(r.stdout).toMatch(VERIFIED);
      expect(readdirSync(join(ctx.cwd, 'c8/guest'))).toContain('transcript_receipt.json');
    },
  ],
  ['aigenora receipt verify tb/guest', (r) => expect(r.stdout).toMatch(VERIFIED)],
  ['aigenora receipt verify holdem/seat-2', (r) => expect(r.stdout).toMatch(/^verified: \d+ entries of group \S+ as seen by member [0-9a-f]+…, completed /m)],
  [
    'aigenora protocol test four-player-landlord-v1 --failover-after 10 --out ll',
    (r) => expect(Number(/(\d+) leader epochs/.exec(r.stdout)?.[1])).toBeGreaterThanOrEqual(2),
  ],
  // Aira
  ['node bin/aigenora.mjs aira run', (r) => expect(r.stdout).toMatch(/^terminal completed /m)],
  [
    'node bin/aigenora.mjs aira mcp',
    (r) => {
      const answers = lines(r.stdout).map((l) => JSON.parse(l) as { id: number; result?: { serverInfo?: { name: string } } });
      expect(answers.map((a) => [a.id, a.result?.serverInfo?.name])).toEqual([[1, 'aigenora-aira']]);
    },
  ],
  // agent-trade
  [
    'aigenora trade keygen --signer agent_alice --out alice.key > alice.pub',
    (_r, ctx) => {
      expect(mode(join(ctx.cwd, 'alice.key'))).toBe(0o600);
      expect(json(join(ctx.cwd, 'alice.pub'))).toEqual({ agent_alice: { public_key: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) } });
    },
  ],
  ['cat alice.pub bob.pub | jq -s add > keys.json', (_r, ctx) => expect(Object.keys(json(join(ctx.cwd, 'keys.json')))).toEqual(['agent_alice', 'agent_bob'])],
  [
    'aigenora trade new deal --body deal-body.json --out deal.json',
    (_r, ctx) => {
      const deal = json(join(ctx.cwd, 'deal.json')) as { body: { trade_id: string }; body_hash: string; signatures: unknown[] };
      expect(deal.body.trade_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(deal.body_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(deal.signatures).toEqual([]);
    },
  ],
  [
    'aigenora trade sign deal.json --key bob.key',
    (_r, ctx) => expect((json(join(ctx.cwd, 'deal.json'))['signatures'] as { signer: string }[]).map((s) => s.signer)).toEqual(['agent_alice', 'agent_bob']),
  ],
  ['aigenora trade verify deal.json --keys keys.json', (r) => expect(r.stdout).toMatch(/^valid\nobject_id sha256:[0-9a-f]{64}\n$/)],
  [
    'aigenora trade state e1.json e2.json e3.json --keys keys.json',
    (r, ctx) => expect(r.stdout).toBe(`${(json(join(ctx.cwd, 'deal.json'))['body'] as { trade_id: string }).trade_id} PAYMENT_CONFIRMED\n`),
  ],
  [
    'aigenora trade manifest ./catalog',
    (r, ctx) => {
      // Each file's SHA-256 as lowercase hex without a prefix, computed here by node:crypto.
      for (const f of readdirSync(join(ctx.cwd, 'catalog')))
        expect(r.stdout).toContain(
          `${createHash('sha256')
            .update(readFileSync(join(ctx.cwd, 'catalog', f)))
            .digest('hex')}  ${f}\n`,
        );
      expect(r.stdout).toMatch(/^catalog_hash sha256:[0-9a-f]{64}$/m);
    },
  ],
]);

// ---------------------------------------------------------------------------------------------------
// The environments: the checkout's CLI, and the packed package in an empty project

const WORK = tempDir('docs');
// npm keeps its cache and its user configuration (a registry, a proxy) where the real HOME has them.
const NPM = {
  npm_config_cache: process.env['npm_config_cache'] ?? join(homedir(), '.npm'),
  npm_config_userconfig: process.env['npm_config_userconfig'] ?? join(homedir(), '.npmrc'),
};

/** This process's environment without what would point a sample at someone's data dir, server or backend. */
function baseEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...NPM, HOME: home, NO_COLOR: '1' };
  for (const k of ['AIGENORA_DATA_DIR', 'P2P_DATA_DIR', 'AGENT_DIR', 'AIGENORA_SERVER', 'P2P_SERVER', 'AIGENORA_CRYPTO', 'AIGENORA_DEBUG']) delete env[k];
  return env;
}

const CLI_DIR = join(WORK, 'cli');
mkdirSync(CLI_DIR);
writeFileSync(join(CLI_DIR, 'aigenora'), `#!/bin/sh\nexec ${shq(process.execPath)} ${shq(BIN)} "$@"\n`);
chmodSync(join(CLI_DIR, 'aigenora'), 0o755);
const cliEnv = (home: string): NodeJS.ProcessEnv => ({ ...baseEnv(home), PATH: `${CLI_DIR}:${process.env['PATH'] ?? ''}` });

let template: Promise<string> | undefined;
/** A HOME whose data dir `aigenora init` made, copied for each block. */
function initializedHome(): Promise<string> {
  template ??= (async () => {
    const home = join(WORK, 'home-template');
    mkdirSync(home);
    const p = start('aigenora init', home, cliEnv(home));
    const status = await p.exited;
    if (status !== 0) throw new Error(`aigenora init failed (exit ${status}):\n${p.out()}${p.err()}`);
    return home;
  })();
  return template;
}

async function checkoutBlock(block: Block): Promise<void> {
  const dir = join(WORK, `${block.doc.replace(/\W/g, '-')}-${block.line}`);
  const cwd = join(dir, 'cwd');
  const home = join(dir, 'home');
  mkdirSync(cwd, { recursive: true });
  cpSync(await initializedHome(), home, { recursive: true });
  // `node bin/aigenora.mjs` is the checkout's own command; the block still runs in a directory of its own.
  if (/^node bin\//m.test(block.body)) symlinkSync(join(ROOT, 'bin'), join(cwd, 'bin'));
  await runShell(block, { cwd, home, env: cliEnv(home) });
}

interface Consumer {
  app: string;
  home: string;
  env: NodeJS.ProcessEnv;
}

let consumer: Promise<Consumer> | undefined;
/**
 * The tarball blocks' project: the README's install block run in an empty one, then the light package and
 * @types/node beside it (for the core README's sample and the TypeScript check).
 */
function tarballProject(): Promise<Consumer> {
  consumer ??= (async () => {
    if (!existsSync(join(ROOT, 'dist/index.js'))) throw new Error('dist/ is not built: run npm run build (the test command does)');
    if (!existsSync(join(ROOT, 'packages/core/dist/node/index.js')))
      throw new Error('packages/core is not built: run npm run build (the test command does), or node scripts/build-core.mjs');
    const app = join(WORK, 'app');
    const home = join(WORK, 'app-home');
    mkdirSync(app);
    mkdirSync(home);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    const env: NodeJS.ProcessEnv = {
      ...baseEnv(home),
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_prefer_offline: 'true',
      npm_config_update_notifier: 'false',
    };
    for (const block of annotated('tarball', 'sh')) {
      await runShell(block, {
        cwd: app,
        home,
        env,
        // `npm pack` is made in the checkout, as the README says. Its scripts are skipped: the test command
        // builds first, and prepack's clean rebuild would pull dist/ from under tests running beside this one.
        rewrite: (u) => (/^npm pack\b/.test(u.head) ? { text: `${u.code.trim()} --ignore-scripts --pack-destination ${shq(app)}`, cwd: ROOT } : undefined),
      });
    }
    const core = readdirSync(app).find((f) => /^aigenora-core-.*\.tgz$/.test(f));
    if (!core) throw new Error('the README install block packed no aigenora-core tarball');
    const p = start(`npm install ./${core} @types/node@${PKG.devDependencies['@types/node']}`, app, env);
    const status = await p.exited;
    if (status !== 0) throw new Error(`npm install of the light tarball failed (exit ${status}):\n${p.out()}${p.err()}`);
    return { app, home, env };
  })();
  return consumer;
}

// ---------------------------------------------------------------------------------------------------
// TypeScript samples: compiled together once, run one by one

interface TsSample {
  block: Block;
  file: string;
  source: string;
  /** The lines it prints: the comments after its console.log calls. */
  expected: string[];
}

function tsSamples(block: Block): TsSample[] {
  const base = `sample-${block.doc.replace(/\W/g, '-')}-${block.line}`;
  const expected = block.body.split('\n').flatMap((l) => {
    const m = /console\.log\(.*\);?\s*\/\/\s*(.+)$/.exec(l);
    return m ? [m[1]!.replace(/\s+\(.*\)$/, '')] : [];
  });
  const samples = [{ block, file: `${base}.ts`, source: block.body, expected }];
  // An import commented `// or 'X'` says the sample works with X too.
  const alt = /from '([^']+)';\s*\/\/ or '([^']+)'/.exec(block.body);
  if (alt) samples.push({ block, file: `${base}-or.ts`, source: block.body.replace(`from '${alt[1]}'`, `from '${alt[2]}'`), expected });
  return samples;
}

const TS_SAMPLES = annotated('tarball', 'ts').flatMap(tsSamples);

let compiled: Promise<{ app: string; env: NodeJS.ProcessEnv; status: number | null; diagnostics: string[] }> | undefined;
function compileSamples() {
  compiled ??= (async () => {
    const { app, env } = await tarballProject();
    for (const s of TS_SAMPLES) writeFileSync(join(app, s.file), s.source);
    writeFileSync(
      join(app, 'tsconfig.docs.json'),
      JSON.stringify({
        // As a strict consumer compiles: every declaration file checked, unused names refused.
        compilerOptions: {
          strict: true,
          noUnusedLocals: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          skipLibCheck: false,
          types: ['node'],
          outDir: 'docs-out',
          rootDir: '.',
        },
        files: TS_SAMPLES.map((s) => s.file),
      }),
    );
    const p = start(`${shq(process.execPath)} ${shq(TSC)} -p tsconfig.docs.json`, app, env);
    const status = await p.exited;
    // One diagnostic per unindented line, with the indented lines that continue it.
    const diagnostics = `${p.out()}${p.err()}`
      .split(/\n(?=\S)/)
      .map((d) => d.trim())
      .filter(Boolean);
    return { app, env, status, diagnostics };
  })();
  return compiled;
}

// ---------------------------------------------------------------------------------------------------
// ran by: the files that run a block's commands

/** A file's code without its comments (shell `#`, or JS/TS `//` and `/* *\/`, strings kept). */
function codeOf(file: string): string {
  const text = readFileSync(file, 'utf8');
  if (!/\.[cm]?[jt]s$/.test(file)) {
    let quote: string | null = null;
    return text
      .split('\n')
      .map((l) => {
        const s = scanLine(l, quote);
        quote = s.quote;
        return s.code;
      })
      .join('\n');
  }
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (ch === '/' && text[i + 1] === '*') {
      i = text.indexOf('*/', i + 2) + 1;
      if (i === 0) break;
    } else if (ch === "'" || ch === '"' || ch === '`') {
      let j = i + 1;
      while (j < text.length && text[j] !== ch) j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else out += ch;
  }
  return out;
}

/** Whether `code` runs `cmd`: as written, or as the argv of a spawn, or what an npm script stands for. */
function runs(code: string, cmd: string): boolean {
  const edge = `[\\s;&|(\`'"]`;
  if (new RegExp(`(^|${edge})${escapeRe(cmd)}(?=$|[\\s;&|)\`'"])`, 'm').test(code)) return true;
  const words = cmd.split(/\s+/);
  if (new RegExp(`['"]${words.map(escapeRe).join(`['"]\\s*,\\s*\\[?\\s*['"]`)}['"]`).test(code)) return true;
  const npm = /^npm (?:run (\S+)|(test|start))$/.exec(cmd);
  const script = npm ? PKG.scripts[npm[1] ?? npm[2]!] : undefined;
  if (script && runs(code, script)) return true;
  // `npx vitest run PATH…` is run by a file that runs the whole suite, when PATH holds test files it includes.
  const vitest = /^npx vitest run (\S.*)$/.exec(cmd);
  if (vitest && /(^|[\s;&|(])npx vitest run(?=\s*($|[|&;>]|\d>))/m.test(code))
    return vitest[1]!
      .split(/\s+/)
      .every((p) => existsSync(join(ROOT, p)) && readdirSync(join(ROOT, p), { recursive: true }).some((f) => String(f).endsWith('.test.ts')));
  return false;
}

// ---------------------------------------------------------------------------------------------------
// The tests

describe('the README samples are accounted for', () => {
  it('every fenced block of README.md and packages/core/README.md says how it is tested', () => {
    expect(BLOCKS.length).toBeGreaterThanOrEqual(15);
    expect(BLOCKS.filter((b) => b.problem).map((b) => `${nameOf(b)}: ${b.problem}`)).toEqual([]);
    const supported: Record<string, string[]> = { run: ['sh'], tarball: ['sh', 'ts', 'html'], 'ran-by': ['sh'] };
    expect(BLOCKS.filter((b) => b.annotation && !supported[b.annotation.kind]!.includes(b.lang)).map(nameOf)).toEqual([]);
    // Every claim is about a command the README still has.
    const heads = new Set(BLOCKS.filter((b) => b.lang === 'sh').flatMap((b) => parseShell(b).map((u) => u.head)));
    expect([...CLAIMS.keys()].filter((k) => !heads.has(k))).toEqual([]);
  });

  it.each(annotated('ran-by').map((b) => [nameOf(b), b] as const))('%s is run by the files it names', (_name, block) => {
    const files = (block.annotation as { files: string[] }).files;
    for (const f of files) expect(existsSync(join(ROOT, f)), f).toBe(true);
    const code = files.map((f) => codeOf(join(ROOT, f))).join('\n');
    const commands = parseShell(block).flatMap((u) => u.code.split(/\s*&&\s*/).map((c) => c.trim()));
    expect(commands.length).toBeGreaterThan(0);
    expect(commands.filter((c) => !runs(code, c))).toEqual([]);
  });
});

describe.concurrent('the README samples run', () => {
  // The packed project takes longest: it starts at once, while the checkout's blocks take the turns.
  beforeAll(() => {
    compileSamples().catch(() => undefined);
  });

  for (const block of annotated('run', 'sh')) it(`${nameOf(block)} runs in the checkout`, () => checkoutBlock(block), 180_000);

  it('the install block runs from the packed tarballs', async () => {
    const { app } = await tarballProject();
    expect(readdirSync(join(app, 'node_modules')).filter((f) => f.startsWith('aigenora'))).toEqual(['aigenora', 'aigenora-core']);
  }, 300_000);

  for (const sample of TS_SAMPLES)
    it(`${nameOf(sample.block)}${sample.file.endsWith('-or.ts') ? ' (the import its comment offers)' : ''} compiles and runs from the tarball`, async () => {
      const { app, env, status: tsc, diagnostics } = await compileSamples();
      // Its own diagnostics, and any not about a sample (a declaration file of the package).
      expect(diagnostics.filter((d) => d.startsWith(sample.file) || !d.startsWith('sample-'))).toEqual([]);
      expect(tsc === 0 || diagnostics.length > 0, 'tsc failed without a diagnostic').toBe(true);
      const p = start(`${shq(process.execPath)} docs-out/${sample.file.replace(/\.ts$/, '.js')}`, app, env);
      const status = await p.exited;
      expect({ status, stderr: p.err() }).toEqual({ status: 0, stderr: '' });
      expect(lines(p.out())).toEqual(sample.expected);
      expect(sample.expected.length).toBeGreaterThan(0);
    }, 300_000);

  for (const block of annotated('tarball', 'html'))
    it(`${nameOf(block)} imports what the installed package has`, async () => {
      const { app } = await tarballProject();
      const imports = [...block.body.matchAll(/import\s*\{([^}]*)\}\s*from\s*'([^']+)'/g)];
      expect(imports.length).toBeGreaterThan(0);
      for (const [, names, path] of imports) {
        // The page is served from the project's root, as the README's path says.
        const file = join(app, path!);
        expect(existsSync(file), relative(app, file)).toBe(true);
        const exported = [...readFileSync(file, 'utf8').matchAll(/\bexport\s*\{([^}]*)\}/g)].flatMap((m) =>
          m[1]!.split(',').map((e) =>
            e
              .trim()
              .split(/\s+as\s+/)
              .at(-1)!,
          ),
        );
        for (const n of names!
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean))
          expect(exported, `${path} exports ${n}`).toContain(n);
      }
    }, 300_000);
});
