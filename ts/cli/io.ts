/** File helpers for the CLI: bounded strict reads, strict JSON, atomic writes, secret files. */
import { CryptoError } from '../crypto/errors.js';
import { getCrypto } from '../crypto/index.js';
import { createFileAtomic, FileError, readText as readTextFile, writeFileAtomic } from '../files/index.js';
import { UsageError } from './args.js';

export { writeFileAtomic };

/** Any JSON or text file a command reads: larger ones are refused while reading. */
export const MAX_INPUT_BYTES = 16 << 20;

export function readText(path: string, what?: string, maxBytes = MAX_INPUT_BYTES): string {
  return readTextFile(path, { maxBytes, ...(what ? { what } : {}) });
}

/** Reads a JSON file strictly (duplicate keys, lone surrogates and out-of-range numbers refused). */
export function readJson(path: string, what?: string): unknown {
  const text = readText(path, what);
  try {
    getCrypto().jcs(text);
  } catch (e) {
    if (e instanceof CryptoError) throw new CryptoError(e.code, `${path} is not valid JSON: ${e.message}`);
    throw e;
  }
  return JSON.parse(text) as unknown;
}

/** Creates a file only its owner can read; refuses to replace an existing one unless `force`. */
export function writeSecretFile(path: string, data: string, force = false): void {
  if (force) {
    writeFileAtomic(path, data, 0o600);
    return;
  }
  try {
    createFileAtomic(path, data, 0o600);
  } catch (e) {
    if (e instanceof FileError && e.code === 'FILE_EXISTS') throw new UsageError(`${path} exists; pass --force to replace it`);
    throw e;
  }
}
