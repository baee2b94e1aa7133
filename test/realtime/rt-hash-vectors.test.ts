// The reference's authoritative_realtime vectors on both backends, read in place from
// ../shared/conformance. A missing file fails, unless AIGENORA_SKIP_CORPORA=1 asks to skip it.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { needShared } from '../shared/require.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { checkRtHashVectors, rtHashSuite } from '../../ts/conformance/rt-hash.js';

const CORPUS = new URL('../../../shared/conformance/aigenora-reference/aigenora-rt-hash-vectors.json', import.meta.url);
const skip = !needShared('conformance/aigenora-reference/aigenora-rt-hash-vectors.json', "the reference's authoritative_realtime vectors");

function text(): string {
  if (!existsSync(CORPUS))
    throw new Error(`${CORPUS.pathname} is absent, so nothing can be checked; put the corpora there or set AIGENORA_SKIP_CORPORA=1 to skip`);
  return readFileSync(CORPUS, 'utf8');
}

describe.each(['wasm', 'js'])('%s backend', (name) => {
  const c = getCrypto(name);

  it.skipIf(skip)('passes every case of aigenora-rt-hash-vectors.json', () => {
    // The corpus README: 9 cases, one of each kind but two host_session quirks.
    expect(checkRtHashVectors(c, text())).toEqual({
      ruleset_hash: 1,
      match_config_hash: 1,
      host_session: 1,
      frame_hashes: 1,
      handshake: 1,
      host_session_quirk: 2,
      verify_frame: 1,
      canonical_json: 1,
    });
  });

  it.skipIf(skip)('fails the session case when the recorded result is altered', () => {
    const t = text();
    const altered = t.replace('"result":{"completed":true,"outcome":"draw","tick":9', '"result":{"completed":true,"outcome":"host","tick":9');
    expect(altered).not.toBe(t);
    const r = rtHashSuite(altered)
      .cases.find((x) => x.id === 'session')!
      .run(c);
    expect(r).toMatchObject({ ok: false });
    expect(r.outcome).toMatch(/^session result/);
    expect(rtHashSuite(t).cases.map((x) => x.run(c).ok)).toEqual(Array(9).fill(true));
  });
});
