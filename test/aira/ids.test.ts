// Content ids (M2) against vectors computed by an independent tool (Python json + hashlib, see the
// file's `source` and `generator`), on both crypto backends.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fromUtf8 } from '../../ts/crypto/encoding.js';
import { CryptoError } from '../../ts/crypto/errors.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { ContentIdError, contentId, verifyContentId } from '../../ts/aira/ids.js';
import { HashId } from '../../ts/aira/schema.js';

interface IdCase {
  name: string;
  prefix: string;
  value: Record<string, unknown>;
  idMember?: string;
  jcs: string;
  id: string;
}
const doc = JSON.parse(readFileSync(new URL('../../test-vectors/aira/ids.json', import.meta.url), 'utf8')) as { source: string; cases: IdCase[] };

function code(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof ContentIdError || e instanceof CryptoError) return e.code;
    throw e;
  }
  throw new Error('expected a typed error, nothing was thrown');
}

describe('test-vectors/aira/ids.json', () => {
  it('says where its cases come from and has the cases the brief asks for', () => {
    expect(doc.source).toMatch(/independent/);
    const names = doc.cases.map((c) => c.name);
    for (const n of ['non-ascii-strings', 'nested-objects', 'arrays-and-literals', 'id-member-removed']) expect(names).toContain(n);
  });
});

for (const backend of ['wasm', 'js'] as const) {
  describe(`contentId on the ${backend} backend`, () => {
    const crypto = getCrypto(backend);

    for (const c of doc.cases) {
      it(c.name, () => {
        const id = contentId(c.prefix, c.value, crypto, c.idMember);
        expect(id).toBe(c.id);
        expect(HashId.safeParse(id).success).toBe(true);
        const hashed = Object.fromEntries(Object.entries(c.value).filter(([k]) => k !== c.idMember));
        expect(fromUtf8(crypto.jcsValue(hashed))).toBe(c.jcs);
        expect(verifyContentId(id, c.value, crypto, c.idMember)).toBe(true);
      });
    }

    it("leaves the id member in the caller's object", () => {
      const c = doc.cases.find((x) => x.name === 'id-member-removed')!;
      const value = structuredClone(c.value);
      contentId(c.prefix, value, crypto, c.idMember);
      expect(value).toEqual(c.value);
    });

    it('hashes the id member when it is not named, and any change of content changes the id', () => {
      const c = doc.cases.find((x) => x.name === 'id-member-removed')!;
      expect(contentId(c.prefix, c.value, crypto)).not.toBe(c.id);
      const tampered = { ...c.value, baseRevision: `rev:sha256:${'2'.repeat(64)}` };
      expect(contentId(c.prefix, tampered, crypto, c.idMember)).not.toBe(c.id);
      expect(verifyContentId(c.id, tampered, crypto, c.idMember)).toBe(false);
      expect(contentId('other', c.value, crypto, c.idMember).slice(5)).toBe(c.id.slice(4));
    });

    it('verifyContentId refuses ids that are not content ids', () => {
      for (const bad of ['', 'plan:sha256:', `plan:sha256:${'A'.repeat(64)}`, `Plan:sha256:${'0'.repeat(64)}`, `plan:sha512:${'0'.repeat(64)}`]) {
        expect(verifyContentId(bad, {}, crypto)).toBe(false);
      }
    });

    it('refuses bad prefixes and non-objects with typed errors', () => {
      for (const p of ['', 'Task', 'task:x', 'ta sk', 'täsk', 'a1']) expect(code(() => contentId(p, {}, crypto))).toBe('ID_PREFIX_INVALID');
      for (const v of [null, [], 'x', 1] as unknown[]) expect(code(() => contentId('task', v as Record<string, unknown>, crypto))).toBe('ID_VALUE_INVALID');
    });

    it("refuses values JCS cannot encode with the crypto layer's typed error", () => {
      expect(code(() => contentId('task', { x: Number.NaN }, crypto))).toMatch(/^[A-Z_]+$/);
      expect(code(() => contentId('task', { x: 1n }, crypto))).toMatch(/^[A-Z_]+$/);
      let deep: Record<string, unknown> = {};
      for (let i = 0; i < 500; i++) deep = { d: deep };
      expect(code(() => contentId('task', deep, crypto))).toMatch(/^[A-Z_]+$/);
    });
  });
}
