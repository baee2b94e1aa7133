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
import { pageProtocols } from '../../ts/web/page-protocols.js';

vi.mock('../../ts/spec/compile.js', () => import('../../ts/web/no-compile.js'));
vi.mock('../../ts/spec/precompiled/index.js', () => import('../../ts/web/page-validators.js'));

const c = getCrypto('wasm');

describe("the page's validators", () => {
  it('validate every built-in the page plays, with no compiler', () => {
    const served = servedSpecs();
    const protocols = pageProtocols(c, served);
    expect(protocols.map((p) => p.alias)).toEqual(served.map((s) => s.alias));
    const rps = protocols.find((p) => p.alias === 'rps-v1')!;
    const v = new MessageValidator(rps.spec, { specText: rps.specText });
    expect(v.check({ action: 'join', best_of: 3 }, 'guest_to_host')).toMatchObject({ ok: true, message: 'join' });
    expect(v.check({ action: 'join', best_of: 0 }, 'guest_to_host')).toMatchObject({ ok: false, errors: [{ pointer: '/best_of', code: 'FIELD_RANGE' }] });
  });

  it('refuse a spec that is not one of them, typed; the page leaves it out and names the CLI', () => {
    const served = servedSpecs();
    const text = readFileSync(new URL('../../ts/protocols/hero-duel/spec.json', import.meta.url), 'utf8');
    expect(() => new MessageValidator(JSON.parse(text), { specText: text })).toThrow(ValidatorUnavailable);
    const changed = served.map((s) => (s.folder === 'rps' ? { ...s, spec: s.spec.replace('"max": 9999', '"max": 9998') } : s));
    expect(changed.find((s) => s.folder === 'rps')!.spec).not.toBe(served.find((s) => s.folder === 'rps')!.spec);
    const protocols = pageProtocols(c, changed);
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
});
