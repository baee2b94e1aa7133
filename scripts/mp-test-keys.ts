/**
 * Writes test/mp/fixtures/ot-keys.json: the pinned RSA-2048 OT keys of the mental-poker cheat tests
 * (test/mp/cheats.ts, through test/mp/deal.ts), one for the Host's table and one for the Guest's.
 *
 * The keys come from the generator a live game uses (`platformKeyParts`: WebCrypto, i.e. OpenSSL in
 * Node), and each is imported into both backends before it is written (importKey checks p·q = n, the
 * CRT numbers and a trial x^(de) = x). They are TEST-ONLY keys: their private halves are published in
 * this repository, so they protect nothing. Live key generation stays tested on fresh keys
 * (test/crypto/mp-ot.test.ts, test/mp/mode.test.ts); the cheat tests only stop paying for it in each of
 * their games.
 *
 * Run: npx tsx scripts/mp-test-keys.ts
 * No test depends on the particular values: regenerating changes the bytes of the cheat games, not
 * their verdicts.
 */
import { writeFileSync } from 'node:fs';
import { getCrypto } from '../ts/crypto/index.js';
import { toHex } from '../ts/crypto/encoding.js';
import { platformKeyParts, type RsaKeyParts } from '../ts/crypto/ot.js';

const OUT = new URL('../test/mp/fixtures/ot-keys.json', import.meta.url);

async function main(): Promise<void> {
  const keys: Record<string, Record<string, string | number>> = {};
  for (const role of ['host', 'guest']) {
    const parts: RsaKeyParts = await platformKeyParts();
    for (const backend of ['wasm', 'js']) getCrypto(backend).ot.importKey(parts).dispose();
    keys[role] = {
      n: toHex(parts.n),
      e: parts.e,
      d: toHex(parts.d),
      p: toHex(parts.p),
      q: toHex(parts.q),
      dp: toHex(parts.dp),
      dq: toHex(parts.dq),
      qi: toHex(parts.qi),
    };
  }
  const file = {
    about: [
      'TEST-ONLY RSA-2048 keys (e = 65537) for the mental-poker cheat tests: the private halves are public, never use them for anything real.',
      `Made by scripts/mp-test-keys.ts on ${new Date().toISOString().slice(0, 10)} with WebCrypto (the generator of a live game), each checked by importKey on both backends.`,
      'Regenerate: npx tsx scripts/mp-test-keys.ts (no test depends on the particular values). Numbers are big-endian hex, under their JWK names.',
    ],
    keys,
  };
  writeFileSync(OUT, `${JSON.stringify(file, null, 2)}\n`);
  process.stdout.write(`wrote ${OUT.pathname}\n`);
}

await main();
