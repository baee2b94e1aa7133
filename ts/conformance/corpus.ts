/**
 * What ../shared/conformance holds, file by file: the vector files with their format and number of
 * cases (from the corpus README, so a truncated or replaced file is caught), and the files that are
 * not vectors for the crypto backends, each with the reason. A file under a corpus folder that is in
 * neither list and in no known format is an error, never silently skipped.
 */

export interface KnownVectors {
  /** Path inside the corpus folder; a directory for an RFC 8785 test folder. */
  path: string;
  format: string;
  cases: number;
}

export const KNOWN_VECTORS: readonly KnownVectors[] = [
  { path: 'wycheproof/testvectors_v1/ed25519_test.json', format: 'wycheproof eddsa_verify', cases: 151 },
  { path: 'wycheproof/testvectors_v1/chacha20_poly1305_test.json', format: 'wycheproof aead_test CHACHA20-POLY1305', cases: 325 },
  { path: 'wycheproof/testvectors_v1/xchacha20_poly1305_test.json', format: 'wycheproof aead_test XCHACHA20-POLY1305', cases: 315 },
  { path: 'wycheproof/testvectors_v1/x25519_test.json', format: 'wycheproof xdh_comp', cases: 518 },
  { path: 'ed25519-speccheck/cases.json', format: 'ed25519-speccheck', cases: 12 },
  // The same 12 cases in upstream's text form: run, and counted once with cases.json.
  { path: 'ed25519-speccheck/cases.txt', format: 'ed25519-speccheck (text)', cases: 12 },
  { path: 'cctv-ed25519/ed25519vectors.json', format: 'cctv ed25519vectors', cases: 914 },
  { path: 'rfc8032/ed25519.json', format: 'rfc8032 ed25519', cases: 5 },
  { path: 'noble-ed25519/vectors.txt', format: 'ed25519 sign.input', cases: 1024 },
  { path: 'rfc8439/chacha20_poly1305_aead.json', format: 'rfc8439 aead', cases: 2 },
  { path: 'json-canonicalization/testdata', format: 'rfc8785 testdata', cases: 6 },
  { path: 'json-canonicalization/es6numbers/es6testfile_first10000.txt', format: 'es6 number serialisation', cases: 10_000 },
  // Seven lines quoted in upstream's README, all also among the first 10,000.
  { path: 'json-canonicalization/es6numbers/readme_sample_lines.txt', format: 'es6 number serialisation', cases: 7 },
  { path: 'aigenora-reference/aigenora-mp-deck-vectors.json', format: 'aigenora-mp-deck-vectors/1', cases: 20 },
  { path: 'aigenora-reference/aigenora-mp-ot-vectors.json', format: 'aigenora-mp-ot-vectors/1', cases: 15 },
  { path: 'aigenora-reference/aigenora-mp-receipt-vectors.json', format: 'aigenora-mp-receipt-vectors/1', cases: 11 },
  { path: 'aigenora-reference/aigenora-mp-audit-vectors.json', format: 'aigenora-mp-audit-vectors/1', cases: 29 },
  { path: 'aigenora-reference/aigenora-rt-hash-vectors.json', format: 'aigenora-rt-hash-vectors/1', cases: 9 },
  { path: 'aigenora-reference/aigenora-group-vectors.json', format: 'aigenora-group-vectors/1', cases: 8 },
  { path: 'aigenora-reference/aigenora-box-vectors.json', format: 'aigenora-box-vectors/1', cases: 14 },
  { path: 'aigenora-reference/aigenora-pow-vectors.json', format: 'aigenora-pow-vectors/1', cases: 6 },
  { path: 'rin-reference/capability-digest.json', format: 'rin-capability-digest-vectors/1', cases: 40 },
  { path: 'rin-reference/capability-validation.json', format: 'rin-capability-validation-vectors/1', cases: 40 },
  { path: 'rin-reference/action-request-digest.json', format: 'rin-action-request-digest-vectors/1', cases: 40 },
  { path: 'rin-reference/action-request-validation.json', format: 'rin-action-request-validation-vectors/1', cases: 39 },
  { path: 'rin-reference/effect-digest.json', format: 'rin-effect-digest-vectors/1', cases: 40 },
  { path: 'rin-reference/schema-canonicalization.json', format: 'rin-schema-canonicalization-vectors/1', cases: 40 },
  { path: 'rin-reference/manifest-validation.json', format: 'rin-manifest-validation-vectors/1', cases: 40 },
  { path: 'rin-reference/durability-validation.json', format: 'rin-durability-validation-vectors/1', cases: 40 },
  { path: 'rin-reference/epoch-fencing.json', format: 'rin-epoch-fencing-vectors/1', cases: 36 },
  { path: 'rin-reference/action-run-transition.json', format: 'rin-action-run-transition-vectors/1', cases: 40 },
];

/** Files and folders (ending in /) of the corpus that are not test vectors for this command. */
export const NOT_VECTORS: readonly { path: string; why: string }[] = [
  { path: 'wycheproof/schemas/', why: 'JSON schemas of the Wycheproof files' },
  {
    path: 'ed25519-speccheck/expected_outcomes.json',
    why: "upstream's tables of other libraries' verdicts; the expectation here is the policy in the corpus README",
  },
  { path: 'rfc8439/rfc8439_excerpt_2.8.2_A.5.txt', why: 'the RFC text that chacha20_poly1305_aead.json transcribes' },
];

/** Documentation, recognised by name anywhere. */
export const DOCS = /(^|\/)(README|LICENSE|PROVENANCE|EXPECTED|NOTICE)(\.[a-z]+)?$|\.md$/i;

/** Whether `path` (with / separators) names `rel` inside some corpus folder: it ends with /rel. */
export function endsWithPath(path: string, rel: string): boolean {
  const p = path.replace(/\/+$/, '');
  const r = rel.replace(/\/+$/, '');
  return p === r || p.endsWith(`/${r}`);
}

export function knownVectors(path: string): KnownVectors | undefined {
  return KNOWN_VECTORS.find((k) => endsWithPath(path, k.path));
}

/** Why `path` is not a vector file, if the corpus says so. */
export function notVectors(path: string): string | undefined {
  const slashed = path.replace(/\/+$/, '');
  for (const n of NOT_VECTORS) {
    if (n.path.endsWith('/') ? slashed.includes(`/${n.path}`) || endsWithPath(slashed, n.path) : endsWithPath(slashed, n.path)) return n.why;
  }
  return undefined;
}
