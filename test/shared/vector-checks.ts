/**
 * The checks that test-vectors/*.json define, written once and run by vitest (Node, both backends)
 * and by the headless-Chromium run (browser, both backends). Each check throws on the first mismatch.
 */
import type { AeadCipher, Crypto } from '../../ts/crypto/backend.js';
import { CryptoError } from '../../ts/crypto/errors.js';
import { fromHex, toHex, utf8 } from '../../ts/crypto/encoding.js';

type Case = Record<string, any>;
export interface VectorFile {
  description: string;
  source: string;
  cases: Case[];
}

function eq(got: unknown, want: unknown, what: string): void {
  if (got !== want) throw new Error(`${what}: got ${String(got).slice(0, 80)}, want ${String(want).slice(0, 80)}`);
}

export function errorCode(f: () => unknown): string {
  try {
    f();
    return 'ok';
  } catch (e) {
    if (!(e instanceof CryptoError)) throw e;
    return e.code;
  }
}

const text = (b: Uint8Array) => new TextDecoder().decode(b);

export const checks: Record<string, (c: Crypto, cases: Case[]) => void> = {
  'ed25519.json'(c, cases) {
    for (const v of cases) {
      const [pk, msg, sig] = [fromHex(v.public_key), fromHex(v.message), fromHex(v.signature)];
      if (v.valid) {
        if (v.seed) {
          eq(toHex(c.ed25519PublicKey(fromHex(v.seed))), v.public_key, `${v.name} public key`);
          eq(toHex(c.ed25519Sign(fromHex(v.seed), msg)), v.signature, `${v.name} signature`);
        }
        eq(c.ed25519Verify(pk, msg, sig), true, v.name);
        eq(
          errorCode(() => c.ed25519Check(pk, msg, sig)),
          'ok',
          v.name,
        );
      } else if (v.name === 'short-seed-sign') {
        eq(
          errorCode(() => c.ed25519Sign(fromHex(v.seed), msg)),
          v.error,
          v.name,
        );
      } else {
        eq(c.ed25519Verify(pk, msg, sig), false, v.name);
        eq(
          errorCode(() => c.ed25519Check(pk, msg, sig)),
          v.error,
          v.name,
        );
      }
    }
    // The batch against the vectors' own verdicts (not against ed25519Verify, which the js backend's
    // batch is built from), in a shuffled order with each case three times, so that a batch that
    // mixes up its items' offsets cannot pass. short-seed-sign is about signing: its triple is valid.
    const verdicts = cases.filter((v) => v.name !== 'short-seed-sign');
    const order = [...verdicts, ...verdicts, ...verdicts]
      .map((v, i) => ({ v, k: (i * 7919) % 97 }))
      .sort((a, b) => a.k - b.k)
      .map(({ v }) => v);
    const items = order.map((v) => ({ publicKey: fromHex(v.public_key), message: fromHex(v.message), signature: fromHex(v.signature) }));
    const many = c.ed25519VerifyMany(items);
    eq(many.length, items.length, 'verifyMany length');
    order.forEach((v, i) => eq(many[i], v.valid, `verifyMany item ${i} (${v.name})`));
  },

  'sha256.json'(c, cases) {
    for (const v of cases) {
      const msg = v.message !== undefined ? fromHex(v.message) : new Uint8Array(v.message_repeat.count).fill(parseInt(v.message_repeat.byte, 16));
      eq(toHex(c.sha256(msg)), v.sha256, v.name);
      eq(`sha256:${toHex(c.sha256(msg))}`, v.prefixed, v.name);
    }
  },

  'aead.json'(c, cases) {
    for (const v of cases) {
      const cipher = v.cipher as AeadCipher;
      const [key, nonce, aad, pt, sealed] = [v.key, v.nonce, v.aad, v.plaintext, v.sealed].map(fromHex) as Uint8Array[];
      if (v.valid) {
        eq(toHex(c.aeadSeal(cipher, key!, nonce!, pt!, aad)), v.sealed, `${v.name} seal`);
        eq(toHex(c.aeadOpen(cipher, key!, nonce!, sealed!, aad)), v.plaintext, `${v.name} open`);
      } else {
        eq(
          errorCode(() => c.aeadOpen(cipher, key!, nonce!, sealed!, aad)),
          v.error,
          v.name,
        );
        if (v.error === 'BAD_LENGTH')
          eq(
            errorCode(() => c.aeadSeal(cipher, key!, nonce!, pt!, aad)),
            v.error,
            `${v.name} seal`,
          );
      }
    }
  },

  'x25519.json'(c, cases) {
    for (const v of cases) {
      const sk = fromHex(v.private_key);
      if (v.public_of_private) eq(toHex(c.x25519PublicKey(sk)), v.public_of_private, v.name);
      else if (v.valid) eq(toHex(c.x25519SharedSecret(sk, fromHex(v.public_key))), v.shared, v.name);
      else
        eq(
          errorCode(() => c.x25519SharedSecret(sk, fromHex(v.public_key))),
          v.error,
          v.name,
        );
    }
  },

  'box.json'(c, cases) {
    for (const v of cases) {
      const seed = fromHex(v.ed25519_seed);
      const boxed = fromHex(v.box);
      if (!v.valid) {
        eq(
          errorCode(() => c.boxOpen(seed, boxed)),
          v.error,
          v.name,
        );
        continue;
      }
      eq(toHex(c.ed25519PublicToX25519(fromHex(v.ed25519_public))), v.x25519_public, `${v.name} public conversion`);
      eq(toHex(c.ed25519SeedToX25519(seed)), v.x25519_private, `${v.name} private conversion`);
      eq(toHex(c.boxSealWith(fromHex(v.ed25519_public), fromHex(v.plaintext), fromHex(v.ephemeral_private), fromHex(v.nonce))), v.box, `${v.name} seal`);
      eq(toHex(c.boxOpen(seed, boxed)), v.plaintext, `${v.name} open`);
    }
  },

  'pow.json'(c, cases) {
    for (const v of cases) {
      eq(c.powSolve(v.nonce, v.public_key, v.difficulty), v.counter, v.name);
      eq(c.powCheck(v.nonce, v.public_key, v.counter, v.difficulty), true, `${v.name} check`);
      if (v.counter > 0 && v.difficulty > 0) eq(c.powCheck(v.nonce, v.public_key, v.counter - 1, v.difficulty), false, `${v.name} counter - 1`);
    }
  },

  'commit.json'(c, cases) {
    for (const v of cases) {
      eq(c.commit(v.choice, v.nonce), v.commit, v.choice);
      eq(c.verifyReveal(v.commit, v.choice, v.nonce), true, `${v.choice} reveal`);
      eq(c.verifyReveal(v.commit, `${v.choice}x`, v.nonce), false, `${v.choice} other choice`);
      eq(c.verifyReveal(v.commit, v.choice, `${v.nonce}x`), false, `${v.choice} other nonce`);
      eq(c.verifyReveal(v.commit.slice(0, 63), v.choice, v.nonce), false, `${v.choice} short commitment`);
    }
  },

  'jcs.json'(c, cases) {
    for (const v of cases) {
      if (v.output !== undefined) {
        eq(text(c.jcs(v.input)), v.output, v.name);
        eq(toHex(c.jcsSha256(v.input)), toHex(c.sha256(utf8(v.output))), `${v.name} sha256`);
        if (!v.name.startsWith('depth')) eq(text(c.jcsValue(JSON.parse(v.input))), v.output, `${v.name} from value`);
      } else {
        eq(
          errorCode(() => c.jcs(v.input)),
          v.error,
          v.name,
        );
      }
    }
  },
};
