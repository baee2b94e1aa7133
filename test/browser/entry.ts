// Runs in headless Chromium: the shared vector checks against both backends, the WASM one loaded from
// the web build. Results go to window.__results for test/browser/vectors.test.ts to read.
import { createCrypto } from '../../ts/crypto/browser.js';
import { checks, type VectorFile } from '../shared/vector-checks.js';
import aead from '../../test-vectors/aead.json' with { type: 'json' };
import box from '../../test-vectors/box.json' with { type: 'json' };
import commit from '../../test-vectors/commit.json' with { type: 'json' };
import ed25519 from '../../test-vectors/ed25519.json' with { type: 'json' };
import jcs from '../../test-vectors/jcs.json' with { type: 'json' };
import pow from '../../test-vectors/pow.json' with { type: 'json' };
import sha256 from '../../test-vectors/sha256.json' with { type: 'json' };
import x25519 from '../../test-vectors/x25519.json' with { type: 'json' };

const files: Record<string, VectorFile> = {
  'aead.json': aead,
  'box.json': box,
  'commit.json': commit,
  'ed25519.json': ed25519,
  'jcs.json': jcs,
  'pow.json': pow,
  'sha256.json': sha256,
  'x25519.json': x25519,
};

interface Result {
  backend: string;
  file: string;
  cases: number;
  error?: string;
}

async function run(): Promise<Result[]> {
  const results: Result[] = [];
  for (const name of ['wasm', 'js'] as const) {
    const c = await createCrypto(name, '/aigenora_wasm_bg.wasm');
    for (const [file, check] of Object.entries(checks)) {
      const doc = files[file]!;
      try {
        check(c, doc.cases);
        results.push({ backend: c.backend, file, cases: doc.cases.length });
      } catch (e) {
        results.push({ backend: c.backend, file, cases: doc.cases.length, error: String(e) });
      }
    }
  }
  return results;
}

(window as unknown as { __results: Promise<Result[]> }).__results = run();
