// The data directory as a careless user or a hostile file system leaves it: empty or foreign key
// files, open permissions, links, a corrupt or tampered index, hooks that point elsewhere, and input
// files that are huge, endless or not files at all.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { createFileAtomic, FileError, readBytes, readText, writeFileAtomic } from '../../ts/files/index.js';
import { HooksError, loadHooks } from '../../ts/hooks/load.js';
import { prepareDataDir } from '../../ts/library/data-dir.js';
import { ensureIdentity, keyPath, loadIdentity } from '../../ts/library/identity.js';
import { readIndex, resolveProtocol, seedBuiltins } from '../../ts/library/library.js';
import { builtinDir, findBuiltin } from '../../ts/protocols/index.js';
import { loadSpec, SpecLoadError } from '../../ts/spec/index.js';
import { tempDir } from '../shared/tmp.js';
import { cli as runCli } from '../shared/cli.js';

/** The bytes read through fs.readSync (how readBytes reads), counted: what a read took from a file. */
const reads = vi.hoisted(() => ({ bytes: 0 }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const readSync = ((...args: unknown[]) => {
    const n = (fs.readSync as (...a: unknown[]) => number)(...args);
    reads.bytes += n;
    return n;
  }) as typeof fs.readSync;
  return { ...fs, readSync, default: { ...fs, readSync } };
});

const c = getCrypto();
const cli = async (...args: string[]) => {
  const r = await runCli(args);
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const codeOf = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
};

describe('files', () => {
  const dir = tempDir('files');

  it('enforces the size limit while reading, so /dev/zero ends at the limit', async () => {
    reads.bytes = 0;
    expect(codeOf(() => readBytes('/dev/zero', { maxBytes: 1 << 20, allowNonRegular: true }))).toBe('FILE_TOO_LARGE');
    // Of the endless device it took one byte past the limit, which is all it needs to know, and no more.
    expect(reads.bytes).toBeGreaterThan(1 << 20);
    expect(reads.bytes).toBeLessThanOrEqual((1 << 20) + 1);
    expect(codeOf(() => readBytes('/dev/zero', { maxBytes: 1 << 20 }))).toBe('FILE_NOT_REGULAR');
    writeFileSync(join(dir, 'five'), '12345');
    expect(readBytes(join(dir, 'five'), { maxBytes: 5 })).toEqual(new Uint8Array([49, 50, 51, 52, 53]));
    expect(codeOf(() => readBytes(join(dir, 'five'), { maxBytes: 4 }))).toBe('FILE_TOO_LARGE');
  });

  it('refuses a FIFO without blocking, directories, missing paths, and invalid UTF-8', async () => {
    const fifo = join(dir, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    expect(codeOf(() => readBytes(fifo, { maxBytes: 100 }))).toBe('FILE_NOT_REGULAR');
    expect(codeOf(() => readBytes(dir, { maxBytes: 100 }))).toBe('FILE_NOT_REGULAR');
    expect(codeOf(() => readBytes(join(dir, 'nope'), { maxBytes: 100 }))).toBe('FILE_NOT_FOUND');
    writeFileSync(join(dir, 'latin1'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    expect(codeOf(() => readText(join(dir, 'latin1'), { maxBytes: 100 }))).toBe('FILE_NOT_UTF8');
    writeFileSync(join(dir, 'bom'), Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]));
    expect(readText(join(dir, 'bom'), { maxBytes: 100 })).toBe('\ufeff{}');
  });

  it('writes whole files or nothing, and never leaves a temporary file', async () => {
    const ro = join(dir, 'readonly');
    mkdirSync(ro);
    chmodSync(ro, 0o500);
    try {
      // Root ignores directory permissions; the refusal is only observable as another user.
      if (process.getuid?.() !== 0) {
        expect(codeOf(() => createFileAtomic(join(ro, 'key.json'), 'x'))).toBe('FILE_WRITE_FAILED');
        expect(readdirSync(ro)).toEqual([]);
      }
    } finally {
      chmodSync(ro, 0o700);
    }
    createFileAtomic(join(dir, 'secret'), 'one', 0o600);
    expect(statSync(join(dir, 'secret')).mode & 0o777).toBe(0o600);
    expect(codeOf(() => createFileAtomic(join(dir, 'secret'), 'two'))).toBe('FILE_EXISTS');
    expect(readFileSync(join(dir, 'secret'), 'utf8')).toBe('one');
    writeFileAtomic(join(dir, 'secret'), 'three', 0o600);
    expect(readFileSync(join(dir, 'secret'), 'utf8')).toBe('three');
    expect(codeOf(() => writeFileAtomic(dir, 'x'))).toBe('FILE_NOT_REGULAR');
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('the identity', () => {
  it('replaces an empty key.json (a full disk mid-write), refuses a foreign one, and never chmods', async () => {
    const data = tempDir('identity');
    prepareDataDir(data);
    writeFileSync(keyPath(data), '');
    const repaired = ensureIdentity(c, data);
    expect(repaired).toMatchObject({ created: true, repaired: true });
    expect(loadIdentity(c, data).publicKey).toBe(repaired.publicKey);
    expect(statSync(keyPath(data)).mode & 0o777).toBe(0o600);

    writeFileSync(keyPath(data), '{"not": "a key"}', { mode: 0o600 });
    const e = (() => {
      try {
        ensureIdentity(c, data);
      } catch (err) {
        return err as Error & { code: string };
      }
      throw new Error('accepted a foreign key.json');
    })();
    expect(e.code).toBe('IDENTITY_INVALID');
    expect(e.message).toMatch(/mv .*key\.json .*key\.json\.bak.* aigenora init/);
    expect(readFileSync(keyPath(data), 'utf8')).toBe('{"not": "a key"}');
  });

  it('refuses a key readable by others, through a symbolic link too, leaving every mode as it was', async () => {
    const data = tempDir('identity-perm');
    prepareDataDir(data);
    ensureIdentity(c, data);
    chmodSync(keyPath(data), 0o644);
    expect(codeOf(() => loadIdentity(c, data))).toBe('FILE_PERMISSIONS');
    expect(statSync(keyPath(data)).mode & 0o777).toBe(0o644);

    const other = tempDir('identity-link');
    prepareDataDir(other);
    symlinkSync(keyPath(data), keyPath(other));
    expect(codeOf(() => loadIdentity(c, other))).toBe('FILE_PERMISSIONS');
    expect(statSync(keyPath(data)).mode & 0o777).toBe(0o644);
    expect(lstatSync(keyPath(other)).isSymbolicLink()).toBe(true);
  });
});

describe('the data directory and library', () => {
  it('narrows an existing data dir to 0700 and refuses files and dangling links', async () => {
    const base = tempDir('datadir');
    const d = join(base, 'open');
    mkdirSync(d, { mode: 0o755 });
    chmodSync(d, 0o755);
    expect(prepareDataDir(d)).toEqual({ created: false, narrowed: true });
    expect(statSync(d).mode & 0o777).toBe(0o700);
    writeFileSync(join(base, 'file'), 'x');
    expect(codeOf(() => prepareDataDir(join(base, 'file')))).toBe('DATA_DIR_INVALID');
    symlinkSync(join(base, 'missing'), join(base, 'dangling'));
    expect(codeOf(() => prepareDataDir(join(base, 'dangling')))).toBe('DATA_DIR_INVALID');
  });

  it('a corrupt index.json is refused with the fix, and init rebuilds it from the protocol directories', async () => {
    const data = tempDir('index');
    expect((await cli('init', '--data-dir', data)).code).toBe(0);
    const index = join(data, 'protocols', 'index.json');
    const good = readIndex(data);
    writeFileSync(index, '{"version": 2, "protocols": [tr');
    const list = await cli('protocol', 'list', '--data-dir', data);
    expect(list.code).toBe(1);
    expect(list.err).toMatch(/^aigenora protocol list: LIBRARY_INDEX_INVALID: .*run: aigenora init/);
    expect(list.err.split('\n').filter(Boolean)).toHaveLength(1);
    const init = await cli('init', '--data-dir', data, '--json');
    expect(init.code, init.err).toBe(0);
    expect(JSON.parse(init.out)).toMatchObject({ index_rebuilt: true, identity_created: false });
    expect(
      readIndex(data)
        .protocols.map((p) => p.protocol_id)
        .sort(),
    ).toEqual(good.protocols.map((p) => p.protocol_id).sort());
  });

  it('an index entry pointing outside the library is refused, not followed', async () => {
    const data = tempDir('index-escape');
    seedBuiltins(c, (prepareDataDir(data), data));
    const p = join(data, 'protocols', 'index.json');
    const doc = JSON.parse(readFileSync(p, 'utf8'));
    doc.protocols[0].path = '../../x';
    writeFileSync(p, JSON.stringify(doc));
    expect(codeOf(() => resolveProtocol(data, doc.protocols[0].alias))).toBe('LIBRARY_INDEX_INVALID');
    expect(seedBuiltins(c, data).rebuilt).toBe(true);
    expect(readIndex(data).protocols.every((e) => !e.path.includes('..'))).toBe(true);
  });

  it('hooks that resolve outside their protocol directory are refused unless allowed', async () => {
    const base = tempDir('hooks-outside');
    const dir = join(base, 'proto');
    mkdirSync(dir);
    const rps = builtinDir(findBuiltin('rps-v1')!);
    writeFileSync(join(dir, 'spec.json'), readFileSync(join(rps, 'spec.json')));
    writeFileSync(join(base, 'evil.mjs'), 'export default { mode: "simultaneous_round", create() { return {}; } };\n');
    symlinkSync(join(base, 'evil.mjs'), join(dir, 'hooks.mjs'));
    const spec = loadSpec(c, dir).spec;
    const err = await loadHooks(c, dir, spec).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HooksError);
    expect((err as HooksError).code).toBe('HOOKS_OUTSIDE');
    await expect(loadHooks(c, dir, spec, { allowOutside: true })).resolves.toMatchObject({ mode: 'simultaneous_round' });
  });

  it('a spec that is endless, a FIFO or too large is refused while reading', async () => {
    const base = tempDir('spec-files');
    const code = (p: string) => {
      try {
        loadSpec(c, p);
      } catch (e) {
        return e instanceof SpecLoadError ? e.code : String(e);
      }
      return 'loaded';
    };
    expect(code('/dev/zero')).toBe('SPEC_UNREADABLE');
    const fifo = join(base, 'fifo.json');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    expect(code(fifo)).toBe('SPEC_UNREADABLE');
    writeFileSync(join(base, 'big.json'), Buffer.alloc((4 << 20) + 1, 0x20));
    expect(code(join(base, 'big.json'))).toBe('SPEC_TOO_LARGE');
    expect(existsSync(join(base, 'big.json'))).toBe(true);
  });
});

describe('FileError', () => {
  it('carries its code in the message, for the one-line CLI boundary', async () => {
    const e = new FileError('FILE_NOT_FOUND', '/x', '/x does not exist');
    expect(e.message).toBe('FILE_NOT_FOUND: /x does not exist');
    expect(e.code).toBe('FILE_NOT_FOUND');
  });
});
