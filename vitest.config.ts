import { defineConfig } from 'vitest/config';

export default defineConfig({
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
