/**
 * The rin.control/v2 daemon (Node only: it owns a database and a socket). The model, HostKit, the host
 * agent and the client are `aigenora/rin`.
 */
export { createRinControl, serveRinControl, type RinControl, type RinControlOptions, type ServedRinControl } from './service.js';
export { parsePolicyConfig } from './policy.js';
export { isLoopbackHost } from '../loopback.js';
