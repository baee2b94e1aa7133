/** Loading a spec from a file or a protocol directory: size limit, strict JSON, validation, protocol_id. */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { CryptoError } from '../crypto/errors.js';
import type { SpecIssue } from './errors.js';
import { protocolId } from './protocol-id.js';
import type { Spec } from './types.js';
import { validateSpec, type ValidateOptions } from './validate.js';

/** spec.json files larger than this are refused before parsing. */
export const MAX_SPEC_BYTES = 4 << 20;

export class SpecLoadError extends Error {
  override readonly name = 'SpecLoadError';
  constructor(
    readonly code: 'SPEC_UNREADABLE' | 'SPEC_TOO_LARGE',
    message: string,
  ) {
    super(message);
  }
}

export interface LoadedSpec {
  /** The spec.json path that was read. */
  path: string;
  /** The protocol directory (where hooks live). */
  dir: string;
  text: string;
  /** The parsed spec; only meaningful when `ok`. */
  spec: Spec;
  /** Present when the text is strict JSON (even if the spec has errors). */
  protocolId?: string;
  issues: SpecIssue[];
  ok: boolean;
}

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

/** Validates spec text: strict JSON first (duplicate keys, lone surrogates, out-of-range numbers), then every spec rule. */
export function checkSpecText(crypto: Crypto, text: string, opts: ValidateOptions = {}): Omit<LoadedSpec, 'path' | 'dir'> {
  let id: string;
  try {
    id = protocolId(crypto, text);
  } catch (e) {
    if (!(e instanceof CryptoError)) throw e;
    const issue: SpecIssue = { pointer: '', code: 'SPEC_JSON_INVALID', message: `spec.json is not strict JSON: ${e.message}`, severity: 'error' };
    return { text, spec: {} as Spec, issues: [issue], ok: false };
  }
  const spec = JSON.parse(text) as Spec;
  const issues = validateSpec(spec, opts);
  return { text, spec, protocolId: id, issues, ok: !issues.some((i) => i.severity === 'error') };
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
