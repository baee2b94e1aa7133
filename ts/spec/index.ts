/** Protocol contracts: spec.json types, validation, protocol_id, message validation, loading. */
export * from './browser.js';
export { loadSpec, specPath } from './load.js';
