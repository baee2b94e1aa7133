/**
 * Recognises the public conformance corpora by their content (not their names) and turns each into
 * cases with the expectation the project's policy sets for them (../shared/conformance/README.md).
 * Each case reports an observable `outcome` so that the two backends can also be compared with each
 * other, not only with the expectation, and has a `key` naming its inputs and expectation whatever
 * the file's format, so that a case two files share (speccheck's cases.json and cases.txt, RFC 8032's
 * vectors inside sign.input) is counted once.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AeadCipher, Crypto } from '../crypto/backend.js';
import { CryptoError } from '../crypto/errors.js';
import { fromHex, toHex, utf8 } from '../crypto/encoding.js';
import { BOX_FORMAT, boxSuite, POW_FORMAT, powSuite } from './box-pow.js';
import { DECK_FORMAT, deckSuite } from './mp-deck.js';
import { OT_FORMAT, otSuite } from './mp-ot.js';
import { RECEIPT_FORMAT, receiptSuite } from './mp-receipt.js';
import { AUDIT_FORMAT, auditSuite } from './mp-audit.js';
import { RT_HASH_FORMAT, rtHashSuite } from './rt-hash.js';
import { GROUP_FORMAT, groupSuite } from './group.js';
import { rinKind, rinSuite } from './rin.js';

export interface Case {
  id: string;
  /** The operation, its inputs and its expectation, in lowercase hex: equal keys are the same case. */
  key: string;
  /** Runs the case; `ok` is whether the outcome meets the expectation. */
  run(c: Crypto): { ok: boolean; outcome: string };
}

export interface Suite {
  /** What was recognised, e.g. "wycheproof eddsa_verify". */
  format: string;
  cases: Case[];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed vector files are checked field by field below
type Json = any;

function attempt(f: () => Uint8Array | boolean | void): string {
  try {
    const r = f();
    return r instanceof Uint8Array ? toHex(r) : String(r ?? 'ok');
  } catch (e) {
    if (e instanceof CryptoError) return `error:${e.code}`;
    throw e;
  }
}

function verifyCase(id: string, pk: string, msg: Uint8Array, sig: string, expected: boolean): Case {
  return {
    id,
    key: `ed25519-verify ${pk} ${toHex(msg)} ${sig} ${expected}`.toLowerCase(),
    run(c) {
      const v = c.ed25519Verify(fromHex(pk), msg, fromHex(sig));
      return { ok: v === expected, outcome: String(v) };
    },
  };
}

const aeadKey = (cipher: AeadCipher, key: string, iv: string, aad: string, msg: string, sealed: string, valid: boolean) =>
  `${cipher} ${key} ${iv} ${aad} ${msg} ${sealed} ${valid}`.toLowerCase();

const groups = (doc: Json): [Json, Json][] => doc.testGroups.flatMap((g: Json) => g.tests.map((t: Json) => [g, t]));

function wycheproofEddsa(doc: Json): Suite {
  return {
    format: 'wycheproof eddsa_verify',
    cases: groups(doc).map(([g, t]) => verifyCase(`tcId ${t.tcId}`, g.publicKey.pk, fromHex(t.msg), t.sig, t.result === 'valid')),
  };
}

function wycheproofAead(doc: Json): Suite {
  const cipher: AeadCipher = doc.algorithm === 'XCHACHA20-POLY1305' ? 'xchacha20-poly1305' : 'chacha20-poly1305';
  return {
    format: `wycheproof aead_test ${doc.algorithm}`,
    cases: groups(doc).map(([, t]) => ({
      id: `tcId ${t.tcId}`,
      key: aeadKey(cipher, t.key, t.iv, t.aad, t.msg, t.ct + t.tag, t.result === 'valid'),
      run(c: Crypto) {
        const [key, iv, aad, msg] = [t.key, t.iv, t.aad, t.msg].map(fromHex) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
        const opened = attempt(() => c.aeadOpen(cipher, key, iv, fromHex(t.ct + t.tag), aad));
        if (t.result !== 'valid') return { ok: opened.startsWith('error:'), outcome: opened };
        const sealed = attempt(() => c.aeadSeal(cipher, key, iv, msg, aad));
        return { ok: opened === t.msg && sealed === t.ct + t.tag, outcome: `${opened}/${sealed}` };
      },
    })),
  };
}

function wycheproofXdh(doc: Json): Suite {
  return {
    format: 'wycheproof xdh_comp',
    cases: groups(doc).map(([, t]) => ({
      id: `tcId ${t.tcId}`,
      key: `x25519 ${t.private} ${t.public} ${t.shared} ${t.result}`.toLowerCase(),
      run(c: Crypto) {
        const out = attempt(() => c.x25519SharedSecret(fromHex(t.private), fromHex(t.public)));
        // Policy (crates/core/src/x25519.rs): an all-zero secret from a small-order key is refused;
        // Wycheproof marks exactly those `acceptable`. Everything else must match.
        const zero = /^0+$/.test(t.shared);
        const ok = out === t.shared || (out === 'error:X25519_LOW_ORDER' && zero && t.result === 'acceptable');
        return { ok, outcome: out };
      },
    })),
  };
}

function speccheck(items: { message: string; pub_key: string; signature: string }[]): Suite {
  // Policy: of the 12 "Taming the many EdDSAs" cases only case 3 verifies under strict rules.
  return {
    format: 'ed25519-speccheck',
    cases: items.map((v, i) => verifyCase(`case ${i}`, v.pub_key, fromHex(v.message), v.signature, i === 3)),
  };
}

function speccheckText(text: string): Suite | undefined {
  const lines = text.split('\n').filter((l) => l.length > 0);
  const n = Number(lines[0]);
  if (!Number.isInteger(n) || lines.length !== 1 + 3 * n) return undefined;
  const items = [];
  for (let i = 0; i < n; i++) {
    const [m, p, s] = lines.slice(1 + 3 * i, 4 + 3 * i);
    if (!m?.startsWith('msg=') || !p?.startsWith('pbk=') || !s?.startsWith('sig=')) return undefined;
    items.push({ message: m.slice(4), pub_key: p.slice(4), signature: s.slice(4) });
  }
  const suite = speccheck(items);
  return { ...suite, format: 'ed25519-speccheck (text)' };
}

function cctv(items: Json[]): Suite {
  const tolerated = new Set(['low_order_component_A', 'low_order_component_R']);
  return {
    format: 'cctv ed25519vectors',
    cases: items.map((v) =>
      verifyCase(
        `vector ${v.number}`,
        v.key,
        utf8(v.msg),
        v.sig,
        (v.flags ?? []).every((f: string) => tolerated.has(f)),
      ),
    ),
  };
}

function signatureCase(id: string, seed: string, pk: string, msg: string, sig: string): Case {
  return {
    id,
    key: `ed25519-sign ${seed} ${pk} ${msg} ${sig}`.toLowerCase(),
    run(c) {
      const derived = attempt(() => c.ed25519PublicKey(fromHex(seed)));
      const signed = attempt(() => c.ed25519Sign(fromHex(seed), fromHex(msg)));
      const verified = c.ed25519Verify(fromHex(pk), fromHex(msg), fromHex(sig));
      return { ok: derived === pk && signed === sig && verified, outcome: `${derived}/${signed}/${verified}` };
    },
  };
}

function signInput(text: string): Suite | undefined {
  const lines = text.split('\n').filter((l) => l.length > 0);
  const parsed = lines.map((l) => l.split(':'));
  if (parsed.length === 0 || !parsed.every((f) => f.length === 5 && f[0]!.length === 128 && /^[0-9a-f]*$/.test(f.join('')))) return undefined;
  return {
    format: 'ed25519 sign.input',
    cases: parsed.map((f, i) => signatureCase(`line ${i + 1}`, f[0]!.slice(0, 64), f[1]!, f[2]!, f[3]!.slice(0, 128))),
  };
}

function rfc8032(items: Json[]): Suite {
  return {
    format: 'rfc8032 ed25519',
    cases: items.map((v) => signatureCase(`test ${v.name}`, v.secretKey, v.publicKey, v.message, v.signature)),
  };
}

function rfc8439(doc: Json): Suite {
  return {
    format: 'rfc8439 aead',
    cases: doc.tests.map((t: Json) => ({
      id: t.id ?? t.section,
      key: aeadKey('chacha20-poly1305', t.key, t.nonce, t.aad, t.plaintext, t.ciphertext + t.tag, true),
      run(c: Crypto) {
        const [key, nonce, aad, pt] = [t.key, t.nonce, t.aad, t.plaintext].map(fromHex) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
        const sealed = attempt(() => c.aeadSeal('chacha20-poly1305', key, nonce, pt, aad));
        const opened = attempt(() => c.aeadOpen('chacha20-poly1305', key, nonce, fromHex(t.ciphertext + t.tag), aad));
        return { ok: sealed === t.ciphertext + t.tag && opened === t.plaintext, outcome: `${sealed}/${opened}` };
      },
    })),
  };
}

function es6Numbers(text: string): Suite | undefined {
  const lines = text.split('\n').filter((l) => l.length > 0);
  if (lines.length === 0 || !lines.every((l) => /^[0-9a-f]{1,16},\S+$/.test(l))) return undefined;
  const view = new DataView(new ArrayBuffer(8));
  return {
    format: 'es6 number serialisation',
    cases: lines.map((l) => {
      const [bits, want] = l.split(',') as [string, string];
      view.setBigUint64(0, BigInt(`0x${bits}`));
      // The shortest round-trip text of the double is the input, as any JSON producer would write it.
      const input = `[${view.getFloat64(0).toExponential()}]`;
      return {
        id: bits,
        key: `es6-number ${bits.padStart(16, '0')} ${want}`.toLowerCase(),
        run(c: Crypto) {
          const out = attempt(() => c.jcs(input));
          return { ok: out === toHex(utf8(`[${want}]`)), outcome: out };
        },
      };
    }),
  };
}

/** An RFC 8785 test folder: input/*.json → output/*.json, and invalid/* must each be refused. */
export function rfc8785Folder(dir: string): Suite {
  const cases: Case[] = [];
  for (const name of readdirSync(join(dir, 'input')).sort()) {
    const input = readFileSync(join(dir, 'input', name), 'utf8');
    const want = toHex(new Uint8Array(readFileSync(join(dir, 'output', name))));
    cases.push({
      id: name,
      key: `jcs ${toHex(utf8(input))} ${want}`,
      run(c) {
        const out = attempt(() => c.jcs(input));
        return { ok: out === want, outcome: out };
      },
    });
  }
  if (existsSync(join(dir, 'invalid'))) {
    for (const name of readdirSync(join(dir, 'invalid')).sort()) {
      const input = readFileSync(join(dir, 'invalid', name), 'utf8');
      cases.push({
        id: `invalid/${name}`,
        key: `jcs ${toHex(utf8(input))} refused`,
        run(c) {
          const out = attempt(() => c.jcs(input));
          return { ok: out.startsWith('error:'), outcome: out };
        },
      });
    }
  }
  return { format: 'rfc8785 testdata', cases };
}

export function isRfc8785Folder(dir: string): boolean {
  return statSync(dir).isDirectory() && existsSync(join(dir, 'input')) && existsSync(join(dir, 'output'));
}

const isArrayOf = (doc: Json, keys: string[]) =>
  Array.isArray(doc) && doc.length > 0 && doc.every((v) => v && typeof v === 'object' && keys.every((k) => k in v));

/** The suite in a file, or undefined if its content is not a format this command knows. */
export function recognise(path: string): Suite | undefined {
  const text = readFileSync(path, 'utf8');
  let doc: Json;
  try {
    doc = JSON.parse(text);
  } catch {
    return speccheckText(text) ?? signInput(text) ?? es6Numbers(text);
  }
  if (doc && typeof doc.schema === 'string' && Array.isArray(doc.testGroups)) {
    if (doc.schema.startsWith('eddsa_verify')) return wycheproofEddsa(doc);
    if (doc.schema.startsWith('aead_test') && /^X?CHACHA20-POLY1305$/.test(doc.algorithm)) return wycheproofAead(doc);
    if (doc.schema.startsWith('xdh_comp') && doc.testGroups.every((g: Json) => g.curve === 'curve25519')) return wycheproofXdh(doc);
    return undefined;
  }
  if (doc && doc.format === DECK_FORMAT && Array.isArray(doc.cases)) return deckSuite(doc);
  if (doc && doc.format === BOX_FORMAT && Array.isArray(doc.cases)) return boxSuite(doc);
  if (doc && doc.format === POW_FORMAT && Array.isArray(doc.cases)) return powSuite(doc);
  if (doc && doc.format === OT_FORMAT && Array.isArray(doc.cases) && Array.isArray(doc.rsa_sets)) return otSuite(doc);
  // These read the text again: their checks need Python's key order and exact big integers.
  if (doc && doc.format === RECEIPT_FORMAT && Array.isArray(doc.cases)) return receiptSuite(text);
  if (doc && doc.format === AUDIT_FORMAT && Array.isArray(doc.cases)) return auditSuite(text);
  if (doc && doc.format === RT_HASH_FORMAT && Array.isArray(doc.cases)) return rtHashSuite(text);
  if (doc && doc.format === GROUP_FORMAT && Array.isArray(doc.cases)) return groupSuite(text);
  // Wire texts inside these are strings: they are decoded strictly case by case, not by this parse.
  if (doc && rinKind(doc.format) && Array.isArray(doc.cases)) return rinSuite(text);
  if (isArrayOf(doc, ['message', 'pub_key', 'signature'])) return speccheck(doc);
  if (isArrayOf(doc, ['number', 'key', 'sig', 'msg'])) return cctv(doc);
  if (isArrayOf(doc, ['secretKey', 'publicKey', 'message', 'signature'])) return rfc8032(doc);
  if (doc && Array.isArray(doc.tests) && isArrayOf(doc.tests, ['key', 'nonce', 'aad', 'plaintext', 'ciphertext', 'tag'])) return rfc8439(doc);
  return undefined;
}
