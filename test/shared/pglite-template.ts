// vitest globalSetup: one empty PGlite database per run, dumped to a tarball that every new database of
// the run (in the workers and in the CLI processes they start) copies instead of running initdb again
// (ts/server/db.ts, AIGENORA_PGLITE_TEMPLATE). Cached across runs per PGlite version.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

export default async function setup(): Promise<void> {
  if (process.env['AIGENORA_PGLITE_TEMPLATE']) return;
  const pkg = JSON.parse(readFileSync(new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url), 'utf8')) as { version: string };
  const dir = join(tmpdir(), `aigenora-test-${process.getuid?.() ?? 0}`);
  const file = join(dir, `pglite-${pkg.version}-empty.tar`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const db = new PGlite();
    await db.waitReady;
    const dump = await db.dumpDataDir('none');
    await db.close();
    const part = `${file}.${process.pid}`;
    writeFileSync(part, new Uint8Array(await dump.arrayBuffer()));
    renameSync(part, file);
  }
  process.env['AIGENORA_PGLITE_TEMPLATE'] = file;
}
