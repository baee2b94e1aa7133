/** File helpers for the CLI: strict JSON reading, atomic writes, secret files with mode 0600. */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { CryptoError } from '../crypto/errors.js';
import { getCrypto } from '../crypto/index.js';
import { UsageError } from './args.js';

export function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** Reads a JSON file strictly (duplicate keys, lone surrogates and out-of-range numbers refused). */
export function readJson(path: string): unknown {
  const text = readText(path);
  try {
    getCrypto().jcs(text);
  } catch (e) {
    if (e instanceof CryptoError) throw new UsageError(`${path} is not valid JSON: ${e.message}`);
    throw e;
  }
  return JSON.parse(text) as unknown;
}

/**
 * Writes via a temporary file and rename, so a reader never sees half a file. A path that exists and
 * is not a regular file (/dev/null, /dev/stdout, a FIFO) is written in place: renaming onto it would
 * replace the device itself.
 */
export function writeFileAtomic(path: string, data: string, mode = 0o644): void {
  const st = statSync(path, { throwIfNoEntry: false });
  if (st && !st.isFile()) {
    writeFileSync(path, data);
    return;
  }
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', mode);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/** Creates a file only readable by its owner; refuses to replace an existing one unless `force`. */
export function writeSecretFile(path: string, data: string, force = false): void {
  if (force) {
    writeFileAtomic(path, data, 0o600);
    return;
  }
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new UsageError(`${path} exists; pass --force to replace it`);
    throw new UsageError(`cannot create ${path}: ${(e as Error).message}`);
  }
  try {
    writeSync(fd, data);
  } finally {
    closeSync(fd);
  }
}
