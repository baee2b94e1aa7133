/** Minimal argument parsing and the shape every CLI command takes. */

/**
 * A mistake in how the command was called (an option, an argument, a path that is not what the command
 * needs): exit 2, reported as `aigenora <command>: USAGE: <message>` (or the more precise code given).
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    readonly code: string = 'USAGE',
  ) {
    super(message);
  }
}

export type FlagKind = 'string' | 'boolean';

export interface Args {
  positional: string[];
  flags: Record<string, string | boolean | undefined>;
}

export interface Output {
  /** A line of the command's result (stdout). */
  line(text: string): void;
  /** The command's result as JSON (stdout). */
  json(value: unknown): void;
  /**
   * Why the command refused or failed: the one line of the convention on stderr,
   * `aigenora <command>: <CODE>: <message>`. Detail lines may follow it with `error`.
   */
  refuse(code: string, message: string): void;
  /** A warning on stderr, `aigenora <command>: warning: <text>`: the command goes on. */
  warn(text: string): void;
  /** A line on stderr as it is: the detail lines after a `refuse`, or a notice where stdout is taken. */
  error(text: string): void;
}

export interface Command {
  name: string;
  /** Every option the command accepts appears here (a test checks it against `flags`). */
  usage: string;
  help: string;
  flags: Record<string, FlagKind>;
  /** Returns the exit status: 0 success, 1 a negative result (invalid, failed), 2 usage or I/O. */
  run(args: Args, out: Output): number | Promise<number>;
}

export function parseArgs(argv: readonly string[], kinds: Record<string, FlagKind>): Args {
  const args: Args = { positional: [], flags: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      args.positional.push(...argv.slice(i + 1));
      break;
    }
    if (!a.startsWith('--') || a === '--') {
      args.positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.slice(2, eq < 0 ? undefined : eq);
    const kind = kinds[name];
    if (!kind) throw new UsageError(`unknown option --${name}`);
    if (kind === 'boolean') {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`);
      args.flags[name] = true;
    } else if (eq >= 0) args.flags[name] = a.slice(eq + 1);
    else {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`--${name} needs a value`);
      args.flags[name] = v;
    }
  }
  return args;
}

/** A string flag's value; a flag given without a value (parsed as boolean) counts as absent. */
export function stringFlag(flags: Args['flags'], name: string): string | undefined {
  const v = flags[name];
  return typeof v === 'string' ? v : undefined;
}

/** A decimal integer flag within [min, max], else a UsageError naming the range. */
export function intFlag(flags: Args['flags'], name: string, min: number, max: number): number | undefined {
  const v = stringFlag(flags, name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < min || n > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
  return n;
}

/** For commands that take no positional argument: the first one is refused, quoted and cut short. */
export function noPositional(args: Pick<Args, 'positional'>): void {
  if (args.positional.length) throw new UsageError(`unexpected argument ${JSON.stringify(args.positional[0]!.slice(0, 80))}`);
}
