/** agent-trade/0.2: signed envelopes, verification, schemas, the trade state machine, manifests. */
export * from './browser.js';
export { manifestOfDirectory } from './manifest-dir.js';
