/** Loading a spec from a file or a protocol directory: size limit, strict UTF-8, then checkSpecText. */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { decodeUtf8, FileError, readBytes } from '../files/read.js';
import { checkSpecText, MAX_SPEC_BYTES, SpecLoadError, type LoadedSpec } from './check.js';
import type { Spec } from './types.js';
import type { ValidateOptions } from './validate.js';

/** Resolves `target` (a spec.json file or a directory containing one). */
export function specPath(target: string): { path: string; dir: string } {
  let st;
  try {
    st = statSync(target);
  } catch (e) {
    throw new SpecLoadError('SPEC_UNREADABLE', `cannot read ${target}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (st.isDirectory()) return { path: join(target, 'spec.json'), dir: target };
  return { path: target, dir: join(target, '..') };
}

/**
 * Reads and checks a spec.json (checkSpecText's answer, with where it was read from). A spec with
 * errors is an answer (`ok: false`); a file that cannot be read, or is over MAX_SPEC_BYTES, throws
 * SpecLoadError.
 *
 * @param crypto - computes protocol_id
 * @param target - a spec.json file, or a directory holding one
 * @param opts - as validateSpec's
 * @example
 * ```ts
 * const spec = loadSpec(getCrypto(), './my-game');
 * if (!spec.ok) for (const i of spec.issues) console.log(i.pointer, i.code, i.message);
 * ```
 */
export function loadSpec(crypto: Crypto, target: string, opts: ValidateOptions = {}): LoadedSpec {
  const { path, dir } = specPath(target);
  let bytes: Uint8Array;
  try {
    bytes = readBytes(path, { maxBytes: MAX_SPEC_BYTES, what: 'spec' });
  } catch (e) {
    if (!(e instanceof FileError)) throw e;
    throw new SpecLoadError(e.code === 'FILE_TOO_LARGE' ? 'SPEC_TOO_LARGE' : 'SPEC_UNREADABLE', e.detail);
  }
  let text: string;
  try {
    text = decodeUtf8(bytes, path);
  } catch {
    return {
      path,
      dir,
      text: '',
      spec: {} as Spec,
      issues: [{ pointer: '', code: 'SPEC_JSON_INVALID', message: `${path} is not UTF-8`, severity: 'error' }],
      ok: false,
    };
  }
  return { path, dir, ...checkSpecText(crypto, text, opts) };
}
