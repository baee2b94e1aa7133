/**
 * LISTING_REF catalog manifests (agent-trade/0.2 §4): `{files: [{path, sha256}]}` with UTF-8 paths
 * relative to the catalog root, '/' separated, sorted by their bytes; catalog_hash =
 * "sha256:" + lowerhex(SHA-256(JCS(manifest))). The spec does not say how each file's `sha256` is
 * written; it is lowercase hex here (the key already names the algorithm), as README says.
 */
import type { Crypto } from '../crypto/backend.js';
import { toHex, utf8 } from '../crypto/encoding.js';

export interface Manifest {
  files: { path: string; sha256: string }[];
}

function compareBytes(a: string, b: string): number {
  const x = utf8(a);
  const y = utf8(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

/** A manifest from (path, content) pairs with '/'-separated paths, sorted by their bytes. */
export function buildManifest(crypto: Crypto, files: Iterable<{ path: string; content: Uint8Array }>): Manifest {
  const out = [...files].map((f) => ({ path: f.path, sha256: toHex(crypto.sha256(f.content)) }));
  out.sort((a, b) => compareBytes(a.path, b.path));
  for (let i = 1; i < out.length; i++) if (out[i]!.path === out[i - 1]!.path) throw new Error(`duplicate path ${out[i]!.path}`);
  return { files: out };
}

export function catalogHash(crypto: Crypto, manifest: Manifest): string {
  return `sha256:${toHex(crypto.jcsValueSha256(manifest))}`;
}
