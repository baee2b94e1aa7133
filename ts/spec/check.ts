/** Checking spec text: strict JSON, every spec rule, protocol_id. No file access (browser-safe). */
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

/**
 * Validates spec text: strict JSON first (duplicate keys, lone surrogates, out-of-range numbers), then every spec rule.
 *
 * @param crypto - computes protocol_id, which is set whenever the text is strict JSON
 * @param text - the spec.json text
 * @param opts - as validateSpec's
 * @example
 * ```ts
 * const { ok, protocolId, issues } = checkSpecText(getCrypto(), text);
 * ```
 */
export function checkSpecText(crypto: Crypto, text: string, opts: ValidateOptions = {}): Omit<LoadedSpec, 'path' | 'dir'> {
  let id: string;
  try {
    id = protocolId(crypto, text);
  } catch (e) {
    if (!(e instanceof CryptoError)) throw e;
    const issue: SpecIssue = { pointer: '', code: 'SPEC_JSON_INVALID', message: `spec.json is not strict JSON: ${e.message}`, severity: 'error' };
    return { text, spec: {} as Spec, issues: [issue], ok: false };
  }
  return checkSpecTextOfId(text, id, opts);
}

/**
 * checkSpecText for a text whose protocol_id is already known: one of the agent page's built-ins, whose
 * exact text and id were recorded at build time (so the page needs no protocol_id module for it).
 *
 * @param text - strict JSON spec text (the recorded one)
 * @param id - its protocol_id
 */
export function checkSpecTextOfId(text: string, id: string, opts: ValidateOptions = {}): Omit<LoadedSpec, 'path' | 'dir'> {
  const spec = JSON.parse(text) as Spec;
  const issues = validateSpec(spec, opts);
  return { text, spec, protocolId: id, issues, ok: !issues.some((i) => i.severity === 'error') };
}
