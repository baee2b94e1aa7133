/**
 * The `aigenora` command line: dispatch, help, output, exit codes and the one error boundary.
 *
 * Each command's module is imported only when that command runs, so `--help` and `--version` load
 * nothing but this file and args.ts (libp2p alone takes most of a second to load).
 */
import { readFileSync } from 'node:fs';
import { FileError } from '../files/read.js';
import { parseArgs, UsageError, type Command, type Output } from './args.js';

interface Lazy {
  name: string;
  summary: string;
  load(): Promise<Command>;
}

/** A command, or a group of subcommands (`aigenora trade verify …`). */
type Entry = Lazy | { name: string; summary: string; subcommands: Lazy[] };

const lazy = (name: string, summary: string, load: () => Promise<Command>): Lazy => ({ name, summary, load });

const protocolCli = () => import('./protocol.js');
const libraryCli = () => import('./library.js');
const sessionCli = () => import('./session.js');
const netCli = () => import('./net.js');
const tradeCli = () => import('./trade.js');
const registryCli = () => import('./registry.js');
const rinCli = () => import('./rin.js');
const airaCli = () => import('./aira.js');

export const COMMANDS: Entry[] = [
  lazy('demo', 'sign, canonicalize and verify a sample document with both crypto backends', async () => (await import('./demo.js')).demo),
  lazy('conformance', 'check both crypto backends against the public test-vector corpora', async () => (await import('./conformance.js')).conformance),
  lazy('init', 'create the data directory, an Ed25519 identity and the built-in protocol library', async () => (await libraryCli()).init),
  lazy('host', 'publish an invitation and serve one session over the network', async () => (await netCli()).hostCommand),
  lazy('join', 'join the session an invitation offers', async () => (await netCli()).joinCommand),
  lazy('web', 'serve the agent page: join and play a session from a browser', async () => (await import('./web.js')).webCommand),
  lazy('server', 'run the registry server (REST API on PGlite or PostgreSQL)', async () => (await import('./server.js')).serverCommand),
  lazy('validate', 'check a spec.json against every rule, or a message against a spec', async () => (await protocolCli()).validateTop),
  lazy('register', "register this agent's identity at a registry server (proof of work)", async () => (await registryCli()).registerCommand),
  lazy('browse', 'list the open invitations at the registry', async () => (await registryCli()).browseCommand),
  lazy('cancel', 'withdraw one of your invitations from the registry', async () => (await registryCli()).cancelCommand),
  {
    name: 'inbox',
    summary: 'sealed offline messages through the registry: send, list, read, delete',
    subcommands: [
      lazy('send', "seal a message to an agent's public key and leave it at the registry", async () => (await registryCli()).inboxSend),
      lazy('list', 'the messages waiting for this agent', async () => (await registryCli()).inboxList),
      lazy('read', "fetch a message and open it with this agent's key", async () => (await registryCli()).inboxRead),
      lazy('delete', "delete a message from this agent's inbox", async () => (await registryCli()).inboxDelete),
    ],
  },
  {
    name: 'protocol',
    summary: 'spec.json contracts: hash, validate, path, list, create, scaffold, hooks, test, register, fetch, search',
    subcommands: [
      lazy('hash', 'print the protocol_id of a spec.json', async () => (await protocolCli()).protocolHash),
      lazy('validate', 'check a spec.json against every rule, or a message against a spec', async () => (await protocolCli()).protocolValidate),
      lazy('path', 'the directory of a protocol in the local library', async () => (await libraryCli()).protocolPath),
      lazy('list', 'the protocols in the local library', async () => (await libraryCli()).protocolList),
      lazy('create', 'start a new protocol directory from a built-in template', async () => (await protocolCli()).protocolCreate),
      lazy('scaffold', 'generate a hooks.mts skeleton for a protocol directory', async () => (await protocolCli()).protocolScaffold),
      lazy('hooks', "load a protocol's hooks as a session would, and report what is implemented", async () => (await protocolCli()).protocolHooks),
      lazy('test', "play a protocol's hooks against themselves over the in-memory transport", async () => (await sessionCli()).protocolTest),
      lazy('register', 'publish a spec.json at the registry', async () => (await registryCli()).protocolRegister),
      lazy('fetch', 'download a spec from the registry, refused unless it hashes to its protocol_id', async () => (await registryCli()).protocolFetch),
      lazy('search', "search the registry's protocol directory", async () => (await registryCli()).protocolSearch),
    ],
  },
  {
    name: 'session',
    summary: 'sessions: list, events, snapshot, decide, abort, web',
    subcommands: [
      lazy('list', 'the sessions under a data directory, running and finished', async () => (await sessionCli()).sessionList),
      lazy('events', "a session's events.jsonl", async () => (await sessionCli()).sessionEvents),
      lazy('snapshot', "a session's snapshot.json (its phase)", async () => (await sessionCli()).sessionSnapshot),
      lazy('decide', "submit a decision for a session's open decision window", async () => (await sessionCli()).sessionDecide),
      lazy('abort', 'ask a running session to abort', async () => (await sessionCli()).sessionAbort),
      lazy('web', "a loopback page that follows a session and takes a person's decisions", async () => (await import('./session-web.js')).sessionWeb),
    ],
  },
  {
    name: 'rin',
    summary: 'rin.control/v2: serve a control daemon, host the built-in world, observe, submit and follow actions',
    subcommands: [
      lazy('serve', 'run a rin.control/v2 control daemon on loopback', async () => (await rinCli()).rinServe),
      lazy('host', 'run a built-in world and attach it to a control daemon as a host', async () => (await rinCli()).rinHost),
      lazy('worlds', 'the worlds this principal can see at a control daemon', async () => (await rinCli()).rinWorlds),
      lazy('observe', "an actor's latest observation", async () => (await rinCli()).rinObserve),
      lazy('capabilities', 'the capabilities an actor offers, or one capability in full', async () => (await rinCli()).rinCapabilities),
      lazy('submit', 'submit one action for an actor (epoch, observation and digest fetched here)', async () => (await rinCli()).rinSubmit),
      lazy('operation', 'get, wait for, cancel or confirm an operation', async () => (await rinCli()).rinOperation),
      lazy('emergency-stop', "stop an actor's actions, or lift the stop with --off", async () => (await rinCli()).rinEmergencyStop),
    ],
  },
  {
    name: 'aira',
    summary: 'the Aira meta-operation runtime: an MCP server (one task a session), scripted runs, the admission matrix',
    subcommands: [
      lazy('mcp', 'serve the nine meta-operations as MCP tools over stdio or Streamable HTTP', async () => (await airaCli()).airaMcp),
      lazy('run', 'drive a scripted task through the library and print its trace', async () => (await airaCli()).airaRun),
      lazy('matrix', 'the admission matrix the runtime enforces', async () => (await airaCli()).airaMatrix),
    ],
  },
  {
    name: 'receipt',
    summary: "recheck a session's transcript and receipt offline",
    subcommands: [lazy('verify', "recheck a session's transcript and receipt offline", async () => (await sessionCli()).receiptVerify)],
  },
  {
    name: 'proof',
    summary: 'check a cheat proof without either party',
    subcommands: [lazy('verify', 'check a cheat proof without either party', async () => (await sessionCli()).proofVerify)],
  },
  {
    name: 'trade',
    summary: 'agent-trade/0.2 envelopes: new, keygen, sign, verify, state, manifest',
    subcommands: [
      lazy('new', 'create an unsigned envelope from a body', async () => (await tradeCli()).tradeNew),
      lazy('keygen', 'create an Ed25519 signing key file (mode 0600)', async () => (await tradeCli()).tradeKeygen),
      lazy('sign', 'add a signature to an envelope (co-signing keeps earlier ones valid)', async () => (await tradeCli()).tradeSign),
      lazy('verify', 'verify an envelope in the order of the spec; prints valid or fail:<code>', async () => (await tradeCli()).tradeVerify),
      lazy('state', "fold verified TRADE_EVENTs into the trade's state", async () => (await tradeCli()).tradeState),
      lazy('manifest', 'the catalog manifest of a folder and its catalog_hash', async () => (await tradeCli()).tradeManifest),
    ],
  },
];

/**
 * Where the command line writes. The installed command writes to the process's streams; a program
 * (or a test) that runs `main` in process passes its own, and gets the exit status back instead of
 * an exit: `main` itself never exits the process.
 */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

export const processIo: CliIo = {
  stdout: (t) => void process.stdout.write(t),
  stderr: (t) => void process.stderr.write(t),
};

function outputOf(io: CliIo, label: string): Output {
  return {
    line: (t) => io.stdout(`${t}\n`),
    json: (v) => io.stdout(`${JSON.stringify(v, null, 2)}\n`),
    refuse: (code, message) => io.stderr(`aigenora ${label}: ${coded(code, message.split('\n')[0] ?? '')}\n`),
    warn: (t) => io.stderr(`aigenora ${label}: warning: ${t}\n`),
    error: (t) => io.stderr(`${t}\n`),
  };
}

export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'usage: aigenora <command> [options]   (aigenora <command> --help for details)',
    '',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'aigenora --version prints the version. The crypto backend is wasm unless AIGENORA_CRYPTO=js;',
    'AIGENORA_DEBUG=1 adds the stack to an internal error.',
  ].join('\n');
}

function groupUsage(name: string, subcommands: Lazy[]): string {
  const width = Math.max(...subcommands.map((c) => c.name.length));
  return `usage: aigenora ${name} <subcommand> [options]\n\n${subcommands.map((c) => `  ${name} ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}\n`;
}

const isHelp = (a: string | undefined) => a === '--help' || a === '-h' || a === 'help';

/**
 * A code as the convention prints it, upper snake case: a wire's lower-case code (rin's `not_found`) is
 * upper-cased, so that every refusal line reads `aigenora <command>: <CODE>: <message>`.
 */
export function conventionCode(code: string): string {
  const c = code.replace(/[^A-Za-z0-9_]/g, '_').toUpperCase();
  return /^[A-Z]/.test(c) ? c : `E_${c}`;
}

/** `CODE: message`, the code not repeated when the message already starts with it. */
function coded(code: string, message: string): string {
  const c = conventionCode(code);
  for (const p of [`${code}: `, `${c}: `]) if (message.startsWith(p)) return `${c}: ${message.slice(p.length)}`;
  return `${c}: ${message}`;
}

/** A message that already starts with its own code (`HOOKS_SKELETON: …`), as a wrapped error's does. */
const STARTS_WITH_CODE = /^[A-Z][A-Z0-9_]*[A-Z0-9]: /;

/** One line for any error: `CODE: message` (USAGE for a usage error), else `INTERNAL_ERROR: …`. */
export function describeError(e: unknown): { message: string; status: number } {
  if (e instanceof UsageError) return { message: e.code === 'USAGE' && STARTS_WITH_CODE.test(e.message) ? e.message : coded(e.code, e.message), status: 2 };
  // A path that is missing or not a file is a usage mistake; a file that is too large, not UTF-8 or
  // open to others is bad input.
  if (e instanceof FileError) return { message: e.message, status: ['FILE_TOO_LARGE', 'FILE_NOT_UTF8', 'FILE_PERMISSIONS'].includes(e.code) ? 1 : 2 };
  const err = e instanceof Error ? e : new Error(String(e));
  const code = (err as { code?: unknown }).code;
  const first = err.message.split('\n')[0] ?? '';
  if (typeof code === 'string' && code !== '') {
    // A path that is not what the command needs, as a missing file is (exit 2): a spec that cannot be read,
    // a data directory that is a file or cannot be made, the system's own ENOENT, ENOTDIR or EISDIR.
    if (['WASM_UNAVAILABLE', 'DATA_DIR_INVALID', 'SPEC_UNREADABLE', 'ENOENT', 'ENOTDIR', 'EISDIR'].includes(code))
      return { message: coded(code, first), status: 2 };
    return { message: coded(code, first), status: 1 };
  }
  return { message: `INTERNAL_ERROR: ${first || err.name}${process.env['AIGENORA_DEBUG'] === '1' ? '' : ' (AIGENORA_DEBUG=1 shows the stack)'}`, status: 1 };
}

/** The command running in this process, for an error that escapes it (installProcessGuards). */
let running = '';

function reportError(io: CliIo, label: string, e: unknown, cmd?: Command): number {
  const { message, status } = describeError(e);
  io.stderr(`aigenora${label ? ` ${label}` : ''}: ${message}\n`);
  if (e instanceof UsageError && cmd) io.stderr(`usage: ${cmd.usage}\n`);
  if (process.env['AIGENORA_DEBUG'] === '1' && e instanceof Error && e.stack) io.stderr(`${e.stack}\n`);
  return status;
}

export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  const [name, ...rest] = [...argv];
  if (name === undefined || isHelp(name)) {
    io.stdout(`${usage()}\n`);
    return 0;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    io.stdout(`aigenora ${version()}\n`);
    return 0;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry) {
    io.stderr(`aigenora: UNKNOWN_COMMAND: ${JSON.stringify(name.slice(0, 80))} is not a command\n\n${usage()}\n`);
    return 2;
  }
  let found: Lazy;
  let label = entry.name;
  if ('subcommands' in entry) {
    const sub = rest.shift();
    if (sub === undefined || isHelp(sub)) {
      io.stdout(groupUsage(entry.name, entry.subcommands));
      return 0;
    }
    const hit = entry.subcommands.find((c) => c.name === sub);
    if (!hit) {
      io.stderr(
        `aigenora ${entry.name}: UNKNOWN_SUBCOMMAND: ${JSON.stringify(sub.slice(0, 80))} is not a subcommand of ${entry.name}\n\n${groupUsage(entry.name, entry.subcommands)}`,
      );
      return 2;
    }
    found = hit;
    label = `${entry.name} ${hit.name}`;
  } else found = entry;
  running = label;
  let cmd: Command | undefined;
  try {
    cmd = await found.load();
    if (rest.includes('--help') || rest.includes('-h')) {
      io.stdout(`usage: ${cmd.usage}\n\n${found.summary}.\n\n${cmd.help}\n`);
      return 0;
    }
    return await cmd.run(parseArgs(rest, cmd.flags), outputOf(io, label));
  } catch (e) {
    return reportError(io, label, e, cmd);
  }
}

/**
 * Errors that escape a command's own handling (a socket event, a timer) still end in one line and
 * exit 1 rather than a stack trace; a closed stdout (`aigenora … | head`) ends the command quietly.
 */
export function installProcessGuards(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    process.exit(reportError(processIo, running, e));
  });
  process.on('uncaughtException', (e) => process.exit(reportError(processIo, running, e)));
  process.on('unhandledRejection', (e) => process.exit(reportError(processIo, running, e)));
}
