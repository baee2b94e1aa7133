// The workload of the network benches (net, web): rock-paper-scissors over 99 fixed rounds on the wasm
// backend, served by `aigenora host --daemon` and joined by this process or a page.
import { getCrypto } from '../ts/crypto/index.js';
import type { HooksModule } from '../ts/hooks/types.js';
import { builtinDir, BUILTINS } from '../ts/protocols/index.js';
import { loadSpec } from '../ts/spec/index.js';

export const OPTIONS = { best_of: 99, termination: 'fixed_rounds' };
export const BIN = new URL('../bin/aigenora.mjs', import.meta.url).pathname;
export const crypto = getCrypto('wasm');
export const rpsSpec = loadSpec(crypto, builtinDir(BUILTINS.find((b) => b.alias === 'rps-v1')!));
export const rpsHooks = (await import('../ts/protocols/rps/hooks.js')).default as HooksModule;

/** The arguments of `aigenora host --daemon` serving the workload from `dataDir`, its invitation written to `invFile`. */
export const hostDaemonArgs = (dataDir: string, invFile: string): string[] => [
  'host',
  '--daemon',
  '--protocol',
  'rps-v1',
  '--options',
  JSON.stringify(OPTIONS),
  '--data-dir',
  dataDir,
  '--invitation-file',
  invFile,
  '--invitation-ttl-minutes',
  '60',
  '--json',
];
