export * from './errors.js';
export * from './json.js';
export * from './ruleset.js';
export * from './wire.js';
export * from './host.js';
export * from './guest.js';
export * from './transcript.js';
export * from './flow.js';
