/**
 * rin.host/v2 and rin.control/v2 for TypeScript: the wire model (this folder's top level), HostKit, the
 * built-in world, the host agent and the control API client. Everything here runs in browsers too; the
 * control daemon, which needs a database and a socket, is the Node-only entry `aigenora/rin/control`.
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
export * from './hostkit/adapter.js';
export * from './hostkit/authority.js';
export { AdapterCoordinator, MAX_ADAPTER_OPERATIONS, MAX_ADAPTER_CAPABILITIES } from './hostkit/coordinator.js';
export * from './hostkit/conformance.js';
export { validateActionDelivery } from './hostkit/delivery.js';
export { startHostAgent, type HostAgent, type HostAgentOptions, type HostAgentStats } from './host-agent.js';
export { HarborWorld, type Boat, type Berth, type HarborOptions } from './world/harbor.js';
export { harborConformanceScenario, harborRequest, type HarborRequestOptions } from './world/conformance.js';
export {
  CAPABILITY as HARBOR_CAPABILITY,
  EFFECT_KINDS as HARBOR_EFFECT_KINDS,
  EFFECT_SCOPES as HARBOR_EFFECT_SCOPES,
  harborCapabilities,
  harborObservationSchema,
} from './world/catalog.js';
export {
  checkControlToken,
  CONTROL_DEFAULT_BASE_URL,
  CONTROL_MAX_RESPONSE_BYTES,
  CONTROL_TIMEOUT_MS,
  normalizeControlBaseUrl,
  RinControlClient,
  RinControlError,
  type ControlAnswer,
  type Plain,
  type RinControlClientOptions,
} from './client.js';
