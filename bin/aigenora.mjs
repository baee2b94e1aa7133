#!/usr/bin/env node
// Runs the TypeScript CLI directly through tsx's loader (no build step in development).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../ts/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
