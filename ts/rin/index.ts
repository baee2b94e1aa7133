/**
 * rin.host/v2 and rin.control/v2 for TypeScript: the wire model (this folder's top level), HostKit,
 * the control plane and its client. Each part adds its exports here.
 */
export * from './types.js';
export * from './errors.js';
export * from './wire.js';
export * from './validate.js';
export * from './schema.js';
export * from './effects.js';
export * from './digest.js';
export * from './run.js';
export * from './observation.js';
export * from './registry.js';
export { copyBoundAction, copyEffect, copyRequest, copySpec } from './copy.js';
