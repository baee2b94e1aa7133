// The authoritative_group leader and member replica: the reference's Community Room session
// reproduced envelope for envelope (read in place from ../shared/conformance; a missing corpus fails
// unless AIGENORA_SKIP_CORPORA=1 asks to skip it), and every refusal of A18.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import type { GroupHooks, HookContext } from '../../ts/hooks/types.js';
import communityRoom from '../../ts/protocols/community-room/hooks.js';
import { parseGroupJson } from '../../ts/group/json.js';
import { checkGroupSession } from '../../ts/group/session-check.js';

const CORPUS = new URL('../../../shared/conformance/aigenora-reference/aigenora-group-vectors.json', import.meta.url);
const skip = !existsSync(CORPUS) && process.env['AIGENORA_SKIP_CORPORA'] === '1';
if (skip) console.warn(`SKIPPED: ${CORPUS.pathname} is absent (AIGENORA_SKIP_CORPORA=1)`);

function sessionCase(): Record<string, unknown> {
  if (!existsSync(CORPUS)) throw new Error(`${CORPUS.pathname} is absent, so nothing can be checked; put the corpora there or set AIGENORA_SKIP_CORPORA=1 to skip`);
  const all = parseGroupJson(readFileSync(CORPUS, 'utf8')) as { cases: Record<string, unknown>[] };
  const c = all.cases.find((x) => x['kind'] === 'session');
  if (!c) throw new Error('the corpus has no session case');
  return c;
}

export const ctxFor = (options: Readonly<Record<string, unknown>>): HookContext => ({ role: 'host', options, args: [], stateDir: '', decision: null, random: () => 0 });
const roomHooks = (options: Readonly<Record<string, unknown>>): GroupHooks => communityRoom.create(ctxFor(options));

describe.each(['wasm', 'js'])('%s backend', (name) => {
  const crypto = getCrypto(name);

  it.skipIf(skip)('reproduces the reference Community Room session: every envelope, receipt, replica verdict, probe and check', () => {
    const r = checkGroupSession(crypto, sessionCase(), roomHooks);
    expect(r.failures).toEqual([]);
    expect(r.checked).toBeGreaterThan(100);
  });

  it.skipIf(skip)('notices a recorded envelope altered by one character', () => {
    const c = structuredClone(sessionCase());
    const steps = c['steps'] as { step: string; envelopes: Record<string, Record<string, unknown>> }[];
    const send = steps.find((s) => s.step === 'send_2')!;
    const pk = Object.keys(send.envelopes)[0]!;
    send.envelopes[pk]!['signature'] = (send.envelopes[pk]!['signature'] as string).replace(/^./, (ch) => (ch === '0' ? '1' : '0'));
    const r = checkGroupSession(crypto, c, roomHooks);
    expect(r.failures.some((f) => f.startsWith('send_2: envelope for'))).toBe(true);
  });
});
