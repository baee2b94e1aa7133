#!/usr/bin/env node
// The `aigenora` command. Installed from the package it runs the compiled CLI in dist/ on plain Node.
// In a source checkout (ts/ beside this folder) it runs the TypeScript sources through tsx instead, so
// that what a developer runs is never a stale build; the package tests run the packed dist/.
import { existsSync } from 'node:fs';

const source = new URL('../ts/cli/main.ts', import.meta.url);
let cli;
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import(source.href);
} else {
  cli = await import('../dist/cli/main.js');
}
cli.installProcessGuards();
process.exitCode = await cli.main(process.argv.slice(2));
