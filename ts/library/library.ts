/**
 * The local protocol library under `<data_dir>/protocols/`: each spec stored as
 * `<first 8 hex>/<remaining 56 hex>/spec.json` of its protocol_id (layout "sha256-8-56"), with an
 * index.json of aliases and profiles in the reference's format (NOTES A3).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Crypto } from '../crypto/backend.js';
import { findHooksFile } from '../hooks/load.js';
import { builtinDir, BUILTINS, type Profile } from '../protocols/index.js';
import { loadSpec } from '../spec/load.js';
import { flowMode } from '../spec/types.js';

export interface IndexEntry {
  alias: string;
  name: string;
  description: string;
  type: string;
  family: string;
  tags: string[];
  capabilities: string[];
  status: 'active';
  protocol_id: string;
  path: string;
  parent_protocol_id: string | null;
  created_reason: string;
  default_profile: string;
  profiles: Record<string, Profile>;
  entrypoints: { host: string; guest: string; hooks: string };
}

export interface LibraryIndex {
  version: 2;
  layout: 'sha256-8-56';
  protocols: IndexEntry[];
}

export const protocolsDir = (dataDir: string) => join(dataDir, 'protocols');
export const storagePath = (protocolId: string) => `${protocolId.slice(0, 8)}/${protocolId.slice(8)}`;

export function readIndex(dataDir: string): LibraryIndex {
  const p = join(protocolsDir(dataDir), 'index.json');
  if (!existsSync(p)) return { version: 2, layout: 'sha256-8-56', protocols: [] };
  return JSON.parse(readFileSync(p, 'utf8')) as LibraryIndex;
}

function writeIndex(dataDir: string, index: LibraryIndex): void {
  writeFileSync(join(protocolsDir(dataDir), 'index.json'), `${JSON.stringify(index, null, 2)}\n`);
}

/**
 * Copies the built-in protocols into the library. The spec is copied byte for byte; hooks.mjs is a
 * one-line module that re-exports the packaged hooks, which stay the package's own (trusted) code.
 * `protocol create --from <alias>` makes an editable copy instead.
 */
const WRAPPER_MARK = '// Built-in hooks of';

export function seedBuiltins(crypto: Crypto, dataDir: string): IndexEntry[] {
  const index = readIndex(dataDir);
  const entries: IndexEntry[] = [];
  for (const b of BUILTINS) {
    const src = builtinDir(b);
    const loaded = loadSpec(crypto, src);
    if (!loaded.ok || !loaded.protocolId) throw new Error(`built-in ${b.alias} is invalid: ${loaded.issues.map((i) => i.message).join('; ')}`);
    const rel = storagePath(loaded.protocolId);
    const dest = join(protocolsDir(dataDir), rel);
    mkdirSync(dest, { recursive: true });
    copyFileSync(join(src, 'spec.json'), join(dest, 'spec.json'));
    const hooks = findHooksFile(src);
    if (!hooks) throw new Error(`built-in ${b.alias} has no hooks module in ${src}`);
    // A wrapper from an earlier version of the package, of ours, would shadow hooks.mjs (.mts loads first).
    const stale = join(dest, 'hooks.mts');
    if (existsSync(stale) && readFileSync(stale, 'utf8').startsWith(WRAPPER_MARK)) rmSync(stale);
    writeFileSync(
      join(dest, 'hooks.mjs'),
      `${WRAPPER_MARK} ${b.alias}, shipped with aigenora. For an editable copy: aigenora protocol create <dir> --from ${b.alias}\nexport { default } from ${JSON.stringify(pathToFileURL(hooks).href)};\n`,
    );
    const s = loaded.spec;
    entries.push({
      alias: b.alias,
      name: s.name,
      description: s.description ?? '',
      type: s.type ?? 'game',
      family: s.family ?? b.folder,
      tags: b.tags,
      capabilities: b.capabilities,
      status: 'active',
      protocol_id: loaded.protocolId,
      path: rel,
      parent_protocol_id: null,
      created_reason: `built-in (${flowMode(s)})`,
      default_profile: b.default_profile,
      profiles: b.profiles,
      entrypoints: { host: 'aigenora host --protocol-dir', guest: 'aigenora join', hooks: 'hooks.mjs' },
    });
  }
  const others = index.protocols.filter((p) => !entries.some((e) => e.alias === p.alias || e.protocol_id === p.protocol_id));
  writeIndex(dataDir, { version: 2, layout: 'sha256-8-56', protocols: [...entries, ...others] });
  return entries;
}

/** The library entry for an alias, a full protocol_id, or an unambiguous prefix of at least 8 hex. */
export function resolveProtocol(dataDir: string, ref: string): { entry: IndexEntry; dir: string } | { error: string } {
  const index = readIndex(dataDir);
  const byAlias = index.protocols.find((p) => p.alias === ref);
  const matches = byAlias ? [byAlias] : /^[0-9a-f]{8,64}$/.test(ref) ? index.protocols.filter((p) => p.protocol_id.startsWith(ref)) : [];
  if (matches.length === 1) return { entry: matches[0]!, dir: join(protocolsDir(dataDir), matches[0]!.path) };
  if (matches.length > 1) return { error: `${ref} matches ${matches.length} protocols (${matches.map((m) => m.alias).join(', ')}); give more hex digits` };
  return { error: `no protocol ${JSON.stringify(ref)} in ${protocolsDir(dataDir)}${index.protocols.length ? '' : ' (run: aigenora init)'}` };
}
