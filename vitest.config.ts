import { homedir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// vitest keeps each file's last duration in its cache and starts the slowest files first, so that no long
// file begins last on two workers. Kept beside the build cache (scripts/build-wasm.sh) rather than in
// node_modules, a fresh clone (CI's) starts with the durations of the last run on this machine.
const buildCache = process.env['AIGENORA_BUILD_CACHE'] ?? join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'aigenora');

export default defineConfig({
  ...(buildCache !== 'none' && { cacheDir: join(buildCache, 'vite') }),
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/shared/pglite-template.ts', 'test/shared/chromium-server.ts'],
    // Two cores: forks keep tests isolated without oversubscribing the machine.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    // Removing a temporary project with its node_modules can take seconds on a loaded machine.
    hookTimeout: 120_000,
  },
});
