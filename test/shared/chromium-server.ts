// vitest globalSetup: one headless Chromium for every suite of the run that drives a browser (the web
// pages, the packed package in a page, the vector checks): they connect to it (scripts/lib/chromium.ts)
// instead of each launching its own. A run named only files that use no browser starts none.
import { launchChromiumServer } from '../../scripts/lib/chromium.js';

const BROWSER_SUITES = /(^|\/)test\/?($|web|browser|package)|^(web|browser|package)(\/|$)/;

/** The files or folders named on the command line (vitest run [filters…]); none means every suite. */
function filters(): string[] {
  const i = process.argv.findIndex((a) => a === 'run' || a === 'watch');
  return (i < 0 ? [] : process.argv.slice(i + 1)).filter((a) => !a.startsWith('-'));
}

export default async function setup(): Promise<(() => Promise<void>) | void> {
  if (process.env['AIGENORA_CHROMIUM_WS']) return;
  const named = filters();
  if (named.length > 0 && !named.some((f) => BROWSER_SUITES.test(f))) return;
  const server = await launchChromiumServer();
  process.env['AIGENORA_CHROMIUM_WS'] = server.wsEndpoint();
  return async () => {
    delete process.env['AIGENORA_CHROMIUM_WS'];
    await server.close();
  };
}
