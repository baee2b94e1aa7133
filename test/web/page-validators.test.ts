// The agent page's message validation, with the modules its bundle swaps in (scripts/build-web.mjs):
// the built-ins it plays validate with their precompiled validators; a spec that is not one of them
// has none and no compiler to make one, so the page leaves it out and names the CLI for it.
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { encodeInvitation, createInvitation } from '../../ts/net/invitation.js';
import { ValidatorUnavailable } from '../../ts/spec/errors.js';
import { MessageValidator } from '../../ts/spec/messages.js';
import { servedSpecs } from '../../ts/cli/web.js';
import { AgentError, openInvitation } from '../../ts/web/agent.js';
import { toHex } from '../../ts/crypto/encoding.js';
import { pageProtocols } from '../../ts/web/page-protocols.js';
import { PAGE_PROTOCOL_IDS, PAGE_VALIDATORS } from '../../ts/web/page-validators.js';

vi.mock('../../ts/spec/compile.js', () => import('../../ts/web/no-compile.js'));
vi.mock('../../ts/spec/precompiled-validators.js', () => import('../../ts/web/page-validators.js'));

const c = getCrypto('wasm');

describe("the page's validators", () => {
  it('validate every built-in the page plays, with no compiler', async () => {
    const served = servedSpecs();
    const protocols = await pageProtocols(c, served);
    expect(protocols.map((p) => p.alias)).toEqual(served.map((s) => s.alias));
    const rps = protocols.find((p) => p.alias === 'rps-v1')!;
    const v = new MessageValidator(rps.spec, { specText: rps.specText });
    expect(v.check({ action: 'join', best_of: 3 }, 'guest_to_host')).toMatchObject({ ok: true, message: 'join' });
    expect(v.check({ action: 'join', best_of: 0 }, 'guest_to_host')).toMatchObject({ ok: false, errors: [{ pointer: '/best_of', code: 'FIELD_RANGE' }] });
  });

  it('refuse a spec that is not one of them, typed; the page leaves it out and names the CLI', async () => {
    const served = servedSpecs();
    const text = readFileSync(new URL('../../ts/protocols/hero-duel/spec.json', import.meta.url), 'utf8');
    expect(() => new MessageValidator(JSON.parse(text), { specText: text })).toThrow(ValidatorUnavailable);
    const changed = served.map((s) => (s.folder === 'rps' ? { ...s, spec: s.spec.replace('"max": 9999', '"max": 9998') } : s));
    expect(changed.find((s) => s.folder === 'rps')!.spec).not.toBe(served.find((s) => s.folder === 'rps')!.spec);
    const protocols = await pageProtocols(c, changed);
    expect(protocols.map((p) => p.alias)).not.toContain('rps-v1');
    expect(protocols).toHaveLength(served.length - 1);

    const key = c.ed25519Keypair(new Uint8Array(32).fill(9));
    const inv = createInvitation(c, {
      host: key,
      protocolId: c.protocolId(text),
      ticket: { peer_id: '12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN', addrs: ['/ip4/127.0.0.1/tcp/1/ws'] },
    });
    let err: unknown;
    try {
      openInvitation(c, encodeInvitation(c, inv), protocols);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).code).toBe('PROTOCOL_UNKNOWN');
    expect((err as AgentError).message).toMatch(/plays the built-in protocols only \(.*guess-number-v1.*\); use the CLI for protocol [0-9a-f]{16}…/);
  });

  it("record each built-in's exact spec text hash and its protocol_id as protocolId computes them", () => {
    expect(Object.keys(PAGE_VALIDATORS).length).toBeGreaterThan(0);
    for (const [folder, m] of Object.entries(PAGE_VALIDATORS)) {
      const text = readFileSync(new URL(`../../ts/protocols/${folder}/spec.json`, import.meta.url), 'utf8');
      expect(m.specSha256, folder).toBe(toHex(c.sha256(new TextEncoder().encode(text))));
      expect(m.protocolId, folder).toBe(c.protocolId(text));
      expect(PAGE_PROTOCOL_IDS.get(m.specSha256)).toBe(m.protocolId);
    }
    expect(PAGE_PROTOCOL_IDS.size).toBe(Object.keys(PAGE_VALIDATORS).length);
  });

  it('take the recorded protocol_id for a served built-in as built, with no protocol_id module', async () => {
    let loads = 0;
    const served = servedSpecs();
    const protocols = await pageProtocols(c, served, async () => void loads++);
    expect(loads).toBe(0);
    expect(protocols.map((p) => [p.alias, p.protocolId])).toEqual(served.map((s) => [s.alias, c.protocolId(s.spec)]));
  });

  it('compute the protocol_id of any other served text, loading the protocol_id module once', async () => {
    let loads = 0;
    const served = servedSpecs();
    // The same messages (so the same precompiled validators) with another rule: another
    // text, another protocol_id, though the folder and the alias say rps.
    const changed = served.map((s) =>
      s.folder === 'rps' || s.folder === 'qna' ? { ...s, spec: s.spec.replace('"rules": {', '"rules": { "note": "served changed",') } : s,
    );
    for (const f of ['rps', 'qna']) expect(changed.find((s) => s.folder === f)!.spec).not.toBe(served.find((s) => s.folder === f)!.spec);
    const protocols = await pageProtocols(c, changed, async () => void loads++);
    expect(loads).toBe(1);
    expect(protocols.map((p) => [p.alias, p.protocolId])).toEqual(changed.map((s) => [s.alias, c.protocolId(s.spec)]));
    const rps = protocols.find((p) => p.alias === 'rps-v1')!;
    expect(rps.protocolId).not.toBe(PAGE_VALIDATORS['rps']!.protocolId);
    // Until the module is loaded no protocol_id is computed: a loader that fails fails the page.
    await expect(pageProtocols(c, changed, () => Promise.reject(new Error('no pyjson')))).rejects.toThrow('no pyjson');
  });
});
