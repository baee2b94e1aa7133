/**
 * `aigenora demo`: the small crypto demo (the README's main command is the network demo). Builds a
 * small agent-trade-like document,
 * canonicalizes it (RFC 8785), hashes and signs it with each backend, verifies every signature with
 * both backends, and shows that a one-character change is caught.
 */
import { getCrypto, toBase64Url, type Crypto } from '../crypto/index.js';
import { bodyHash, signingInput as tradeSigningInput } from '../trade/envelope.js';
import type { Command } from './args.js';

const SAMPLE = {
  protocol: 'agent-trade/0.2',
  object_type: 'DEAL',
  body: {
    trade_id: '01936f0e-7c3a-7d4e-8f10-2b3c4d5e6f70',
    listing: { title: 'Dataset: bird songs of Lisbon', price: { amount: '12.50', currency: 'EUR' } },
    seller: 'agent:alice',
    buyer: 'agent:bob',
    notes: 'Ünïcödé and emoji 🐦 survive canonicalization',
  },
};

// A fixed, public demo seed: never use it for anything real.
const DEMO_SEED = Uint8Array.from({ length: 32 }, (_, i) => i + 1);

function signingInput(c: Crypto, doc: typeof SAMPLE): { canonical: string; bodyHash: string; input: Uint8Array } {
  const hash = bodyHash(c, doc.body);
  return { canonical: new TextDecoder().decode(c.jcsValue(doc.body)), bodyHash: hash, input: tradeSigningInput(doc.protocol, doc.object_type, hash) };
}

export const demo: Command = {
  name: 'demo',
  usage: 'aigenora demo [--json]',
  help: 'Runs the sample end to end on the wasm and js backends and checks that they agree byte for byte.',
  flags: { json: 'boolean' },
  run(args, out) {
    const backends = [getCrypto('wasm'), getCrypto('js')];
    const results = backends.map((c) => {
      const { canonical, bodyHash, input } = signingInput(c, SAMPLE);
      const publicKey = c.ed25519PublicKey(DEMO_SEED);
      const signature = c.ed25519Sign(DEMO_SEED, input);
      return {
        backend: c.backend,
        canonical,
        bodyHash,
        publicKey: toBase64Url(publicKey),
        signature: toBase64Url(signature),
        raw: { publicKey, signature, input },
      };
    });
    const checks = results.flatMap((r) =>
      backends.map((v) => ({ signedBy: r.backend, verifiedBy: v.backend, valid: v.ed25519Verify(r.raw.publicKey, r.raw.input, r.raw.signature) })),
    );
    const tampered = { ...SAMPLE, body: { ...SAMPLE.body, buyer: 'agent:bOb' } };
    const tamperedValid = backends.map((v) => ({
      backend: v.backend,
      valid: v.ed25519Verify(results[0]!.raw.publicKey, signingInput(v, tampered).input, results[0]!.raw.signature),
    }));
    const agree = results.every((r) => r.canonical === results[0]!.canonical && r.signature === results[0]!.signature);
    const ok = agree && checks.every((c) => c.valid) && tamperedValid.every((t) => !t.valid);
    if (args.flags['json']) {
      out.json({ ok, agree, results: results.map(({ raw: _raw, ...r }) => r), checks, tampered: tamperedValid });
    } else {
      out.line(`canonical body (RFC 8785): ${results[0]!.canonical}`);
      for (const r of results) {
        out.line(`[${r.backend.padEnd(4)}] body_hash ${r.bodyHash}`);
        out.line(`[${r.backend.padEnd(4)}] Ed25519 signature ${r.signature} by ${r.publicKey}`);
      }
      for (const c of checks) out.line(`signed by ${c.signedBy.padEnd(4)} verified by ${c.verifiedBy.padEnd(4)}: ${c.valid ? 'valid' : 'INVALID'}`);
      for (const t of tamperedValid) out.line(`buyer changed to "agent:bOb", verified by ${t.backend.padEnd(4)}: ${t.valid ? 'VALID (wrong!)' : 'rejected'}`);
      out.line(agree ? 'backends agree byte for byte' : 'BACKENDS DISAGREE');
      out.line(ok ? 'demo: ok' : 'demo: FAILED');
    }
    return ok ? 0 : 1;
  },
};
