// Skeletons: generation per flow mode, the four detection rules, and loading refusals.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { getCrypto, toHex, utf8 } from '../../ts/crypto/index.js';
import {
  checkPristine,
  HOOK_NAMES,
  HooksError,
  instantiateHooks,
  LEGACY_BANNERS,
  loadHooks,
  NOT_IMPLEMENTED,
  sidecarFor,
  SIDECAR,
  skeletonBypassFromEnv,
  skeletonSource,
} from '../../ts/hooks/index.js';
import { FLOW_MODES, type FlowMode, type Spec } from '../../ts/spec/index.js';
import { tempDir } from '../shared/tmp.js';

const c = getCrypto();
const spec = (mode: FlowMode): Spec =>
  ({
    name: `t-${mode}`,
    flow: { mode },
    messages: [{ name: 'join', direction: 'guest_to_host', fields: { action: { type: 'enum', values: ['join'], required: true } } }],
  }) as Spec;

function protocolDir(mode: FlowMode, hooks?: string): string {
  const dir = tempDir('hooks');
  writeFileSync(join(dir, 'spec.json'), JSON.stringify(spec(mode)));
  if (hooks !== undefined) writeFileSync(join(dir, 'hooks.mts'), hooks);
  return dir;
}

const implemented = (mode: FlowMode, names = HOOK_NAMES[mode].required) =>
  `const hooks = { mode: '${mode}', create: () => ({ ${names.map((n) => `${n}() { return null; }`).join(', ')} }) };\nexport default hooks;\n`;

afterEach(() => {
  delete process.env['AIGENORA_ALLOW_SKELETON_HOOKS'];
});

describe('skeleton generation', () => {
  it.each(FLOW_MODES)('%s: sentinel, one throwing body per required hook, constraints listed', (mode) => {
    const s = skeletonSource(spec(mode));
    expect(s).toMatch(/^export const AIGENORA_SKELETON = true;$/m);
    for (const name of HOOK_NAMES[mode].required) expect(s).toContain(`${NOT_IMPLEMENTED}: ${name}`);
    expect(s).toContain(`mode: '${mode}'`);
    expect(s).toContain('message join (guest_to_host)');
  });

  it('the sidecar records both hashes, the generator, the protocol and the mode', () => {
    const s = sidecarFor(c, 'hooks text', utf8('{}'), 'ab'.repeat(32), spec('free'), new Date('2026-01-02T03:04:05Z'));
    expect(s).toEqual({
      skeleton_hash: toHex(c.sha256(utf8('hooks text'))),
      spec_hash: toHex(c.sha256(utf8('{}'))),
      generator_version: 'ts-v1',
      protocol_id: 'ab'.repeat(32),
      flow_mode: 'free',
      created_at: '2026-01-02T03:04:05Z',
    });
  });
});

describe('pristine detection', () => {
  const mode = 'session_loop';
  it('rule 1: sidecar hashes equal the current files', () => {
    const text = implemented(mode);
    const dir = protocolDir(mode, text);
    writeFileSync(join(dir, SIDECAR), JSON.stringify(sidecarFor(c, text, readFileSync(join(dir, 'spec.json')), 'x', spec(mode))));
    expect(checkPristine(c, dir, text, spec(mode)).reasons).toEqual(['unchanged since generated (sidecar hashes match)']);
    expect(checkPristine(c, dir, `${text}// edited\n`, spec(mode)).pristine).toBe(false);
  });
  it('rule 2: the sentinel line, in the TypeScript or the Python form', () => {
    const dir = protocolDir(mode);
    expect(checkPristine(c, dir, `export const AIGENORA_SKELETON = true;\n${implemented(mode)}`, spec(mode)).pristine).toBe(true);
    expect(checkPristine(c, dir, `AIGENORA_SKELETON = True\n`, spec(mode)).pristine).toBe(true);
    expect(checkPristine(c, dir, `// AIGENORA_SKELETON = true is what the generator writes\n${implemented(mode)}`, spec(mode)).pristine).toBe(false);
  });
  it('rule 3: any NOT_IMPLEMENTED marker, naming the hooks still to write', () => {
    const r = checkPristine(c, protocolDir(mode), `throw new Error('${NOT_IMPLEMENTED}: proto_host_handle')`, spec(mode));
    expect(r).toMatchObject({ pristine: true, pending: ['proto_host_handle'] });
  });
  it('rule 4: a legacy v005 banner', () => {
    for (const b of LEGACY_BANNERS) expect(checkPristine(c, protocolDir(mode), `// ${b}\n${implemented(mode)}`, spec(mode)).pristine).toBe(true);
  });
  it('an implemented module is not pristine', () => {
    expect(checkPristine(c, protocolDir(mode), implemented(mode), spec(mode))).toEqual({ pristine: false, reasons: [], pending: [] });
  });
});

describe('loading hooks', () => {
  const code = async (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (e: unknown) => (e instanceof HooksError ? e.code : String(e)),
    );

  it('refuses a pristine skeleton with the hooks still to write, unless bypassed', async () => {
    const s = spec('free');
    const dir = protocolDir('free', skeletonSource(s));
    const err = await loadHooks(c, dir, s).catch((e: HooksError) => e);
    expect(err).toBeInstanceOf(HooksError);
    expect((err as HooksError).pending).toEqual(HOOK_NAMES.free.required);
    expect(await code(loadHooks(c, dir, s, { allowSkeleton: true }))).toBe('ok');
    process.env['AIGENORA_ALLOW_SKELETON_HOOKS'] = 'TRUE';
    expect(skeletonBypassFromEnv()).toBe(true);
    expect(await code(loadHooks(c, dir, s))).toBe('ok');
  });

  it('reports a missing module, a wrong export, a mode mismatch and missing hooks', async () => {
    expect(await code(loadHooks(c, protocolDir('free'), spec('free')))).toBe('HOOKS_MISSING');
    expect(await code(loadHooks(c, protocolDir('free', 'export default 42;\n'), spec('free')))).toBe('HOOKS_INVALID');
    expect(await code(loadHooks(c, protocolDir('free', implemented('session_loop')), spec('free')))).toBe('HOOKS_MODE_MISMATCH');
    const partial = await loadHooks(c, protocolDir('free', implemented('free', ['proto_on_message'])), spec('free'));
    const ctx = { role: 'host' as const, options: {}, args: [], stateDir: '', decision: null, random: Math.random };
    expect(() => instantiateHooks(partial, ctx)).toThrow(/HOOKS_INCOMPLETE.*proto_on_send, proto_on_end/);
    const full = await loadHooks(c, protocolDir('free', implemented('free')), spec('free'));
    expect(Object.keys(instantiateHooks(full, ctx))).toEqual(HOOK_NAMES.free.required);
  });
});
