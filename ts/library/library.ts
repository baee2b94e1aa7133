/**
 * The local protocol library under `<data_dir>/protocols/`: each spec stored as
 * `<first 8 hex>/<remaining 56 hex>/spec.json` of its protocol_id (layout "sha256-8-56"), with an
 * index.json of aliases and profiles in the reference's format (NOTES A3).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Crypto } from '../crypto/backend.js';
import { FileError, readText, writeFileAtomic } from '../files/index.js';
import { findHooksFile } from '../hooks/load.js';
import { builtinDir, BUILTINS, type Profile } from '../protocols/index.js';
import { loadSpec } from '../spec/load.js';
import { flowMode, type Spec } from '../spec/types.js';

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

export class LibraryError extends Error {
  override readonly name = 'LibraryError';
  constructor(
    readonly code: 'LIBRARY_INDEX_INVALID',
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

const STORAGE = /^[0-9a-f]{8}\/[0-9a-f]{56}$/;

/**
 * The library's index. Every entry's path must be the storage path of its own protocol_id, so no entry
 * can point outside the library (`../../x`); anything else makes the whole index invalid, and `init`
 * rebuilds it from the protocol directories.
 */
export function readIndex(dataDir: string): LibraryIndex {
  const p = join(protocolsDir(dataDir), 'index.json');
  if (!statSync(p, { throwIfNoEntry: false })) return { version: 2, layout: 'sha256-8-56', protocols: [] };
  const fix = 'run: aigenora init (it rebuilds the index from the protocol directories)';
  let doc: unknown;
  try {
    doc = JSON.parse(readText(p, { maxBytes: 16 << 20, what: 'library index' }));
  } catch (e) {
    if (e instanceof SyntaxError || e instanceof FileError) throw new LibraryError('LIBRARY_INDEX_INVALID', `${p} cannot be read (${e.message}); ${fix}`);
    throw e;
  }
  const protocols = (doc as { protocols?: unknown } | null)?.protocols;
  if (!Array.isArray(protocols)) throw new LibraryError('LIBRARY_INDEX_INVALID', `${p} has no protocols list; ${fix}`);
  for (const [i, e] of protocols.entries()) {
    const entry = e as Partial<IndexEntry> | null;
    if (typeof entry?.alias !== 'string' || typeof entry.protocol_id !== 'string' || !/^[0-9a-f]{64}$/.test(entry.protocol_id))
      throw new LibraryError('LIBRARY_INDEX_INVALID', `${p}: entry ${i} lacks an alias or a protocol_id; ${fix}`);
    if (entry.path !== storagePath(entry.protocol_id))
      throw new LibraryError(
        'LIBRARY_INDEX_INVALID',
        `${p}: entry ${entry.alias} has path ${JSON.stringify(entry.path)}, not its own storage path ${storagePath(entry.protocol_id)}; ${fix}`,
      );
  }
  return doc as LibraryIndex;
}

function writeIndex(dataDir: string, index: LibraryIndex): void {
  writeFileAtomic(join(protocolsDir(dataDir), 'index.json'), `${JSON.stringify(index, null, 2)}\n`);
}

/** An index entry for a spec stored at its protocol_id's path; `extra` holds what only its origin knows. */
function indexEntry(
  spec: Spec,
  protocolId: string,
  extra: Pick<IndexEntry, 'alias' | 'family' | 'tags' | 'capabilities' | 'created_reason' | 'default_profile' | 'profiles'>,
): IndexEntry {
  // Keys in the reference's order (NOTES A3), as index.json is read by people and by the reference.
  return {
    alias: extra.alias,
    name: spec.name,
    description: spec.description ?? '',
    type: spec.type ?? 'game',
    family: extra.family,
    tags: extra.tags,
    capabilities: extra.capabilities,
    status: 'active',
    protocol_id: protocolId,
    path: storagePath(protocolId),
    parent_protocol_id: null,
    created_reason: extra.created_reason,
    default_profile: extra.default_profile,
    profiles: extra.profiles,
    entrypoints: { host: 'aigenora host --protocol-dir', guest: 'aigenora join', hooks: 'hooks.mjs' },
  };
}

/** Entries for the protocol directories on disk whose spec hashes to their directory's name. */
function recoverEntries(crypto: Crypto, dataDir: string): IndexEntry[] {
  const root = protocolsDir(dataDir);
  const out: IndexEntry[] = [];
  for (const head of readdirSync(root, { withFileTypes: true })) {
    if (!head.isDirectory() || !/^[0-9a-f]{8}$/.test(head.name)) continue;
    for (const tail of readdirSync(join(root, head.name), { withFileTypes: true })) {
      const rel = `${head.name}/${tail.name}`;
      if (!tail.isDirectory() || !STORAGE.test(rel)) continue;
      let loaded;
      try {
        loaded = loadSpec(crypto, join(root, rel));
      } catch {
        continue;
      }
      if (!loaded.ok || loaded.protocolId !== `${head.name}${tail.name}`) continue;
      out.push(
        indexEntry(loaded.spec, loaded.protocolId, {
          alias: loaded.protocolId.slice(0, 8),
          family: loaded.spec.family ?? '',
          tags: [],
          capabilities: [],
          created_reason: 'recovered by aigenora init from the protocol directories',
          default_profile: 'standard',
          profiles: {},
        }),
      );
    }
  }
  return out;
}

/** How the hooks wrappers seedBuiltins writes begin, so that it knows one of its own when it meets one. */
const WRAPPER_MARK = '// Built-in hooks of';

/**
 * Copies the built-in protocols into the library. The spec is copied byte for byte; hooks.mjs is a
 * one-line module that re-exports the packaged hooks, which stay the package's own (trusted) code.
 * `protocol create --from <alias>` makes an editable copy instead. An index.json that cannot be read is
 * rebuilt (`rebuilt`), keeping every protocol whose directory checks out.
 */
export function seedBuiltins(crypto: Crypto, dataDir: string): { entries: IndexEntry[]; rebuilt: boolean } {
  let index: LibraryIndex;
  let rebuilt = false;
  try {
    index = readIndex(dataDir);
  } catch (e) {
    if (!(e instanceof LibraryError)) throw e;
    index = { version: 2, layout: 'sha256-8-56', protocols: recoverEntries(crypto, dataDir) };
    rebuilt = true;
  }
  const entries: IndexEntry[] = [];
  for (const b of BUILTINS) {
    const src = builtinDir(b);
    const loaded = loadSpec(crypto, src);
    if (!loaded.ok || !loaded.protocolId) throw new Error(`built-in ${b.alias} is invalid: ${loaded.issues.map((i) => i.message).join('; ')}`);
    const rel = storagePath(loaded.protocolId);
    const dest = join(protocolsDir(dataDir), rel);
    mkdirSync(dest, { recursive: true });
    writeFileAtomic(join(dest, 'spec.json'), readFileSync(join(src, 'spec.json')));
    const hooks = findHooksFile(src);
    if (!hooks) throw new Error(`built-in ${b.alias} has no hooks module in ${src}`);
    // A wrapper from an earlier version of the package, of ours, would shadow hooks.mjs (.mts loads first).
    const stale = join(dest, 'hooks.mts');
    if (existsSync(stale) && readFileSync(stale, 'utf8').startsWith(WRAPPER_MARK)) rmSync(stale);
    writeFileAtomic(
      join(dest, 'hooks.mjs'),
      `${WRAPPER_MARK} ${b.alias}, shipped with aigenora. For an editable copy: aigenora protocol create <dir> --from ${b.alias}\nexport { default } from ${JSON.stringify(pathToFileURL(hooks).href)};\n`,
    );
    const s = loaded.spec;
    entries.push(
      indexEntry(s, loaded.protocolId, {
        alias: b.alias,
        family: s.family ?? b.folder,
        tags: b.tags,
        capabilities: b.capabilities,
        created_reason: `built-in (${flowMode(s)})`,
        default_profile: b.default_profile,
        profiles: b.profiles,
      }),
    );
  }
  const others = index.protocols.filter((p) => !entries.some((e) => e.alias === p.alias || e.protocol_id === p.protocol_id));
  writeIndex(dataDir, { version: 2, layout: 'sha256-8-56', protocols: [...entries, ...others] });
  return { entries, rebuilt };
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
