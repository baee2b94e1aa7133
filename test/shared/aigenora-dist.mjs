// bin/aigenora.mjs for the compiled CLI: what the installed command runs (dist/cli/main.js on plain
// Node). test/shared/cli.ts starts this instead of bin/aigenora.mjs only while dist/ is newer than every
// source file, so a spawned test never runs stale code.
const cli = await import('../../dist/cli/main.js');
cli.installProcessGuards();
process.exitCode = await cli.main(process.argv.slice(2));
