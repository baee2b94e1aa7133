/**
 * The reference's mental-poker vector files, read in place from ../shared/conformance. A missing file fails
 * the test file that reads it, unless AIGENORA_SKIP_CORPORA=1 asks to skip (test/shared/require.ts): then
 * `text` is null, `missing` says why, and the tests that need it are skipped loudly, never passed.
 */
import { readFileSync } from 'node:fs';
import { needShared, sharedPath } from '../shared/require.js';

export function corpus(name: string): { text: string | null; missing: string } {
  const rel = `conformance/aigenora-reference/${name}`;
  if (needShared(rel, `the reference's mental-poker vectors ${name}`)) return { text: readFileSync(sharedPath(rel), 'utf8'), missing: '' };
  return { text: null, missing: `SKIPPED: ../shared/${rel} is absent (AIGENORA_SKIP_CORPORA=1)` };
}
