/** The `aigenora` command line: dispatch, help, output and exit codes. */
import { CryptoError } from '../crypto/errors.js';
import { parseArgs, UsageError, type Command, type Output } from './args.js';
import { conformance } from './conformance.js';
import { demo } from './demo.js';
import { init, protocolList, protocolPath } from './library.js';
import { protocolCreate, protocolHash, protocolHooks, protocolScaffold, protocolValidate, validateTop } from './protocol.js';
import { proofVerify, protocolTest, receiptVerify, sessionAbort, sessionDecide, sessionEvents, sessionList, sessionSnapshot } from './session.js';
import { hostCommand, joinCommand } from './net.js';
import { TRADE_COMMANDS } from './trade.js';

/** A command, or a group of subcommands (`aigenora trade verify …`). */
type Entry = Command | { name: string; summary: string; subcommands: Command[] };

const COMMANDS: Entry[] = [
  demo,
  conformance,
  init,
  hostCommand,
  joinCommand,
  validateTop,
  {
    name: 'protocol',
    summary: 'spec.json contracts: hash, validate, path, list, create, scaffold, hooks, test',
    subcommands: [protocolHash, protocolValidate, protocolPath, protocolList, protocolCreate, protocolScaffold, protocolHooks, protocolTest],
  },
  { name: 'session', summary: 'sessions: list, events, snapshot, decide, abort', subcommands: [sessionList, sessionEvents, sessionSnapshot, sessionDecide, sessionAbort] },
  { name: 'receipt', summary: "recheck a session's transcript and receipt offline", subcommands: [receiptVerify] },
  { name: 'proof', summary: 'check a cheat proof without either party', subcommands: [proofVerify] },
  { name: 'trade', summary: 'agent-trade/0.2 envelopes: new, keygen, sign, verify, state, manifest', subcommands: TRADE_COMMANDS },
];

const stdout: Output = {
  line: (t) => process.stdout.write(`${t}\n`),
  json: (v) => process.stdout.write(`${JSON.stringify(v, null, 2)}\n`),
};

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'usage: aigenora <command> [options]   (aigenora <command> --help for details)',
    '',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'The crypto backend is wasm unless AIGENORA_CRYPTO=js.',
  ].join('\n');
}

export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = [...argv];
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${usage()}\n`);
    return name === undefined ? 2 : 0;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry) {
    process.stderr.write(`aigenora: unknown command ${JSON.stringify(name)}\n\n${usage()}\n`);
    return 2;
  }
  let cmd: Command;
  let label = entry.name;
  if ('subcommands' in entry) {
    const sub = rest.shift();
    const found = entry.subcommands.find((c) => c.name === sub);
    if (!found) {
      const list = entry.subcommands.map((c) => `  ${entry.name} ${c.name.padEnd(9)} ${c.summary}`).join('\n');
      const known = sub === undefined || sub === '--help' || sub === '-h';
      (known ? process.stdout : process.stderr).write(`${known ? '' : `aigenora ${entry.name}: unknown subcommand ${JSON.stringify(sub)}\n\n`}usage: aigenora ${entry.name} <subcommand> [options]\n\n${list}\n`);
      return sub === '--help' || sub === '-h' ? 0 : 2;
    }
    cmd = found;
    label = `${entry.name} ${found.name}`;
  } else cmd = entry;
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`usage: ${cmd.usage}\n\n${cmd.help}\n`);
    return 0;
  }
  try {
    return await cmd.run(parseArgs(rest, cmd.flags), stdout);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`aigenora ${label}: ${e.message}\nusage: ${cmd.usage}\n`);
      return 2;
    }
    if (e instanceof CryptoError) {
      process.stderr.write(`aigenora ${label}: ${e.message}\n`);
      return e.code === 'WASM_UNAVAILABLE' ? 2 : 1;
    }
    throw e;
  }
}

// A closed pipe (`aigenora … | head`) ends the command quietly instead of crashing on EPIPE.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('/ts/cli/main.ts')) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
