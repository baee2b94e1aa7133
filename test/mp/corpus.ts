/** The reference's mental-poker vector files, read in place from ../shared/conformance; absent ones are reported, never passed. */
import { existsSync, readFileSync } from 'node:fs';

export function corpus(name: string): { text: string | null; missing: string } {
  const url = new URL(`../../../shared/conformance/aigenora-reference/${name}`, import.meta.url);
  if (existsSync(url)) return { text: readFileSync(url, 'utf8'), missing: '' };
  const missing = `${url.pathname} is absent: its vector cases are SKIPPED, not passed`;
  console.warn(missing);
  return { text: null, missing };
}
