/**
 * `aigenora aira …`: the Aira meta-operation runtime from the command line. `mcp` serves one task per MCP
 * session (stdio, or Streamable HTTP on loopback), `run` drives a scripted task through the library and
 * prints its trace, `matrix` prints the admission matrix the runtime enforces.
 */
import { randomUUID } from 'node:crypto';
import { readText } from '../files/read.js';
import type { Crypto } from '../crypto/backend.js';
import { intFlag, noPositional, stringFlag, UsageError, type Command, type Output } from './args.js';
import type { TaskInput } from '../aira/runtime.js';
import type { SessionAuthority } from '../aira/mcp/open.js';
import type { Trace } from '../aira/schema.js';

type Flags = Record<string, string | boolean | undefined>;

/** The limit on a task or script file. */
export const MAX_INPUT_FILE_BYTES = 1 << 20;

export class AiraCliError extends Error {
  override readonly name = 'AiraCliError';
  constructor(
    readonly code: 'TASK_FILE_INVALID' | 'SCRIPT_FILE_INVALID' | 'LISTEN_FAILED' | 'INVALID_LISTEN',
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

const str = stringFlag;

/** A JSON file: missing, a directory, too large or not UTF-8 are FileErrors; empty or not JSON are ours. */
function readJsonFile(path: string, what: string, code: 'TASK_FILE_INVALID' | 'SCRIPT_FILE_INVALID'): unknown {
  const text = readText(path, { maxBytes: MAX_INPUT_FILE_BYTES, what });
  if (text.trim() === '') throw new AiraCliError(code, `${what} ${path} is empty`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AiraCliError(code, `${what} ${path} is not JSON`);
  }
}

async function taskInput(flags: Flags): Promise<TaskInput> {
  const path = str(flags, 'task');
  if (path === undefined) return (await import('../aira/doc/index.js')).bracketTask();
  const v = readJsonFile(path, 'the task', 'TASK_FILE_INVALID');
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new AiraCliError('TASK_FILE_INVALID', `the task ${path} must be a JSON object {"intentFrame", "protocol"?, "budget"?, "grantId"?, "nonce"?}`);
  // Its members are checked by the runtime (TASK_INPUT_INVALID) when the task starts.
  return v as TaskInput;
}

async function cryptoBackend(): Promise<Crypto> {
  return (await import('../crypto/index.js')).getCrypto();
}

async function memoryDocAuthority(crypto: Crypto): Promise<SessionAuthority> {
  const { openDocumentAuthority } = await import('../aira/doc/index.js');
  const authority = openDocumentAuthority({ crypto });
  return { authority, release: () => authority.close() };
}

// ---------------------------------------------------------------------------------------------

const AUTHORITIES = ['doc', 'rin'] as const;

export const airaMcp: Command = {
  name: 'mcp',
  usage:
    'aigenora aira mcp [--authority doc|rin] [--task FILE] [--http 127.0.0.1:PORT] [--data-dir DIR] [--db URL] [--control URL] [--host-id ID] [--world ID] [--actor ID] [--bind-capabilities N] [--bind-ttl SECONDS] [--idle-timeout SECONDS] [--json]',
  help: `Serves the Aira meta-operations as MCP tools (one tool per meta-operation, never one per capability): each
MCP session is one task, started from --task FILE (a JSON TaskInput: {"intentFrame", "protocol"?, "budget"?,
"grantId"?, "nonce"?}; default the built-in bracket demo task), and cancelled if the session ends unfinished.
Every tool answers the runtime's envelope as structuredContent; the trace is the resource aira://task/trace and
the capsule aira://task/capsule.
Transport: stdio (default; the process is the session), or Streamable HTTP with --http HOST:PORT on loopback
(port 0 picks one; endpoint /mcp; one task per mcp-session-id). With --http it prints one line with the URL
(--json: {"url", "authority", "store"}); on stdio nothing but the protocol goes to stdout. Over HTTP a session
that no request used for --idle-timeout SECONDS (default 1800) ends and its task is cancelled; at 64 open
sessions a new one ends the least recently used idle session.
--authority doc (default): the built-in document authority. Its store is in memory, a fresh one per session,
unless --data-dir DIR (PGlite under DIR/aira/db) or --db postgres://... is given: then all sessions share it.
--authority rin: a rin.control/v2 daemon at --control URL (token from $RIN_CONTROL_TOKEN), the actor named by
--host-id, --world and --actor; --task is required.
--bind-capabilities N (1-20): after catalog.describe, up to N described capabilities become typed tools
bound.<name> that build a one-step plan and propose it; bound to the revision, catalog hash and runtime
snapshot, they answer BOUND_CAPABILITY_STALE once any of these moved or --bind-ttl SECONDS (default 600) passed.
SIGINT or SIGTERM stops the server.`,
  flags: {
    authority: 'string',
    task: 'string',
    http: 'string',
    'data-dir': 'string',
    db: 'string',
    control: 'string',
    'host-id': 'string',
    world: 'string',
    actor: 'string',
    'bind-capabilities': 'string',
    'bind-ttl': 'string',
    'idle-timeout': 'string',
    json: 'boolean',
  },
  async run(args, out) {
    noPositional(args);
    const kind = str(args.flags, 'authority') ?? 'doc';
    if (!(AUTHORITIES as readonly string[]).includes(kind)) throw new UsageError(`--authority must be one of ${AUTHORITIES.join(', ')}`);
    const bindCapabilities = intFlag(args.flags, 'bind-capabilities', 1, 20);
    const bindTtl = intFlag(args.flags, 'bind-ttl', 1, 86_400);
    if (bindTtl !== undefined && bindCapabilities === undefined) throw new UsageError('--bind-ttl needs --bind-capabilities');
    const dbUrl = str(args.flags, 'db');
    if (dbUrl !== undefined && !/^postgres(ql)?:\/\//.test(dbUrl)) throw new UsageError('--db must be a postgres:// or postgresql:// URL');
    const dataDirFlag = str(args.flags, 'data-dir');
    if (dbUrl !== undefined && dataDirFlag !== undefined) throw new UsageError('--db and --data-dir exclude each other');
    const httpListen = str(args.flags, 'http');
    const idleTimeout = intFlag(args.flags, 'idle-timeout', 1, 7 * 86_400);
    if (idleTimeout !== undefined && httpListen === undefined) throw new UsageError('--idle-timeout is for --http: over stdio the process is the session');
    if (kind === 'doc')
      for (const f of ['control', 'host-id', 'world', 'actor']) if (args.flags[f] !== undefined) throw new UsageError(`--${f} is for --authority rin`);
    if (kind === 'rin') {
      if (dbUrl !== undefined || dataDirFlag !== undefined) throw new UsageError('--data-dir and --db are for --authority doc');
      if (str(args.flags, 'task') === undefined) throw new UsageError('--authority rin needs --task FILE: the built-in task is for the document authority');
    }
    if (httpListen !== undefined) {
      const { parseListen, McpListenError } = await import('../aira/mcp/http.js');
      try {
        parseListen(httpListen);
      } catch (e) {
        if (e instanceof McpListenError) throw new UsageError(e.message);
        throw e;
      }
    }
    const task = await taskInput(args.flags);
    // Checked before anything is opened or served, so a bad task is one line and no half-started server.
    (await import('../aira/capsule.js')).resolveTaskInput(task);
    const crypto = await cryptoBackend();
    const shared = await openSharedAuthority(kind, args.flags, crypto, dbUrl, dataDirFlag);
    const { openTaskSession } = await import('../aira/mcp/open.js');
    const { version } = await import('./main.js');
    const open = async () => {
      // A shared store keeps every task it saw: each session's task gets a nonce of its own unless the task
      // file fixes one, so sessions never share a task branch.
      const perSession = shared.perSession || task.nonce !== undefined ? task : { ...task, nonce: randomUUID() };
      return openTaskSession({
        crypto,
        task: perSession,
        authority: shared.open,
        ...(bindCapabilities !== undefined && { bindCapabilities }),
        ...(bindTtl !== undefined && { bindTtlMs: bindTtl * 1000 }),
      });
    };
    try {
      if (httpListen === undefined) {
        const { serveAiraMcpStdio } = await import('../aira/mcp/stdio.js');
        // The task is started before the transport: a bad task file fails here with one line.
        const session = await open();
        const { ended } = await serveAiraMcpStdio({ ...session, version: version() });
        const ready = { transport: 'stdio', authority: kind, store: shared.store, taskId: session.task.taskId };
        out.error(
          args.flags['json']
            ? JSON.stringify(ready)
            : `aigenora aira mcp: serving task ${session.task.taskId} on stdio (authority ${kind}, store ${shared.store})`,
        );
        await Promise.race([ended, stopSignal()]);
        return 0;
      }
      const { serveAiraMcpHttp, McpListenError } = await import('../aira/mcp/http.js');
      let served;
      try {
        served = await serveAiraMcpHttp({
          listen: httpListen,
          openSession: () => open(),
          version: version(),
          ...(idleTimeout !== undefined && { idleTimeoutMs: idleTimeout * 1000 }),
        });
      } catch (e) {
        if (e instanceof McpListenError) throw new AiraCliError(e.code, e.message);
        throw e;
      }
      if (args.flags['json']) out.line(JSON.stringify({ url: served.url, authority: kind, store: shared.store }));
      else out.line(`aigenora aira mcp listening on ${served.url} (authority ${kind}, store ${shared.store})`);
      await stopSignal();
      await served.close();
      return 0;
    } finally {
      await shared.close();
    }
  },
};

interface SharedAuthority {
  /** Each session opens its own authority (and store). */
  readonly perSession: boolean;
  readonly store: string;
  open(): Promise<SessionAuthority>;
  close(): Promise<void>;
}

async function openSharedAuthority(
  kind: string,
  flags: Flags,
  crypto: Crypto,
  dbUrl: string | undefined,
  dataDirFlag: string | undefined,
): Promise<SharedAuthority> {
  if (kind === 'rin') return openRin(flags, crypto);
  if (dbUrl === undefined && dataDirFlag === undefined)
    return { perSession: true, store: 'memory', open: () => memoryDocAuthority(crypto), close: async () => undefined };
  const [{ join }, { resolveDataDir }, node, { openDocumentAuthority }] = await Promise.all([
    import('node:path'),
    import('../library/data-dir.js'),
    import('../aira/node.js'),
    import('../aira/doc/index.js'),
  ]);
  const dataDir = resolveDataDir(dataDirFlag);
  const dir = join(dataDir, 'aira');
  const store = await node.DbDocStore.open(dbUrl === undefined ? { dataDir } : { url: dbUrl });
  // Never print the PostgreSQL URL: it may hold a password.
  const label = dbUrl === undefined ? `pglite ${join(dir, 'db')}` : 'postgres';
  const authority = openDocumentAuthority({ crypto, store });
  return { perSession: false, store: label, open: async () => ({ authority, release: async () => undefined }), close: () => authority.close() };
}

async function openRin(flags: Flags, crypto: Crypto): Promise<SharedAuthority> {
  const [{ controlToken, resolveTarget }, { RinControlClient, CONTROL_DEFAULT_BASE_URL }, { RinError }, rin, policy] = await Promise.all([
    import('./rin.js'),
    import('../rin/client.js'),
    import('../rin/errors.js'),
    import('../aira/rin/index.js'),
    import('../aira/rin/local-policy.js'),
  ]);
  let client;
  try {
    client = new RinControlClient({ baseUrl: str(flags, 'control') ?? CONTROL_DEFAULT_BASE_URL, token: controlToken() });
  } catch (e) {
    if (e instanceof RinError) throw new UsageError(`--control: ${e.message}`);
    throw e;
  }
  const target = await resolveTarget(client, flags);
  const harbor = target.world_id === 'harbor';
  const authority = rin.openRinAuthority({
    client,
    crypto,
    world: { host_id: target.host_id, world_id: target.world_id },
    actor: target.actor_id,
    ...(harbor && { effects: rin.HARBOR_EFFECTS, policy: policy.harborRinPolicy() }),
  });
  return {
    perSession: false,
    store: `rin ${target.world_id}/${target.actor_id}`,
    open: async () => ({ authority, release: async () => undefined }),
    close: () => authority.close(),
  };
}

function stopSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

// ---------------------------------------------------------------------------------------------

function printTrace(trace: Trace, out: Output): void {
  out.line(`task ${trace.taskId} (contract ${trace.contractVersion}, trace ${trace.traceVersion}, ${trace.matrixDigest})`);
  for (const e of trace.events) {
    const what = e.code === undefined ? (e.status ?? '') : `${e.status ?? ''} ${e.code}`.trim();
    out.line(
      `${String(e.seq).padStart(3)} b${e.batch} ${e.op.padEnd(18)} ${e.requestId.slice(0, 40).padEnd(12)} ${e.decision.padEnd(9)} ${e.fromState} -> ${e.toState}${what ? `  ${what}` : ''}`,
    );
  }
  const t = trace.terminal;
  out.line(t === null ? 'not ended' : `terminal ${t.state} (${t.code}) at ${t.seq}: ${t.reason.slice(0, 200)}`);
}

export const airaRun: Command = {
  name: 'run',
  usage: 'aigenora aira run [--task FILE] [--script FILE] [--json]',
  help: `Runs a scripted task through the library on the built-in document authority (memory store) and prints its
trace: one line per event and the terminal (--json: the trace). Exit 0 when the task completed, 1 otherwise.
--task FILE: a JSON TaskInput (default: the bracket demo task). --script FILE: a JSON array of {"op", "input"}
calls, run in order until the task ends (default: the bracket demo script). In a script a string that is exactly
"\${<requestId>.<path>}" is replaced by that member of the earlier answer to <requestId>, and "\${capsule.<path>}"
by a member of the task capsule (candidate ids, tokens and plan bindings are known only then).`,
  flags: { task: 'string', script: 'string', json: 'boolean' },
  async run(args, out) {
    noPositional(args);
    const task = await taskInput(args.flags);
    const { bracketScript, parseScript, runScript, ScriptError } = await import('../aira/mcp/script.js');
    const scriptPath = str(args.flags, 'script');
    let steps;
    if (scriptPath === undefined) steps = bracketScript();
    else {
      try {
        steps = parseScript(readJsonFile(scriptPath, 'the script', 'SCRIPT_FILE_INVALID'));
      } catch (e) {
        if (e instanceof ScriptError) throw new AiraCliError('SCRIPT_FILE_INVALID', `${scriptPath}: ${e.message}`);
        throw e;
      }
    }
    const crypto = await cryptoBackend();
    const { startTask } = await import('../aira/runtime.js');
    const held = await memoryDocAuthority(crypto);
    try {
      const t = await startTask({ authority: held.authority, crypto, task });
      await runScript(
        steps,
        (op, input) => t.call({ op, input }),
        () => t.capsule(),
      );
      const trace = t.trace();
      if (args.flags['json']) out.json(trace);
      else printTrace(trace, out);
      return trace.terminal?.state === 'completed' ? 0 : 1;
    } finally {
      await held.release();
    }
  },
};

export const airaMatrix: Command = {
  name: 'matrix',
  usage: 'aigenora aira matrix [--json]',
  help: `Prints the Meta-operation Contract the runtime enforces: for each of the nine states and nine meta-operations,
admitted (and the state it leads to, "=" for unchanged) or refused (the code and the operation to call next).
--json: {"contractVersion", "traceVersion", "matrixDigest", "descriptor"}.`,
  flags: { json: 'boolean' },
  async run(args, out) {
    noPositional(args);
    const crypto = await cryptoBackend();
    const { defaultContract } = await import('../aira/contract.js');
    const c = defaultContract(crypto);
    if (args.flags['json']) {
      out.json({ contractVersion: c.contractVersion, traceVersion: c.traceVersion, matrixDigest: c.matrixDigest, descriptor: c.descriptor });
      return 0;
    }
    out.line(`Meta-operation Contract ${c.contractVersion} (trace ${c.traceVersion}) ${c.matrixDigest}`);
    const d = c.descriptor;
    for (const state of d.states) {
      for (const op of d.ops) {
        const cell = d.cells[state][op];
        const variants = Object.keys(cell.variants ?? {});
        const what = cell.admit ? `admit -> ${cell.to}` : `refuse ${cell.code} -> next ${cell.next}`;
        out.line(`${state.padEnd(9)} ${op.padEnd(18)} ${what}${variants.length ? `  (variants: ${variants.join(', ')})` : ''}`);
      }
    }
    return 0;
  },
};
