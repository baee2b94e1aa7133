/** The manifest of a catalog directory on disk (Node only; the rest of manifest.ts runs anywhere). */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { buildManifest, type Manifest } from './manifest.js';

/** Every regular file under `dir` (symbolic links are not followed). */
export function manifestOfDirectory(crypto: Crypto, dir: string): Manifest {
  const files: { path: string; content: Uint8Array }[] = [];
  const walk = (d: string) => {
    for (const ent of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, ent.name);
      if (ent.isDirectory()) walk(p);
      else if (ent.isFile()) files.push({ path: relative(dir, p).split(sep).join('/'), content: readFileSync(p) });
    }
  };
  walk(dir);
  return buildManifest(crypto, files);
}
