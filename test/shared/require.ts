// The one way a test of this suite may be skipped. A test that needs something outside the repo (a
// corpus or a reference source under ../shared, or a tool the test script installs: Go, python3, root
// and the namespace tools, the reference virtualenv, the rin Go daemon, PostgreSQL) asks for it here:
//
//   const ok = needShared('conformance/aigenora-reference/aigenora-box-vectors.json', "the reference's box vectors");
//   it.skipIf(!ok)('passes every case …', …);
//
// Present: `true`, nothing printed. Absent: the call throws an Error naming what is missing and how to get
// it, which fails the test file, unless AIGENORA_SKIP_CORPORA=1 (the only switch; scripts/test.sh sets
// it when ../shared is absent altogether) asks to skip: then it prints one `SKIPPED: …` line and returns
// `false`, and vitest counts the gated tests as skipped, which scripts/test.sh adds to its last line.
// Never gate a test on anything else (one of our own commands, an optional feature): those must fail.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root. */
export const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** ../shared beside the repository: the corpora (conformance/) and the reference sources (reference/). */
export const SHARED = resolve(REPO, '../shared');
/** The environment variable that, set to 1, lets a missing requirement skip instead of fail. */
export const SKIP_SWITCH = 'AIGENORA_SKIP_CORPORA';

export type Env = Readonly<Record<string, string | undefined>>;

export interface NeedOptions {
  /** How to get what is missing (appended to the error). */
  how?: string;
  /** The environment to read the switch from; process.env by default. */
  env?: Env;
}

/**
 * True when `present` (a value, or a probe called once) holds. Otherwise throws an Error naming `what`,
 * unless AIGENORA_SKIP_CORPORA=1, when it warns `SKIPPED: <what> …` and returns false.
 */
export function need(what: string, present: boolean | (() => boolean), options: NeedOptions = {}): boolean {
  if (typeof present === 'function' ? present() : present) return true;
  const env = options.env ?? process.env;
  if (env[SKIP_SWITCH] === '1') {
    console.warn(`SKIPPED: ${what} is missing, so the tests that need it do not run (${SKIP_SWITCH}=1)`);
    return false;
  }
  throw new Error(
    `missing ${what}${options.how ? `; ${options.how}` : ''}. ` +
      `Nothing is skipped unless ${SKIP_SWITCH}=1 asks for it (scripts/test.sh sets it only when ../shared is absent).`,
  );
}

/** The absolute path of ../shared/<rel>, computed from the repository (never a machine's absolute path). */
export const sharedPath = (rel: string): string => join(SHARED, rel);

/** `need` for ../shared/<rel> (a file or a folder); `what` says what it is. */
export function needShared(rel: string, what?: string, options: NeedOptions = {}): boolean {
  const path = sharedPath(rel);
  return need(`${what ? `${what}: ` : ''}../shared/${rel} (${path})`, () => existsSync(path), {
    how: `the shared data (corpora and reference sources) lives beside the repository, at ${SHARED}`,
    ...options,
  });
}

/** Whether `cmd` is on the PATH. */
export const hasCommand = (cmd: string): boolean => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;

/** `need` for a command on the PATH; `what` says what it is for, `how` how to install it. */
export function needCommand(cmd: string, what: string, how: string, options: NeedOptions = {}): boolean {
  return need(`the \`${cmd}\` command (${what})`, () => hasCommand(cmd), { how, ...options });
}

/** The reference's Python sources (../shared/reference/aigenora-src/src), for the tests that run its hooks. */
export const REFERENCE_SRC = sharedPath('reference/aigenora-src/src');

/**
 * `need` for python3 importing `modules` from the reference's sources: the source folder first, then the
 * import (whose error is shown when it fails).
 */
export function needReferencePython(modules: string[], what = "the reference's Python hooks", options: NeedOptions = {}): boolean {
  if (!needShared('reference/aigenora-src/src', `the reference's Python sources (${what})`, options)) return false;
  const r = spawnSync('python3', ['-c', modules.map((m) => `import ${m}`).join('; ')], {
    cwd: REFERENCE_SRC,
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: REFERENCE_SRC, PYTHONDONTWRITEBYTECODE: '1' },
  });
  const why = r.error ? String(r.error) : (r.stderr || '').trim().split('\n').pop();
  return need(`python3 importing ${modules.join(', ')} from ${REFERENCE_SRC} (${what})`, r.status === 0, {
    how: `python3 >= 3.10 must be on the PATH${why ? ` (it said: ${why})` : ''}`,
    ...options,
  });
}
