/**
 * rin.host/v2 and rin.control/v2 for TypeScript: the wire model (this folder's top level), HostKit,
 * the control plane and its client. Each part adds its exports here.
 */
export * from './types.js';
export * from './errors.js';
