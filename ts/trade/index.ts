/** agent-trade/0.2: signed envelopes, verification, schemas, the trade state machine, manifests. */
export * from './envelope.js';
export * from './verify.js';
export * from './state.js';
export * from './ids.js';
export * from './manifest.js';
export { schemaError, SCHEMAS } from './schema.js';
