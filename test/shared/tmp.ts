// Temporary directories for tests, removed when the test file finishes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

export function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), `aigenora-${prefix}-`));
  made.push(d);
  return d;
}
