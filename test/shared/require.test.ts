// The skip helper every gated test goes through: present is true and silent; absent fails, naming what
// is missing, unless AIGENORA_SKIP_CORPORA=1, when it says SKIPPED once and answers false.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { need, needCommand, needShared, REPO, SHARED, sharedPath, SKIP_SWITCH } from './require.js';

const MISSING = 'conformance/no-such-corpus-for-require-test/x.json';

describe('need', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });
  const warnings = () => vi.spyOn(console, 'warn').mockImplementation(() => undefined);

  it('answers true and prints nothing when the thing is present, switch or not', () => {
    const warn = warnings();
    expect(need('a present thing', true, { env: {} })).toBe(true);
    expect(need('a present thing', () => true, { env: { [SKIP_SWITCH]: '1' } })).toBe(true);
    expect(warn).not.toHaveBeenCalled();
  });

  it('refuses to skip without the switch: throws naming what is missing and how to get it', () => {
    const warn = warnings();
    expect(() => need('the frobnicator corpus', false, { env: {}, how: 'run make frob' })).toThrow(
      /missing the frobnicator corpus; run make frob\..*AIGENORA_SKIP_CORPORA=1/,
    );
    // Anything but exactly 1 is not the switch.
    for (const v of ['0', 'true', 'yes', '', ' 1'])
      expect(() => need('the frobnicator corpus', () => false, { env: { [SKIP_SWITCH]: v } }), v).toThrow(/the frobnicator corpus/);
    expect(warn).not.toHaveBeenCalled();
  });

  it('skips loudly with the switch: false and one SKIPPED line naming it', () => {
    const warn = warnings();
    expect(need('the frobnicator corpus', false, { env: { [SKIP_SWITCH]: '1' } })).toBe(false);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0])).toMatch(/^SKIPPED: the frobnicator corpus is missing/);
  });

  it('reads process.env when no env is given', () => {
    const warn = warnings();
    vi.stubEnv(SKIP_SWITCH, '1');
    try {
      expect(need('the frobnicator corpus', false)).toBe(false);
      vi.stubEnv(SKIP_SWITCH, '');
      expect(() => need('the frobnicator corpus', false)).toThrow(/the frobnicator corpus/);
    } finally {
      vi.unstubAllEnvs();
    }
    expect(warn).toHaveBeenCalledTimes(1);
  });
});

describe('needShared and needCommand', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('computes ../shared from the repository, never from a machine path', () => {
    expect(REPO).toBe(resolve(new URL('../..', import.meta.url).pathname));
    expect(SHARED).toBe(resolve(REPO, '..', 'shared'));
    expect(sharedPath('conformance/README.md')).toBe(resolve(REPO, '../shared/conformance/README.md'));
  });

  it('answers for a present path silently, and refuses or skips an absent one by its ../shared name', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    expect(existsSync(sharedPath(MISSING))).toBe(false);
    expect(() => needShared(MISSING, 'the test corpus', { env: {} })).toThrow(`the test corpus: ../shared/${MISSING} (${sharedPath(MISSING)})`);
    expect(warn).not.toHaveBeenCalled();
    expect(needShared(MISSING, 'the test corpus', { env: { [SKIP_SWITCH]: '1' } })).toBe(false);
    expect(String(warn.mock.calls[0]![0])).toMatch(new RegExp(`^SKIPPED: the test corpus: \\.\\./shared/${MISSING}`));
    // The repository's own folder stands in for a present path, so this holds without ../shared too.
    expect(needShared('main-does-not-exist', undefined, { env: { [SKIP_SWITCH]: '1' } })).toBe(false);
    expect(need('the repo', existsSync(REPO), { env: {} })).toBe(true);
    expect(needCommand('sh', 'a shell', 'install one', { env: {} })).toBe(true);
    expect(() => needCommand('no-such-command-aigenora', 'nothing', 'apt-get install nothing', { env: {} })).toThrow(
      /`no-such-command-aigenora` command \(nothing\); apt-get install nothing/,
    );
  });
});
