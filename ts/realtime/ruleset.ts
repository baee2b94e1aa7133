/**
 * ruleset_hash (NOTES A17): json_hash({"version":1,"files":[{path, sha256}…]}) over the protocol bundle's
 * files sorted by POSIX path (code point order: `data-extra.txt` before `data/levels.json`), leaving out
 * what cannot change the rules: `ui/`, `__pycache__/`, any dot path and `.pyc` files. Pure: the caller
 * reads the files (ruleset-dir.ts reads a folder).
 */
import type { Crypto } from '../crypto/backend.js';
import { toHex, utf8 } from '../crypto/encoding.js';
import { compareCodePoints } from '../crypto/unicode.js';
import { RealtimeError } from './errors.js';
import { rtJsonHash } from './json.js';

export interface RulesetFile {
  /** Path inside the protocol folder, `/`-separated. */
  path: string;
  bytes: Uint8Array;
}

/** Whether a file at this path (inside the protocol folder) is part of the ruleset. */
export function inRuleset(path: string): boolean {
  const parts = path.split('/').filter((p) => p !== '');
  if (parts.length === 0 || parts[0] === 'ui' || parts.includes('__pycache__')) return false;
  return !parts.some((p) => p.startsWith('.')) && !parts.at(-1)!.endsWith('.pyc');
}

/** The object whose canonical JSON is hashed. */
export function rulesetObject(crypto: Crypto, files: readonly RulesetFile[]): { version: 1; files: { path: string; sha256: string }[] } {
  const kept = files.filter((f) => inRuleset(f.path)).sort((a, b) => compareCodePoints(a.path, b.path));
  if (kept.length === 0) throw new RealtimeError('RT_RULESET_EMPTY', 'real-time protocol bundle is empty');
  kept.forEach((f, i) => {
    if (i > 0 && kept[i - 1]!.path === f.path) throw new RealtimeError('RT_RULESET_DUPLICATE', `the bundle lists ${f.path} twice`);
  });
  return { version: 1, files: kept.map((f) => ({ path: f.path, sha256: toHex(crypto.sha256(f.bytes)) })) };
}

export function rulesetHash(crypto: Crypto, files: readonly RulesetFile[]): string {
  return rtJsonHash(crypto, rulesetObject(crypto, files));
}

/** The ruleset hash of a session with no protocol folder: its spec.json alone. */
export function rulesetHashOfSpec(crypto: Crypto, specText: string): string {
  return rulesetHash(crypto, [{ path: 'spec.json', bytes: utf8(specText) }]);
}
