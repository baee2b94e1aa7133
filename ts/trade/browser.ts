/** agent-trade/0.2 for browsers and bundlers: everything in index.ts except reading a catalog directory. */
export * from './envelope.js';
export * from './verify.js';
export * from './state.js';
export * from './ids.js';
export * from './manifest.js';
export { schemaError, SCHEMAS } from './schema.js';
