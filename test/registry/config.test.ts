// Which registry a command talks to: --server, then $AIGENORA_SERVER, $P2P_SERVER, then the config file
// named by $AIGENORA_CONFIG, then the data directory's config.json; never a default nobody named.
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rememberServer, resolveServer } from '../../ts/registry/config.js';
import { RegistryError } from '../../ts/registry/errors.js';
import { tempDir } from '../shared/tmp.js';

const code = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    if (e instanceof RegistryError) return e.code;
    throw e;
  }
  return 'no error';
};

describe('resolveServer', () => {
  it('takes the first of flag, environment, named config, data-dir config', () => {
    const dir = tempDir('cfg');
    const named = join(dir, 'named.json');
    writeFileSync(named, JSON.stringify({ server: 'http://named:1' }));
    rememberServer(dir, 'http://remembered:2/');
    const env = { AIGENORA_SERVER: 'http://a:3', P2P_SERVER: 'http://p:4', AIGENORA_CONFIG: named };
    expect(resolveServer('http://flag:5/', dir, env)).toEqual({ url: 'http://flag:5', from: '--server' });
    expect(resolveServer(undefined, dir, env)).toEqual({ url: 'http://a:3', from: 'AIGENORA_SERVER' });
    expect(resolveServer(undefined, dir, { ...env, AIGENORA_SERVER: '' }).url).toBe('http://p:4');
    expect(resolveServer(undefined, dir, { AIGENORA_CONFIG: named })).toEqual({ url: 'http://named:1', from: named });
    expect(resolveServer(undefined, dir, {})).toEqual({ url: 'http://remembered:2', from: join(dir, 'config.json') });
  });

  it('remembering keeps the other settings and the file private', () => {
    const dir = tempDir('cfg-keep');
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ other: 1, server: 'http://old' }));
    rememberServer(dir, 'https://new.example/base/');
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))).toEqual({ other: 1, server: 'https://new.example/base' });
    expect(statSync(join(dir, 'config.json')).mode & 0o777).toBe(0o600);
  });

  it('refuses a missing server, a broken config and a URL that is not http(s), with stable codes', () => {
    const dir = tempDir('cfg-bad');
    expect(code(() => resolveServer(undefined, dir, {}))).toBe('REGISTRY_NO_SERVER');
    writeFileSync(join(dir, 'config.json'), '{"server":');
    expect(code(() => resolveServer(undefined, dir, {}))).toBe('REGISTRY_CONFIG_INVALID');
    writeFileSync(join(dir, 'config.json'), '[]');
    expect(code(() => resolveServer(undefined, dir, {}))).toBe('REGISTRY_CONFIG_INVALID');
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ server: 'file:///etc/passwd' }));
    expect(code(() => resolveServer(undefined, dir, {}))).toBe('REGISTRY_BAD_URL');
    const asDir = tempDir('cfg-dir');
    mkdirSync(join(asDir, 'config.json'));
    expect(code(() => resolveServer(undefined, asDir, {}))).toBe('REGISTRY_CONFIG_INVALID');
  });
});
