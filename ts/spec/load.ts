/** Loading a spec from a file or a protocol directory: size limit, strict UTF-8, then checkSpecText. */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
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

export function loadSpec(crypto: Crypto, target: string, opts: ValidateOptions = {}): LoadedSpec {
  const { path, dir } = specPath(target);
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new SpecLoadError('SPEC_UNREADABLE', `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (bytes.length > MAX_SPEC_BYTES) throw new SpecLoadError('SPEC_TOO_LARGE', `${path} is ${bytes.length} bytes; the limit is ${MAX_SPEC_BYTES}`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { path, dir, text: '', spec: {} as Spec, issues: [{ pointer: '', code: 'SPEC_JSON_INVALID', message: `${path} is not UTF-8`, severity: 'error' }], ok: false };
  }
  return { path, dir, ...checkSpecText(crypto, text, opts) };
}
